/*
 * jobs.c — the extraction job operations (memory_extract_queue, memory_extract_job;
 * docs/memory.md, "REST and MCP"): mn_memory_extract queued on the library's background
 * worker and asked about later, over include/mnemo.h. The job object is made in one place
 * (job_json); Mem0's event route (mem0.c) answers the same jobs in Mem0's shape.
 */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

static const char *const state_names[] = {
    [MN_EXTRACT_PENDING] = "pending",
    [MN_EXTRACT_RUNNING] = "running",
    [MN_EXTRACT_DONE] = "done",
    [MN_EXTRACT_FAILED] = "failed",
};

/* {id, session_id, namespace, data, state, error, upto_seq, queued_at, finished_at}; NULL on OOM. */
static json_t *job_json(const mn_extract_job *job)
{
    json_t *data = json_loads(job->data, 0, NULL); /* the library keeps an object */
    if (!json_is_object(data)) {
        json_decref(data);
        data = json_object();
    }
    json_t *finished = job->finished_at ? json_integer(job->finished_at) : json_null();
    return json_pack("{s:s,s:s,s:s,s:o,s:s,s:s?,s:I,s:I,s:o}", "id", job->id, "session_id", job->session_id,
                     "namespace", job->ns, "data", data, "state", state_names[job->state], "error", job->error,
                     "upto_seq", (json_int_t)job->upto_seq, "queued_at", (json_int_t)job->queued_at, "finished_at",
                     finished);
}

/* Reads job id in namespace ns and answers it; the errors name job_id, as the caller sent it. */
static mn_status answer_job(struct srv_call *c, const char *ns, const char *id)
{
    mn_extract_job *job = NULL;
    mn_status st = mn_memory_extract_job(c->db, ns, id, &job);
    if (st == MN_INVALID)
        return srv_fail(c, st, "job_id: %s", mn_errmsg());
    if (st)
        return srv_fail_lib(c, st);
    c->result = job_json(job);
    mn_extract_job_free(job);
    return c->result ? MN_OK : srv_fail(c, MN_NOMEM, "out of memory");
}

mn_status srv_op_memory_extract_queue(struct srv_call *c)
{
    /* session_id is a UUID by now (srv_call_op resolved a key); another namespace's session is
     * not found, as every session operation answers */
    const char *sid = json_string_value(json_object_get(c->params, "session_id"));
    mn_status st;
    if (c->ns) {
        mn_session *s = NULL;
        if ((st = mn_session_get_in(c->db, c->ns, sid, &s)))
            return srv_fail_lib(c, st);
        mn_session_free(s);
    }
    json_t *d = json_object_get(c->params, "data");
    char *data = d ? json_dumps(d, JSON_COMPACT) : NULL, *job = NULL;
    if (d && !data)
        return srv_fail(c, MN_NOMEM, "out of memory");
    st = mn_memory_extract_queue(c->db, sid, data, &job);
    free(data);
    if (!st)
        st = answer_job(c, c->ns, job);
    else
        srv_fail_lib(c, st);
    mn_free(job);
    return st;
}

mn_status srv_op_memory_extract_job(struct srv_call *c)
{
    return answer_job(c, c->ns, json_string_value(json_object_get(c->params, "job_id")));
}
