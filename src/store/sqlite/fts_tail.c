/*
 * fts_tail.c — keyword search over the messages the keyword index does not hold yet.
 *
 * A database opened with its keyword index file missing or stale (copied without it, another
 * database's, a later state of this one: fts_file.c) has the index made again from its
 * messages, at about 66 µs a message (13 s for 200,000). No search waits for that: past
 * tuning.sync_max messages, fts_sync (search.c) leaves the work to the indexer thread, and a
 * search answers from the index as it stands plus this scan of the newest tuning.tail_rows
 * messages past its watermark; the older rest is not searched, and the report says how many
 * were not indexed and how many were scanned.
 *
 * The scan indexes those messages into a TEMP FTS5 table of the indexer connection, with the
 * index's own tokenizer, so a message matches here exactly when it would in the index (stems,
 * diacritics, phrases); its BM25 is computed over the table's rows (their statistics, not the
 * store's), and the two lists are merged by score. The table is kept between searches and
 * takes in new messages as they come (10 µs a message in memory against 66 on disk); it is
 * made again when it would need older rows, when msg_log moved (a delete, an edit or an import:
 * its copy of a text may be old), and at twice its size.
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "store/sqlite/fts_rank.h"
#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

static const char SQL_TAIL_TABLE[] = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kw_tail USING fts5(content, content = '', "
                                     MN_SQLITE_KW_TOKENIZE ")";
static const char SQL_TAIL_CLEAR[] = "INSERT INTO temp.kw_tail (kw_tail) VALUES ('delete-all')";
static const char SQL_TAIL_FILL[] = "INSERT INTO temp.kw_tail (rowid, content) SELECT id, content FROM messages"
                                    " WHERE id > ?1 AND id <= ?2 AND content IS NOT NULL";
static const char SQL_WATERMARK[] = MN_SQLITE_KW_WATERMARK;
/* These two read the index of message ids alone (a count over the table would read every page
 * of it); messages without text, which the index never holds, are counted among those waiting
 * until the watermark passes them. */
static const char SQL_UNINDEXED[] = "SELECT count(*) FROM messages WHERE id > ?1";
/* the message with the n-th largest id past the watermark (0-based): the scan takes those above */
static const char SQL_FLOOR[] = "SELECT id FROM messages WHERE id > ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2";
static const char SQL_LAST[] = "SELECT coalesce(max(id), 0) FROM messages";
static const char SQL_LOG_AT[] = "SELECT coalesce(max(seq), 0) FROM main.msg_log";

static mn_status one(struct sqlite_store *x, const char *sql, int64_t a, int64_t b, int64_t *out)
{
    return mn__sqlite_int(x, sql, "keyword index tail", out, NULL, ARGS(ARG_INT(a), ARG_INT(b)));
}

/* The table holds every message with an id in (floor, last], as the log at `log` left it. */
static mn_status tail_cover(struct sqlite_store *x, int64_t floor, int64_t last, int64_t log)
{
    struct mn_sqlite_tail *t = &x->tail;
    mn_status rc = MN_OK;
    if (!t->made) {
        int r = sqlite3_exec(x->db, SQL_TAIL_TABLE, NULL, NULL, NULL);
        if (r != SQLITE_OK)
            return mn__sqlite_fail(x, r, "keyword index tail");
        t->made = 1;
        t->lo = t->hi = -1; /* made again below */
    }
    int64_t max_rows = 2 * (int64_t)mn_sqlite_fts_tuning.tail_rows;
    if (t->lo < 0 || t->lo > floor || t->log != log || t->rows > max_rows || t->hi > last) {
        if ((rc = mn__sqlite_run(x, SQL_TAIL_CLEAR, "keyword index tail", 0, NULL)))
            return rc;
        *t = (struct mn_sqlite_tail){1, floor, floor, log, 0};
    }
    if (t->hi < last) {
        if ((rc = mn__sqlite_run(x, SQL_TAIL_FILL, "keyword index tail", ARGS(ARG_INT(t->hi), ARG_INT(last)))))
            return rc;
        t->rows += sqlite3_changes(x->db);
        t->hi = last;
    }
    return rc;
}

mn_status mn__sqlite_fts_tail(struct sqlite_store *x, const char *match, const mn_search_filter *f, size_t limit,
                              struct scored_list *out, struct mn_store_fts_report *rep)
{
    int64_t w = 0, unindexed = 0, floor, last = 0, log = 0;
    *rep = (struct mn_store_fts_report){0, 0};
    mn_status rc = one(x, SQL_WATERMARK, 0, 0, &w);
    if (!rc)
        rc = one(x, SQL_UNINDEXED, w, 0, &unindexed);
    if (rc || unindexed == 0)
        return rc;
    int64_t cap = (int64_t)mn_sqlite_fts_tuning.tail_rows;
    floor = w;
    if (unindexed > cap && (rc = one(x, SQL_FLOOR, w, cap, &floor)))
        return rc;
    if ((rc = one(x, SQL_LAST, 0, 0, &last)) || (rc = one(x, SQL_LOG_AT, 0, 0, &log)) ||
        (rc = tail_cover(x, floor, last, log)))
        return rc;
    rep->unindexed = unindexed;
    rep->scanned = unindexed < cap ? unindexed : cap;
    sqlite3_stmt *st = NULL;
    rc = mn__sqlite_prepare_filtered(x,
                                     "SELECT kw_tail.rowid, bm25(kw_tail) FROM temp.kw_tail"
                                     " JOIN messages m ON m.id = kw_tail.rowid"
                                     " JOIN sessions s ON s.sid = m.session_sid AND " MN_SQLITE_IN_SESSION("m.pos", "s.sid")
                                     " WHERE kw_tail MATCH ?1 AND kw_tail.rowid > ?3",
                                     f, " ORDER BY bm25(kw_tail), kw_tail.rowid LIMIT ?2", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
    sqlite3_bind_int64(st, 3, floor);
    int r;
    while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW)
        rc = mn__sqlite_scored_push(out, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1));
    if (!rc && r != SQLITE_DONE)
        rc = mn__sqlite_fail(x, r, "keyword index tail");
    sqlite3_finalize(st);
    return rc;
}
