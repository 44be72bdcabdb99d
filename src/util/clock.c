/*
 * clock.c — time sources. The override exists so tests of TTL and pruning need not sleep.
 */
#include "util/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/banned.h"

int64_t mn__clock_now_ms(void)
{
    const char *fixed = getenv("MNEMO_TEST_NOW_MS");
    if (fixed && *fixed)
        return strtoll(fixed, NULL, 10);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mn__clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void mn__clock_iso(int64_t ms, char *out, size_t cap)
{
    time_t secs = (time_t)(ms / 1000);
    int frac = (int)(ms % 1000);
    if (frac < 0) {
        frac += 1000;
        secs -= 1;
    }
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

void mn__clock_sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
