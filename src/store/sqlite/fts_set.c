/*
 * fts_set.c — a keyword search in one session, counted from the session's own text.
 *
 * Why: a context's retrieval searches its session with the user's message, often 20 to 60 words,
 * each a phrase of the query. At a million messages most of those words are in a third of the
 * store, and reading their postings to keep a session's thousand rows took 0.1 to 3 s
 * (bench/README.md, "Retrieval in a session at 1M"). The session's messages, indexed into a TEMP
 * FTS5 table with the index's own tokenizer, give each row's count of each phrase and its size in
 * tokens as the index has them (the same text, the same tokenizer); ranked with the index's
 * document counts and average size (mn__sqlite_dense_rank), the scores are the same doubles.
 * That costs about 20 µs a message of the session (measured at 1M), whatever the store's size.
 *
 * The table is kept between searches: the next search of the same session adds only the messages
 * the index took in since. It is made again for another session, when the index's watermark went
 * back (a rebuild), and when a change below the watermark was applied (meta fts.deletes moved:
 * an edit, a delete or an import may have changed a text it holds). Which of its rows a search
 * may return is still the filter's set (mnemo_in): a clear or a role filter needs no new table.
 */
#include <sqlite3.h>

#include "store/sqlite/fts_rank.h"
#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

long mn_sqlite_fts_set_scanned;

static const char SQL_SET_TABLE[] = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kw_set USING fts5(content, content = '', "
                                    MN_SQLITE_KW_TOKENIZE ")";
static const char SQL_SET_CLEAR[] = "INSERT INTO temp.kw_set (kw_set) VALUES ('delete-all')";
static const char SQL_SET_SID[] = "SELECT sid FROM sessions WHERE id = ?1";
static const char SQL_SET_FILL[] = "INSERT INTO temp.kw_set (rowid, content) SELECT id, content FROM messages"
                                   " WHERE " MN_SQLITE_IN_SESSION("pos", "?1") " AND id > ?2 AND id <= ?3"
                                   " AND content IS NOT NULL";

mn_status mn__sqlite_set_sid(struct sqlite_store *s, const char *session_id, int64_t *sid)
{
    *sid = 0;
    return mn__sqlite_int(s, SQL_SET_SID, "keyword search in a session", sid, NULL, ARGS(ARG_TEXT(session_id)));
}

int64_t mn__sqlite_set_missing(const struct sqlite_store *s, int64_t sid, int64_t upto, int64_t gen, int64_t part)
{
    const struct mn_sqlite_kwset *t = &s->kwset;
    if (!t->made || t->sid != sid || t->gen != gen || t->hi > upto)
        return part;
    /* the messages the index took in since, this session's share of them at most */
    int64_t since = upto - t->hi;
    return since < part ? since : part;
}

mn_status mn__sqlite_set_cover(struct sqlite_store *s, int64_t sid, int64_t upto, int64_t gen)
{
    struct mn_sqlite_kwset *t = &s->kwset;
    mn_status rc = MN_OK;
    if (!t->made) {
        int r = sqlite3_exec(s->db, SQL_SET_TABLE, NULL, NULL, NULL);
        if (r != SQLITE_OK)
            return mn__sqlite_fail(s, r, "keyword search in a session");
        *t = (struct mn_sqlite_kwset){1, -1, 0, 0};
    }
    if (t->sid != sid || t->gen != gen || t->hi > upto) {
        if ((rc = mn__sqlite_run(s, SQL_SET_CLEAR, "keyword search in a session", 0, NULL)))
            return rc;
        *t = (struct mn_sqlite_kwset){1, sid, 0, gen};
    }
    if (t->hi < upto) {
        if ((rc = mn__sqlite_run(s, SQL_SET_FILL, "keyword search in a session",
                                 ARGS(ARG_INT(sid), ARG_INT(t->hi), ARG_INT(upto)))))
            return rc;
        t->hi = upto;
    }
    return MN_OK;
}
