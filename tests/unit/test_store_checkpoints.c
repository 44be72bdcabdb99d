/*
 * test_store_checkpoints.c — the graph checkpoint store (store/store_checkpoint.h) on each
 * backend: SQLite (unit/test_store_checkpoints) and PostgreSQL (pg/unit/test_store_checkpoints).
 * A put replaces the row of its (session, checkpoint_ns, id) and keeps its pending writes; a scan
 * filters by namespace, session, checkpoint_ns, id and before (byte order), newest id first, then
 * session id and checkpoint_ns, gives the session's key as the thread and stops when asked;
 * pending writes come by task path, task id and idx, a conflict replaced or kept as asked, inside
 * begin/commit or alone; remove counts what it deleted; between begin and commit every
 * operation runs in that transaction; a scan's callback may read pending writes; deleting a
 * session takes its rows; a missing session is MN_NOTFOUND, a missing checkpoint is not (its
 * writes may come first).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_checkpoint.h"
#include "test_db.h"

static char dir[256], file[400];
static mn_store *st;

/* Sessions: S1 (key thread-1) and S2 (no key) in namespace a, S3 in b; S1 < S2 as bytes. */
#define S1 "0190f0f0-0000-7000-8000-00000000c001"
#define S2 "0190f0f0-0000-7000-8000-00000000c002"
#define S3 "0190f0f0-0000-7000-8000-00000000c003"
#define S_NONE "0190f0f0-0000-7000-8000-00000000c0ff"

static void session(const char *id, const char *ns, const char *key)
{
    mn_session s;
    memset(&s, 0, sizeof s);
    s.id = id;
    s.ns = ns;
    s.key = key;
    s.metadata = "{}";
    s.created_at = s.updated_at = 1000;
    assert_int_equal(st->ops->session_insert(st, &s), MN_OK);
}

static mn_status put(const char *sid, const char *cns, const char *id, const char *parent, const char *data)
{
    mn_checkpoint cp = {.session_id = sid, .checkpoint_ns = cns, .id = id, .parent_id = parent, .type = "json",
                        .data = data, .metadata = "{\"step\":1}", .created_at = 5000};
    return st->ops->checkpoint->put(st, &cp);
}

