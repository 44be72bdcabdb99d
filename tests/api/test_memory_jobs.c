/*
 * test_memory_jobs.c — extraction jobs through mnemo.h (mn_memory_extract_queue,
 * mn_memory_extract_job): a job runs on the background worker whatever memory.extract says and
 * ends DONE with the memories written; once final its answer stays; the caller's data comes back;
 * ids and namespaces are checked; a job outlives its handle (one whose run was dropped at close
 * is queued again when read); an unreachable llm extractor makes it FAILED, and a later run that
 * reads its turns DONE; deleting the session deletes the job. Runs on SQLite (api/memory_jobs)
 * and PostgreSQL (pg/api/memory_jobs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[256];

/* extract: memory.extract (NULL: the default, off) */
static mn_db *open_db(const char *name, const char *extract)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    if (extract)
        assert_int_equal(mn_config_set(cfg, "memory.extract", extract, NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static char *new_session(mn_db *db, const char *ns, const char *user)
{
    char meta[128];
    snprintf(meta, sizeof meta, "{\"memory_scope\":{\"user_id\":\"%s\"}}", user);
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.ns = ns;
    so.metadata = meta;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &so, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static int64_t say(mn_db *db, const char *sid, const char *text)
{
    mn_message_in in = MN_MESSAGE_IN_INIT;
    in.role = MN_ROLE_USER;
    in.content = text;
    mn_message *m = NULL;
    assert_int_equal(mn_append(db, sid, &in, 0, &m), MN_OK);
    int64_t seq = m->seq;
    mn_message_free(m);
    return seq;
}

/* The job once it is DONE or FAILED; the bound only keeps a hung worker from hanging the test. */
static mn_extract_job *settled(mn_db *db, const char *id)
{
    for (int i = 0; i < 6000; i++) {
        mn_extract_job *job = NULL;
        assert_int_equal(mn_memory_extract_job(db, NULL, id, &job), MN_OK);
        if (job->state == MN_EXTRACT_DONE || job->state == MN_EXTRACT_FAILED)
            return job;
        mn_extract_job_free(job);
        usleep(10000);
    }
    fail_msg("job %s never ended", id);
    return NULL;
}

static size_t live_memories(mn_db *db, const char *ns)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = ns;
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    size_t n = l->count;
    mn_memories_free(l);
    return n;
}

/* memory.extract off (the default): the job runs anyway, and its answer is final once DONE */
static void queued_job_runs(void **state)
{
    (void)state;
    mn_db *db = open_db("runs", NULL);
    char *sid = new_session(db, "acme", "ana");
    say(db, sid, "Hello.");
    int64_t seq = say(db, sid, "My city is Lima. I prefer green tea.");
    char *id = NULL;
    assert_int_equal(mn_memory_extract_queue(db, sid, "{\"from_seq\":1}", &id), MN_OK);
    mn_extract_job *job = settled(db, id);
    assert_int_equal(job->state, MN_EXTRACT_DONE);
    assert_string_equal(job->id, id);
    assert_string_equal(job->session_id, sid);
    assert_string_equal(job->ns, "acme");
    assert_string_equal(job->data, "{\"from_seq\":1}");
    assert_null(job->error);
    assert_int_equal(job->upto_seq, seq);
    assert_true(job->queued_at > 0 && job->finished_at >= job->queued_at);
    assert_int_equal(live_memories(db, "acme"), 2);
    /* final: the same answer, and nothing runs again */
    for (int i = 0; i < 20; i++) {
        mn_extract_job *again = NULL;
        assert_int_equal(mn_memory_extract_job(db, "acme", id, &again), MN_OK);
        assert_int_equal(again->state, MN_EXTRACT_DONE);
        assert_int_equal(again->finished_at, job->finished_at);
        mn_extract_job_free(again);
    }
    mn_extract_job_free(job);
    /* a second job of the same session: its own turns, data {} by default */
    say(db, sid, "My city is Cusco.");
    mn_free(id);
    assert_int_equal(mn_memory_extract_queue(db, sid, NULL, &id), MN_OK);
    job = settled(db, id);
    assert_int_equal(job->state, MN_EXTRACT_DONE);
    assert_string_equal(job->data, "{}");
    assert_int_equal(job->upto_seq, seq + 1);
    assert_int_equal(live_memories(db, "acme"), 2); /* the city updated, not added */
    mn_extract_job_free(job);
    mn_free(id);
    free(sid);
    mn_close(db);
}

static void refusals(void **state)
{
    (void)state;
    mn_db *db = open_db("refusals", NULL);
    char *sid = new_session(db, "acme", "ana");
    say(db, sid, "My city is Lima.");
    char *id = NULL;
    mn_extract_job *job = NULL;
    assert_int_equal(mn_memory_extract_queue(db, sid, "[1]", &id), MN_INVALID);
    assert_int_equal(mn_memory_extract_queue(db, sid, "{\"a\":", &id), MN_INVALID);
    char big[5000];
    memset(big, ' ', sizeof big - 1);
    big[0] = '{';
    big[sizeof big - 2] = '}';
    big[sizeof big - 1] = '\0';
    assert_int_equal(mn_memory_extract_queue(db, sid, big, &id), MN_TOOBIG);
    assert_int_equal(mn_memory_extract_queue(db, "0190a000-0000-7000-8000-000000000000", NULL, &id), MN_NOTFOUND);
    assert_null(id);
    assert_int_equal(mn_memory_extract_job(db, NULL, "not-a-job", &job), MN_INVALID);
    assert_int_equal(mn_memory_extract_job(db, NULL, "0190a000-0000-7000-8000-000000000000", &job), MN_NOTFOUND);
    assert_null(job);
    assert_int_equal(mn_memory_extract_queue(db, sid, NULL, &id), MN_OK);
    /* another namespace's job is missing, with the same message */
    assert_int_equal(mn_memory_extract_job(db, "other", id, &job), MN_NOTFOUND);
    assert_non_null(strstr(mn_errmsg(), "not found"));
    job = settled(db, id);
    mn_extract_job_free(job);
    /* the upper-case form of the id names the same job */
    for (char *p = id; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'f' ? *p - 32 : *p);
    assert_int_equal(mn_memory_extract_job(db, "acme", id, &job), MN_OK);
    mn_extract_job_free(job);
    /* deleting the session deletes its jobs */
    assert_int_equal(mn_session_delete(db, sid), MN_OK);
    assert_int_equal(mn_memory_extract_job(db, NULL, id, &job), MN_NOTFOUND);
    mn_free(id);
    free(sid);
    mn_close(db);
}

/* A job outlives its handle: one closed before its run is queued again when read. */
static void durable(void **state)
{
    (void)state;
    mn_db *db = open_db("durable", NULL);
    char *sid = new_session(db, "acme", "ana");
    say(db, sid, "My city is Lima.");
    char *id = NULL;
    assert_int_equal(mn_memory_extract_queue(db, sid, NULL, &id), MN_OK);
    mn_close(db); /* drops the queue, unless the run already began */
    db = open_db("durable", NULL);
    mn_extract_job *job = settled(db, id);
    assert_int_equal(job->state, MN_EXTRACT_DONE);
    assert_int_equal(live_memories(db, "acme"), 1);
    mn_extract_job_free(job);
    mn_free(id);
    free(sid);
    mn_close(db);
}

/* The llm extractor unreachable: FAILED, saying why, after a restart too; a later run that reads
 * the turns makes the job DONE. */
static void failed_then_done(void **state)
{
    (void)state;
    setenv("MNEMO_SUMMARIZER_BASE_URL", "http://127.0.0.1:9", 1);
    setenv("MNEMO_SUMMARIZER_MODEL", "none", 1);
    setenv("MNEMO_SUMMARIZER_RETRIES", "0", 1);
    mn_db *db = open_db("failed", "llm");
    char *sid = new_session(db, "acme", "ana");
    say(db, sid, "My city is Lima.");
    char *id = NULL;
    assert_int_equal(mn_memory_extract_queue(db, sid, NULL, &id), MN_OK);
    mn_extract_job *job = settled(db, id);
    assert_int_equal(job->state, MN_EXTRACT_FAILED);
    assert_non_null(job->error);
    assert_true(job->finished_at >= job->queued_at);
    int64_t at = job->finished_at;
    mn_extract_job_free(job);
    mn_close(db);
    db = open_db("failed", NULL);
    assert_int_equal(mn_memory_extract_job(db, NULL, id, &job), MN_OK);
    assert_int_equal(job->state, MN_EXTRACT_FAILED);
    assert_int_equal(job->finished_at, at);
    mn_extract_job_free(job);
    mn_extract_stats st;
    assert_int_equal(mn_memory_extract(db, sid, "offline", &st), MN_OK);
    assert_int_equal(mn_memory_extract_job(db, NULL, id, &job), MN_OK);
    assert_int_equal(job->state, MN_EXTRACT_DONE);
    assert_int_equal(job->finished_at, 0); /* not the job's own run */
    mn_extract_job_free(job);
    unsetenv("MNEMO_SUMMARIZER_BASE_URL");
    unsetenv("MNEMO_SUMMARIZER_MODEL");
    unsetenv("MNEMO_SUMMARIZER_RETRIES");
    mn_free(id);
    free(sid);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "memory-jobs");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queued_job_runs),
        cmocka_unit_test(refusals),
        cmocka_unit_test(durable),
        cmocka_unit_test(failed_then_done),
    };
    mn_extract_job_free(NULL);
    return cmocka_run_group_tests(tests, setup, teardown);
}
