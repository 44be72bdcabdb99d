/*
 * test_db.h — which database a unit or API test opens. ctest runs each test that includes this
 * header twice (tests/CMakeLists.txt): as unit/NAME or api/NAME on SQLite files, and as
 * pg/unit/NAME or pg/api/NAME with MNEMO_TEST_PG_URL set to the base URL of the throwaway server
 * the pg fixture started (tests/pg/pgctl.sh). The tests name their databases by path either way.
 * pgr/api/NAME also sets MNEMO_TEST_PG_REPLICA_URL, the base URL of that server's hot standby:
 * each database URL then names it (replica=…), and the library reads through it.
 *
 *   test_tmpdir, test_rmdir      scratch directories (test_tmp.h)
 *   test_db_target(path)         `path` on SQLite; on PostgreSQL the URL of a database made for
 *                                this path by this process (created empty the first time the path
 *                                is seen, the same database after that, so reopening works)
 *   test_db_pg()                 1 when the run is against PostgreSQL
 *   test_db_sql(target, sql, out, cap)  runs one SQL text with psql on a PostgreSQL target; the
 *                                unaligned output goes to out (may be NULL); returns 0 on success
 *
 * Header-only on purpose: unit tests link the static library, API tests only the shared one, and
 * neither links libpq — databases are made with psql over the fixture's Unix socket.
 */
#ifndef MNEMO_TEST_DB_H
#define MNEMO_TEST_DB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tmp.h"

static inline int test_db_pg(void)
{
    const char *u = getenv("MNEMO_TEST_PG_URL");
    return u && *u;
}

/* The base URL in environment variable `var` with its database name replaced:
 * postgresql://USER@/NAME?QUERY. */
static inline void test_db_url(const char *var, const char *name, char *out, size_t cap)
{
    const char *base = getenv(var);
    const char *scheme = strstr(base, "://");
    const char *slash = scheme ? strchr(scheme + 3, '/') : NULL;
    const char *query = slash ? strchr(slash, '?') : NULL;
    if (!slash) {
        snprintf(out, cap, "%s", base);
        return;
    }
    snprintf(out, cap, "%.*s/%s%s", (int)(slash - base), base, name, query ? query : "");
}

static inline int test_db_sql(const char *target, const char *sql, char *out, size_t cap)
{
    char cmd[4096];
    if ((size_t)snprintf(cmd, sizeof cmd, "psql -X -q -tA -v ON_ERROR_STOP=1 '%s' -c \"%s\" 2>&1", target, sql) >=
        sizeof cmd)
        return -1;
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n'))
        buf[--n] = '\0';
    int st = pclose(p);
    if (out && cap) { /* truncated to cap (a copy, not snprintf: gcc -O2 refuses the latter) */
        size_t k = strlen(buf) < cap ? strlen(buf) : cap - 1;
        memcpy(out, buf, k);
        out[k] = '\0';
    }
    if (st != 0)
        fprintf(stderr, "test_db: psql failed (%s): %s\n", sql, buf);
    return st == 0 ? 0 : -1;
}

static inline const char *test_db_target(const char *path)
{
    enum { SLOTS = 32 };
    static struct {
        char path[256];
        char url[512];
    } made[SLOTS];
    static unsigned used;
    if (!test_db_pg())
        return path;
    for (unsigned i = 0; i < used && i < SLOTS; i++)
        if (strcmp(made[i].path, path) == 0)
            return made[i].url;
    if (used >= SLOTS) {
        fprintf(stderr, "test_db: more than %d databases in one test\n", SLOTS);
        abort();
    }
    /* One database per (process, path): unique on the server while the process lives; a stale
     * one left by an earlier process with the same pid is dropped first. */
    char name[64], sql[200];
    snprintf(name, sizeof name, "mnemo_t_%ld_%u", (long)getpid(), used);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", name);
    if (test_db_sql(getenv("MNEMO_TEST_PG_URL"), sql, NULL, 0) != 0)
        abort();
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
    if (test_db_sql(getenv("MNEMO_TEST_PG_URL"), sql, NULL, 0) != 0)
        abort();
    if (strlen(path) >= sizeof made[used].path) {
        fprintf(stderr, "test_db: path too long: %s\n", path);
        abort();
    }
    memcpy(made[used].path, path, strlen(path) + 1);
    test_db_url("MNEMO_TEST_PG_URL", name, made[used].url, sizeof made[used].url);
    if (getenv("MNEMO_TEST_PG_REPLICA_URL")) { /* pgr/: reads through the standby, same database */
        char replica[512], *at = made[used].url + strlen(made[used].url);
        size_t room = sizeof made[used].url - strlen(made[used].url);
        test_db_url("MNEMO_TEST_PG_REPLICA_URL", name, replica, sizeof replica);
        at += snprintf(at, room, "%sreplica=", strchr(made[used].url, '?') ? "&" : "?");
        for (const char *c = replica; *c && (size_t)(at - made[used].url) + 4 < sizeof made[used].url; c++)
            if (strchr("%&?=#", *c))
                at += snprintf(at, 4, "%%%02X", (unsigned char)*c);
            else
                *at++ = *c, *at = '\0';
    }
    return made[used++].url;
}

