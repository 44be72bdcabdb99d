/*
 * err.h — the per-thread error message behind mn_errmsg(), and the log callback.
 * Every failing internal function sets the message once, where the failure is first seen, and
 * returns the status; callers above pass the status up without rewriting the message.
 */
#ifndef MN_UTIL_ERR_H
#define MN_UTIL_ERR_H

#include "mnemo.h"

/* Sets the calling thread's message (printf format) and returns `status`. The arguments may
 * include mn_errmsg(), to wrap the current message in more context. */
mn_status mn__err(mn_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The usual out-of-memory failure. */
mn_status mn__nomem(void);
/* Clears the message (start of every public call). */
void mn__err_clear(void);
/* Sends a message to the installed log callback, if any, at `level`. */
void mn__log(mn_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports corruption once, with the source line where it was detected, and returns MN_CORRUPT. */
#define MN_CORRUPT_AT(...) mn__corrupt_at(__FILE__, __LINE__, __VA_ARGS__)
mn_status mn__corrupt_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