static int setup(void **state)
{
    (void)state;
    if (test_tmpdir(dir, sizeof dir, "store-checkpoints") != 0)
        return -1;
    snprintf(file, sizeof file, "%s/cp.db", dir);
    mn_store_opts o = {.busy_timeout_ms = 2000, .sync_full = 0};
    if (mn__store_open(test_db_target(file), &o, &st) != MN_OK) {
        fprintf(stderr, "open: %s\n", mn_errmsg());
        return -1;
    }
    session(S1, "a", "thread-1");
    session(S2, "a", NULL);
    session(S3, "b", NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    st->ops->close(st);
    return test_rmdir(dir);
}

/* ---- what a scan hands over ------------------------------------------------------------------ */

struct seen {
    char line[16][200]; /* "session-suffix checkpoint_ns id", or more with full */
    size_t n, stop_after;
    int full;
};

static int collect(void *user, const mn_checkpoint *cp)
{
    struct seen *s = user;
    assert_true(s->n < 16);
    assert_int_equal(cp->n_writes, 0);
    if (s->full)
        snprintf(s->line[s->n], sizeof s->line[0], "%s|%s|%s|%s|%s|%s|%s|%s|%lld", cp->thread ? cp->thread : "-",
                 cp->session_id, cp->checkpoint_ns, cp->id, cp->parent_id ? cp->parent_id : "-", cp->type, cp->data,
                 cp->metadata, (long long)cp->created_at);
    else /* the session by its last two digits */
        snprintf(s->line[s->n], sizeof s->line[0], "%s %s %s", cp->session_id + strlen(cp->session_id) - 2,
                 cp->checkpoint_ns, cp->id);
    s->n++;
    return s->stop_after && s->n == s->stop_after;
}

/* The scan of q as one string, rows joined by ", ". */
static const char *scan(const char *ns, const char *sid, const char *cns, const char *id, const char *before,
                        size_t stop_after)
{
    static char out[2000];
    struct seen s = {.stop_after = stop_after};
    mn_store_checkpoint_scan q = {ns, sid, cns, id, before};
    assert_int_equal(st->ops->checkpoint->scan(st, &q, collect, &s), MN_OK);
    out[0] = '\0';
    for (size_t i = 0; i < s.n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? ", " : "", s.line[i]);
    return out;
}

/* Rows of a table, read beside the store. */
static int64_t rows(const char *table)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    if (test_db_pg()) {
        char out[64];
        assert_int_equal(test_db_sql(test_db_target(file), sql, out, sizeof out), 0);
        return strtoll(out, NULL, 10);
    }
    sqlite3 *c = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open_v2(file, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(c);
    return n;
}

/* ---- pending writes -------------------------------------------------------------------------- */

static mn_checkpoint_write wr(const char *task, const char *path, int64_t idx, const char *channel, const char *value)
{
    mn_checkpoint_write w = {task, path, idx, channel, "json", value};
    return w;
}

/* Stores ws as one batch (begin, write_put each, commit): the status of the first that failed. */
static mn_status put_writes(const char *sid, const char *cns, const char *cid, const mn_checkpoint_write *ws,
                            size_t n, int replace)
{
    assert_int_equal(st->ops->begin(st), MN_OK);
    mn_status rc = MN_OK;
    for (size_t i = 0; i < n && !rc; i++)
        rc = st->ops->checkpoint->write_put(st, sid, cns, cid, &ws[i], replace);
    if (rc) {
        st->ops->rollback(st);
        return rc;
    }
    return st->ops->commit(st);
}

static int collect_write(void *user, const mn_checkpoint_write *w)
{
    char *out = user;
    snprintf(out + strlen(out), 2000 - strlen(out), "%s%s/%s/%lld=%s:%s", *out ? ", " : "", w->task_path, w->task_id,
             (long long)w->idx, w->channel, w->value ? w->value : "NULL");
    return strstr(out, "STOP") != NULL;
}

static const char *writes(const char *sid, const char *cns, const char *cid)
{
    static char out[2000];
    out[0] = '\0';
    assert_int_equal(st->ops->checkpoint->writes(st, sid, cns, cid, collect_write, out), MN_OK);
    return out;
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* A put of an existing (session, checkpoint_ns, id) replaces every field and keeps the
 * checkpoint's pending writes; the row comes back with the session's key as its thread. */
static void put_replaces(void **state)
{
    (void)state;
    assert_int_equal(put(S1, "", "r1", NULL, "first"), MN_OK);
    mn_checkpoint_write w = wr("t", NULL, 0, "c", "v");
    assert_int_equal(put_writes(S1, "", "r1", &w, 1, 0), MN_OK);
    mn_checkpoint cp = {.session_id = S1, .checkpoint_ns = "", .id = "r1", .parent_id = "r0", .type = "msgpack",
                        .data = "second", .metadata = "{\"step\":2}", .created_at = 6000};
    assert_int_equal(st->ops->checkpoint->put(st, &cp), MN_OK);
    struct seen s = {.full = 1};
    mn_store_checkpoint_scan q = {"a", S1, "", "r1", NULL};
    assert_int_equal(st->ops->checkpoint->scan(st, &q, collect, &s), MN_OK);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.line[0], "thread-1|" S1 "||r1|r0|msgpack|second|{\"step\":2}|6000");
    assert_string_equal(writes(S1, "", "r1"), "/t/0=c:v");
    int64_t n = -1;
    assert_int_equal(st->ops->checkpoint->remove(st, S1, &n), MN_OK);
    assert_int_equal(n, 1);
}

/* A put or a write for a session that is not there is MN_NOTFOUND and stores nothing; reads of
 * it find nothing. Writes may come before their checkpoint: a remove takes them too. */
static void missing_session(void **state)
{
    (void)state;
    mn_checkpoint_write w = wr("t", NULL, 0, "c", "v");
    assert_int_equal(put(S_NONE, "", "x", NULL, "d"), MN_NOTFOUND);
    assert_int_equal(put_writes(S_NONE, "", "x", &w, 1, 1), MN_NOTFOUND);
    assert_int_equal(put_writes(S_NONE, "", "x", &w, 1, 0), MN_NOTFOUND);
    assert_string_equal(scan("a", S_NONE, NULL, NULL, NULL, 0), "");
    assert_string_equal(writes(S_NONE, "", "x"), "");
    assert_int_equal(rows("checkpoints"), 0);
    assert_int_equal(rows("checkpoint_writes"), 0);
    int64_t n = -1;
    assert_int_equal(st->ops->checkpoint->remove(st, S_NONE, &n), MN_OK);
    assert_int_equal(n, 0);
    /* writes first, then their checkpoint; writes of another checkpoint_ns are another's */
    assert_int_equal(put_writes(S2, "", "w1", &w, 1, 0), MN_OK);
    assert_int_equal(put_writes(S2, "sub", "w9", &w, 1, 0), MN_OK);
    assert_string_equal(writes(S2, "", "w1"), "/t/0=c:v");
    assert_string_equal(scan("a", S2, NULL, NULL, NULL, 0), "");
    assert_int_equal(put(S2, "", "w1", NULL, "d"), MN_OK);
    assert_string_equal(scan("a", S2, NULL, NULL, NULL, 0), "02  w1");
    assert_string_equal(writes(S2, "sub", "w1"), "");
    assert_int_equal(st->ops->checkpoint->remove(st, S2, &n), MN_OK);
    assert_int_equal(n, 1);
    assert_int_equal(rows("checkpoint_writes"), 0); /* the early writes of w9 too */
}

/* Each filter alone and together, the order (id descending as bytes, then session id, then
 * checkpoint_ns), before, the namespace boundary, and a callback that stops the scan. */
static void scan_filters_and_order(void **state)
{
    (void)state;
    assert_int_equal(put(S1, "", "01", NULL, "d"), MN_OK);
    assert_int_equal(put(S1, "", "03", "01", "d"), MN_OK);
    assert_int_equal(put(S1, "sub", "02", NULL, "d"), MN_OK);
    assert_int_equal(put(S1, "sub", "03", "02", "d"), MN_OK);
    assert_int_equal(put(S2, "", "03", NULL, "d"), MN_OK);
    assert_int_equal(put(S2, "", "04", "03", "d"), MN_OK);
    assert_int_equal(put(S3, "", "05", NULL, "d"), MN_OK);
    assert_string_equal(scan("a", NULL, NULL, NULL, NULL, 0), "02  04, 01  03, 01 sub 03, 02  03, 01 sub 02, 01  01");
    assert_string_equal(scan("a", S1, NULL, NULL, NULL, 0), "01  03, 01 sub 03, 01 sub 02, 01  01");
    assert_string_equal(scan("a", NULL, "sub", NULL, NULL, 0), "01 sub 03, 01 sub 02");
    assert_string_equal(scan("a", NULL, "", NULL, NULL, 0), "02  04, 01  03, 02  03, 01  01");
    assert_string_equal(scan("a", NULL, NULL, "03", NULL, 0), "01  03, 01 sub 03, 02  03");
    assert_string_equal(scan("a", NULL, NULL, NULL, "03", 0), "01 sub 02, 01  01");
    assert_string_equal(scan("a", S1, "", NULL, "03", 0), "01  01");
    assert_string_equal(scan("a", S1, "sub", "03", NULL, 0), "01 sub 03");
    assert_string_equal(scan("a", S2, NULL, "01", NULL, 0), "");
    assert_string_equal(scan("b", NULL, NULL, NULL, NULL, 0), "03  05");
    assert_string_equal(scan("b", S1, NULL, NULL, NULL, 0), ""); /* S1 is a's */
    assert_string_equal(scan("c", NULL, NULL, NULL, NULL, 0), "");
    /* no namespace: every one */
    assert_string_equal(scan(NULL, NULL, "", NULL, "05", 0), "02  04, 01  03, 02  03, 01  01");
    assert_string_equal(scan(NULL, NULL, NULL, NULL, NULL, 2), "03  05, 02  04");
    assert_string_equal(scan(NULL, S1, "sub", NULL, NULL, 0), "01 sub 03, 01 sub 02");
    /* the newest of a thread, and a stop in the middle of the namespace */
    assert_string_equal(scan("a", S1, "", NULL, NULL, 1), "01  03");
    assert_string_equal(scan("a", NULL, NULL, NULL, NULL, 3), "02  04, 01  03, 01 sub 03");
    /* the thread: the session's key, none for a session without one */
    struct seen s = {.full = 1};
    mn_store_checkpoint_scan q = {"a", NULL, "", "03", NULL};
    assert_int_equal(st->ops->checkpoint->scan(st, &q, collect, &s), MN_OK);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.line[0], "thread-1|" S1 "||03|01|json|d|{\"step\":1}|5000");
    assert_string_equal(s.line[1], "-|" S2 "||03|-|json|d|{\"step\":1}|5000");
    /* bytes, not a locale: "B" (0x42) sorts below "a" (0x61) */
    assert_int_equal(put(S3, "", "a", NULL, "d"), MN_OK);
    assert_int_equal(put(S3, "", "B", NULL, "d"), MN_OK);
    assert_string_equal(scan("b", S3, NULL, NULL, NULL, 0), "03  a, 03  B, 03  05");
    assert_string_equal(scan("b", S3, NULL, NULL, "a", 0), "03  B, 03  05");
    int64_t n = -1;
    assert_int_equal(st->ops->checkpoint->remove(st, S1, &n), MN_OK);
    assert_int_equal(n, 4);
    assert_int_equal(st->ops->checkpoint->remove(st, S2, &n), MN_OK);
    assert_int_equal(n, 2);
    assert_int_equal(st->ops->checkpoint->remove(st, S3, &n), MN_OK);
    assert_int_equal(n, 3);
    assert_string_equal(scan("a", NULL, NULL, NULL, NULL, 0), "");
}

