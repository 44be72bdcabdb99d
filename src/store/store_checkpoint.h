/*
 * store_checkpoint.h — the graph checkpoint part of the store interface (store.h's
 * ops->checkpoint), implemented by sqlite/checkpoints.c and postgres/checkpoints.c: rows of two
 * tables, checkpoints and checkpoint_writes, both belonging to a session (deleting the session
 * deletes them). Policy — validation, which writes replace, the metadata filter, making the
 * session — is decided above (src/engine/checkpoint.c, docs/checkpoints.md).
 */
#ifndef MN_STORE_CHECKPOINT_H
#define MN_STORE_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "store/store.h"

/* Which checkpoints to read; NULL fields match anything. */
typedef struct mn_store_checkpoint_scan {
    const char *ns;            /* the sessions' namespace; NULL: any (export, migrate) */
    const char *session_id;    /* NULL: every session of ns */
    const char *checkpoint_ns;
    const char *id;
    const char *before;        /* only ids below it (byte order) */
} mn_store_checkpoint_scan;

/* One checkpoint row: cp and its strings live for the call only; cp->thread is the session's
 * key (NULL: none), cp->session_id its UUID, cp->writes empty. Return 0 to go on, 1 to stop. */
typedef int (*mn_store_checkpoint_fn)(void *user, const mn_checkpoint *cp);
/* One pending write, callback-scoped. Return 0 to go on, 1 to stop. */
typedef int (*mn_store_checkpoint_write_fn)(void *user, const mn_checkpoint_write *w);

struct mn_store_checkpoint_ops {
    /* Stores cp (session cp->session_id, which must exist: else MN_NOTFOUND), replacing the row
     * of the same (session, checkpoint_ns, id); cp->thread and cp->writes are not read. */
    mn_status (*put)(mn_store *st, const mn_checkpoint *cp);
    /* Stores one pending write of checkpoint (session_id, checkpoint_ns, checkpoint_id). When a
     * row of the same (task_id, idx) exists: replace 1 overwrites it, replace 0 keeps it.
     * Called inside begin/commit for a batch. */
    mn_status (*write_put)(mn_store *st, const char *session_id, const char *checkpoint_ns, const char *checkpoint_id,
                           const mn_checkpoint_write *w, int replace);
    /* The checkpoints q matches, id descending (then session, checkpoint_ns). */
    mn_status (*scan)(mn_store *st, const mn_store_checkpoint_scan *q, mn_store_checkpoint_fn fn, void *user);
    /* The pending writes of one checkpoint, by task_path, task_id, idx. */
    mn_status (*writes)(mn_store *st, const char *session_id, const char *checkpoint_ns, const char *checkpoint_id,
                        mn_store_checkpoint_write_fn fn, void *user);
    /* Deletes every checkpoint and pending write of the session; *removed gets the checkpoints. */
    mn_status (*remove)(mn_store *st, const char *session_id, int64_t *removed);
};

#endif
