/*
 * clock.h — wall-clock milliseconds, replaceable for tests (expiry, pruning), and ISO-8601 text.
 */
#ifndef MN_UTIL_CLOCK_H
#define MN_UTIL_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds since the Unix epoch; MNEMO_TEST_NOW_MS, when set, fixes it (tests only). */
int64_t mn__clock_now_ms(void);
/* Monotonic nanoseconds, for durations. */
int64_t mn__clock_mono_ns(void);
/* "2026-11-22T01:02:03.456Z" into out (at least 32 bytes). */
void mn__clock_iso(int64_t ms, char *out, size_t cap);
/* Sleeps for `ms` milliseconds. */
void mn__clock_sleep_ms(int64_t ms);

#endif
