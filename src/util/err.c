/*
 * err.c — per-thread error messages, status names (from the MN_STATUS_TABLE in mnemo.h) and
 * the process-wide log callback.
 */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/banned.h"

static _Thread_local char errbuf[1024];

static mn_log_fn log_fn;
static void *log_user;
static mn_log_level log_min = MN_LOG_INFO;

const char *mn_errmsg(void) { return errbuf; }

void mn__err_clear(void) { errbuf[0] = '\0'; }

mn_status mn__err(mn_status status, const char *fmt, ...)
{
    char msg[sizeof errbuf]; /* the arguments may include mn_errmsg() itself, to add context */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(errbuf, msg, sizeof errbuf);
    return status;
}

mn_status mn__nomem(void) { return mn__err(MN_NOMEM, "out of memory"); }

void mn_set_log(mn_log_fn fn, void *user, mn_log_level min_level)
{
    log_fn = fn;
    log_user = user;
    log_min = min_level;
}

void mn__log(mn_log_level level, const char *fmt, ...)
{
    if (!log_fn || level < log_min)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_fn(log_user, level, msg);
}

mn_status mn__corrupt_at(const char *file, int line, const char *fmt, ...)
{
    char msg[sizeof errbuf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(errbuf, msg, sizeof errbuf);
    mn__log(MN_LOG_ERROR, "corruption detected at %s:%d: %s", file, line, errbuf);
    return MN_CORRUPT;
}

const char *mn_status_name(mn_status status)
{
    switch (status) {
#define MN__STATUS_NAME(name, value, short_name, text)                                                               \
    case MN_##name:                                                                                                  \
        return short_name;
        MN_STATUS_TABLE(MN__STATUS_NAME)
#undef MN__STATUS_NAME
    }
    return "unknown";
}

const char *mn_status_str(mn_status status)
{
    switch (status) {
#define MN__STATUS_STR(name, value, short_name, text)                                                                \
    case MN_##name:                                                                                                  \
        return text;
        MN_STATUS_TABLE(MN__STATUS_STR)
#undef MN__STATUS_STR
    }
    return "unknown status";
}

void mn_free(void *p) { free(p); }