static int collect_all(void *user, const mn_checkpoint *cp)
{
    char *text = user;
    size_t used = strlen(text);
    snprintf(text + used, 4000 - used, "%s%s %s", used ? "," : "", cp->session_id + strlen(cp->session_id) - 2,
             cp->id);
    return 0;
}

/* More rows than a first read takes (PostgreSQL reads pages): every one, in order. */
static void scan_many(void **state)
{
    (void)state;
    char id[16], expect[4000] = "";
    for (int i = 0; i < 150; i++) {
        snprintf(id, sizeof id, "%03d", i);
        assert_int_equal(put(i % 2 ? S1 : S2, "", id, NULL, "d"), MN_OK);
    }
    for (int i = 149; i >= 0; i--)
        snprintf(expect + strlen(expect), sizeof expect - strlen(expect), "%s%s %03d", i < 149 ? "," : "",
                 i % 2 ? "01" : "02", i);
    static char all[4000];
    mn_store_checkpoint_scan q = {"a", NULL, "", NULL, NULL};
    assert_int_equal(st->ops->checkpoint->scan(st, &q, collect_all, all), MN_OK);
    assert_string_equal(all, expect);
    int64_t n = -1;
    assert_int_equal(st->ops->checkpoint->remove(st, S1, &n), MN_OK);
    assert_int_equal(n, 75);
    assert_int_equal(st->ops->checkpoint->remove(st, S2, &n), MN_OK);
    assert_int_equal(n, 75);
}