/* The PostgreSQL migrations' later steps undone, for tests that fake an older database
 * (src/store/postgres/schema.h): what 13 → 14, 14 → 15, 15 → 16 and
 * 16 → 17 changed. A test appends its own
 * "UPDATE mnemo_schema SET version = N". */
#define TEST_PG_UNDO_14                                                                                         \
    " ALTER TABLE summaries DROP COLUMN n, DROP CONSTRAINT summaries_pkey, ADD PRIMARY KEY (id);"                  \
    " CREATE INDEX summaries_by_session ON summaries(session_sid, id);"                                            \
    " ALTER TABLE events DROP COLUMN n, DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (id),"                        \
    " ALTER COLUMN session_sid DROP NOT NULL; CREATE INDEX events_by_session ON events(session_sid, id);"
#define TEST_PG_UNDO_15                                                                                         \
    " ALTER TABLE memory_vectors DROP CONSTRAINT memory_vectors_memory_id_vid_fkey, DROP COLUMN memory_id,"        \
    " ADD PRIMARY KEY (vid); DROP INDEX memory_vectors_by_vid;"                                                    \
    " ALTER TABLE memories DROP CONSTRAINT memories_pkey, ADD PRIMARY KEY (vid); DROP INDEX memories_by_vid;"      \
    " ALTER TABLE memory_vectors ADD FOREIGN KEY (vid) REFERENCES memories(vid) ON DELETE CASCADE;"               \
    " ALTER TABLE memory_vector_log DROP COLUMN memory_id;"
#define TEST_PG_UNDO_16                                                                                         \
    " ALTER TABLE embeddings DROP COLUMN session_sid, ADD PRIMARY KEY (message_id);"                               \
    " ALTER TABLE embed_queue DROP COLUMN session_sid, ADD PRIMARY KEY (message_id);"                              \
    " ALTER TABLE messages DROP CONSTRAINT messages_pkey, ADD PRIMARY KEY (id);"                                   \
    " ALTER TABLE embeddings ADD FOREIGN KEY (message_id) REFERENCES messages(id) ON DELETE CASCADE;"              \
    " ALTER TABLE embed_queue ADD FOREIGN KEY (message_id) REFERENCES messages(id) ON DELETE CASCADE;"             \
    " CREATE OR REPLACE FUNCTION mn_embed_queue() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN"                      \
    " IF NEW.content IS NOT NULL THEN INSERT INTO embed_queue (message_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;" \
    " END IF; RETURN NULL; END';" /* quoted, not $$: the text goes through a shell */
/* First of them all in a text: the steps before 17 drop what it makes again. */
#define TEST_PG_UNDO_17                                                                                         \
    " DROP TRIGGER sessions_claim ON sessions; DROP FUNCTION mn_session_claim();"                                 \
    " DROP TABLE session_ids; DROP TABLE session_keys;"                                                           \
    " DROP INDEX sessions_by_id; ALTER TABLE sessions ADD UNIQUE (id); DROP INDEX sessions_by_key;"                \
    " CREATE UNIQUE INDEX sessions_by_key ON sessions(namespace, key) WHERE key IS NOT NULL;"                     \
    " CREATE OR REPLACE FUNCTION mn_sessions_gone() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT" \
    " AS 'BEGIN DELETE FROM messages m USING gone g WHERE m.session_sid = g.sid; RETURN NULL; END';"

#endif
