/*
 * banned.h — functions that invite overflows or hidden global state: a use is a compile
 * error. Use mn_buf, snprintf, strtoll with checks, gmtime_r/localtime_r instead.
 * It must be the last include of each .c file (system headers declare these names);
 * tests/lint/banned.sh checks that every source file includes it.
 */
#ifndef MN_UTIL_BANNED_H
#define MN_UTIL_BANNED_H

#define MN__BANNED(func) sorry_##func##_is_banned_in_mnemo

#undef strcpy
#define strcpy(x, y) MN__BANNED(strcpy)
#undef strcat
#define strcat(x, y) MN__BANNED(strcat)
#undef sprintf
#define sprintf(...) MN__BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) MN__BANNED(vsprintf)
#undef strtok
#define strtok(x, y) MN__BANNED(strtok)
#undef atoi
#define atoi(x) MN__BANNED(atoi)
#undef atol
#define atol(x) MN__BANNED(atol)
#undef gmtime
#define gmtime(x) MN__BANNED(gmtime)
#undef localtime
#define localtime(x) MN__BANNED(localtime)

#endif