/* Writes come by task path, task id, idx whatever order they were stored in; a conflicting
 * (task id, idx) is kept with replace 0 and overwritten with 1; a batch rolled back stores
 * nothing; the callback can stop. */
static void writes_order_and_conflicts(void **state)
{
    (void)state;
    assert_int_equal(put(S1, "", "c1", NULL, "d"), MN_OK);
    assert_int_equal(put(S1, "", "c2", NULL, "d"), MN_OK);
    mn_checkpoint_write batch[] = {
        wr("tb", "p~1", 1, "ch", "b1"), wr("tb", "p~1", 0, "ch", "b0"), wr("ta", "p~1", 2, "ch", "a2"),
        wr("tz", NULL, 0, "ch", "z0"),  wr("ta", "p~0", -1, "err", "e"), wr("tn", "p~1", 0, "ch", NULL),
    };
    assert_int_equal(put_writes(S1, "", "c1", batch, sizeof batch / sizeof batch[0], 0), MN_OK);
    const char *all = "/tz/0=ch:z0, p~0/ta/-1=err:e, p~1/ta/2=ch:a2, p~1/tb/0=ch:b0, p~1/tb/1=ch:b1, p~1/tn/0=ch:NULL";
    assert_string_equal(writes(S1, "", "c1"), all);
    assert_string_equal(writes(S1, "", "c2"), ""); /* another checkpoint's */
    mn_checkpoint_write again[] = {wr("tb", "p~1", 0, "ch", "b0-new"), wr("tc", "p~1", 0, "ch", "c0")};
    assert_int_equal(put_writes(S1, "", "c1", again, 2, 0), MN_OK); /* keep: only tc is new */
    assert_string_equal(writes(S1, "", "c1"), "/tz/0=ch:z0, p~0/ta/-1=err:e, p~1/ta/2=ch:a2, p~1/tb/0=ch:b0, "
                                              "p~1/tb/1=ch:b1, p~1/tc/0=ch:c0, p~1/tn/0=ch:NULL");
    mn_checkpoint_write over = wr("ta", "p~0", -1, "interrupt", "i");
    assert_int_equal(put_writes(S1, "", "c1", &over, 1, 1), MN_OK); /* replace */
    assert_string_equal(writes(S1, "", "c1"), "/tz/0=ch:z0, p~0/ta/-1=interrupt:i, p~1/ta/2=ch:a2, p~1/tb/0=ch:b0, "
                                              "p~1/tb/1=ch:b1, p~1/tc/0=ch:c0, p~1/tn/0=ch:NULL");
    /* rolled back: neither the new row nor the overwrite */
    assert_int_equal(st->ops->begin(st), MN_OK);
    mn_checkpoint_write gone[] = {wr("td", "p~1", 0, "ch", "d0"), wr("tz", NULL, 0, "ch", "z-new")};
    assert_int_equal(st->ops->checkpoint->write_put(st, S1, "", "c1", &gone[0], 0), MN_OK);
    assert_int_equal(st->ops->checkpoint->write_put(st, S1, "", "c1", &gone[1], 1), MN_OK);
    st->ops->rollback(st);
    assert_int_equal(rows("checkpoint_writes"), 7);
    /* a callback that stops */
    mn_checkpoint_write stop = wr("ta", "p~0", 0, "STOP", "s");
    assert_int_equal(put_writes(S1, "", "c2", &stop, 1, 0), MN_OK);
    assert_int_equal(put_writes(S1, "", "c2", batch, 1, 0), MN_OK);
    assert_string_equal(writes(S1, "", "c2"), "p~0/ta/0=STOP:s");
    int64_t n = -1;
    assert_int_equal(st->ops->checkpoint->remove(st, S1, &n), MN_OK);
    assert_int_equal(n, 2);
    assert_int_equal(rows("checkpoint_writes"), 0);
}

struct nested {
    char writes[2000];
    size_t rows;
};

/* A scan's callback that reads the row's pending writes (as an export does). */
static int with_writes(void *user, const mn_checkpoint *cp)
{
    struct nested *n = user;
    n->rows++;
    assert_int_equal(st->ops->checkpoint->writes(st, cp->session_id, cp->checkpoint_ns, cp->id, collect_write,
                                                 n->writes),
                     MN_OK);
    return 0;
}

/* Between begin and commit every operation runs in that transaction (it sees what the
 * transaction wrote; a rollback takes it all back); outside, write_put is a transaction of its
 * own; and a scan's callback may read the pending writes of its rows. */
static void inside_begin(void **state)
{
    (void)state;
    mn_checkpoint_write w = wr("t", NULL, 0, "c", "v");
    for (int commit = 0; commit < 2; commit++) {
        assert_int_equal(st->ops->begin(st), MN_OK);
        assert_int_equal(put(S1, "", "b1", NULL, "d"), MN_OK);
        assert_int_equal(put(S1, "", "b0", NULL, "d"), MN_OK);
        assert_int_equal(st->ops->checkpoint->write_put(st, S1, "", "b1", &w, 0), MN_OK);
        assert_string_equal(scan("a", S1, NULL, NULL, NULL, 0), "01  b1, 01  b0");
        assert_string_equal(writes(S1, "", "b1"), "/t/0=c:v");
        int64_t n = -1;
        if (commit) {
            assert_int_equal(st->ops->commit(st), MN_OK);
            break;
        }
        assert_int_equal(put(S_NONE, "", "b1", NULL, "d"), MN_NOTFOUND); /* the transaction goes on */
        assert_int_equal(st->ops->checkpoint->remove(st, S1, &n), MN_OK);
        assert_int_equal(n, 2);
        assert_string_equal(scan("a", S1, NULL, NULL, NULL, 0), "");
        assert_int_equal(put(S1, "", "b2", NULL, "d"), MN_OK);
        st->ops->rollback(st);
        assert_string_equal(scan("a", S1, NULL, NULL, NULL, 0), "");
        assert_int_equal(rows("checkpoint_writes"), 0);
    }
    assert_string_equal(scan("a", S1, NULL, NULL, NULL, 0), "01  b1, 01  b0");
    mn_checkpoint_write alone = wr("u", "p", 1, "c", "own");
    assert_int_equal(st->ops->checkpoint->write_put(st, S1, "", "b1", &alone, 0), MN_OK);
    assert_int_equal(st->ops->checkpoint->write_put(st, S_NONE, "", "b1", &alone, 0), MN_NOTFOUND);
    struct nested n = {"", 0};
    mn_store_checkpoint_scan q = {"a", NULL, NULL, NULL, NULL};
    assert_int_equal(st->ops->checkpoint->scan(st, &q, with_writes, &n), MN_OK);
    assert_int_equal(n.rows, 2);
    assert_string_equal(n.writes, "/t/0=c:v, p/u/1=c:own");
    int64_t removed = -1;
    assert_int_equal(st->ops->checkpoint->remove(st, S1, &removed), MN_OK);
    assert_int_equal(removed, 2);
    assert_int_equal(rows("checkpoint_writes"), 0);
}

/* remove takes one session's checkpoints and writes and no other's; deleting a session takes
 * its own with it. */
static void remove_and_cascade(void **state)
{
    (void)state;
    mn_checkpoint_write w = wr("t", NULL, 0, "c", "v");
    const char *sids[] = {S1, S2, S3};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(put(sids[i], "", "k1", NULL, "d"), MN_OK);
        assert_int_equal(put(sids[i], "sub", "k2", "k1", "d"), MN_OK);
        assert_int_equal(put_writes(sids[i], "", "k1", &w, 1, 0), MN_OK);
        assert_int_equal(put_writes(sids[i], "sub", "k2", &w, 1, 0), MN_OK);
    }
    int64_t n = -1;
    assert_int_equal(st->ops->checkpoint->remove(st, S1, &n), MN_OK);
    assert_int_equal(n, 2);
    assert_int_equal(rows("checkpoints"), 4);
    assert_int_equal(rows("checkpoint_writes"), 4);
    assert_string_equal(scan("a", NULL, NULL, NULL, NULL, 0), "02 sub k2, 02  k1");
    assert_int_equal(st->ops->checkpoint->remove(st, S1, &n), MN_OK); /* nothing left */
    assert_int_equal(n, 0);
    assert_int_equal(st->ops->session_delete(st, S2), MN_OK);
    assert_int_equal(rows("checkpoints"), 2);
    assert_int_equal(rows("checkpoint_writes"), 2);
    assert_string_equal(scan("a", NULL, NULL, NULL, NULL, 0), "");
    assert_string_equal(scan("b", NULL, NULL, NULL, NULL, 0), "03 sub k2, 03  k1");
    assert_string_equal(writes(S3, "sub", "k2"), "/t/0=c:v");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_replaces),
        cmocka_unit_test(missing_session),
        cmocka_unit_test(scan_filters_and_order),
        cmocka_unit_test(scan_many),
        cmocka_unit_test(writes_order_and_conflicts),
        cmocka_unit_test(inside_begin),
        cmocka_unit_test(remove_and_cascade), /* last: it deletes S2 */
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
