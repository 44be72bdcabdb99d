/*
 * checkpoints.c — the graph checkpoint operations (checkpoint_put, checkpoint_put_writes,
 * checkpoint_get, checkpoint_list, checkpoint_delete_thread; docs/checkpoints.md): what
 * LangGraph's savers do, over include/mnemo.h. A thread is named as the framework names it;
 * the library resolves it in the call's namespace.
 */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

static const char *str(struct srv_call *c, const char *name)
{
    return json_string_value(json_object_get(c->params, name));
}

static mn_status done(struct srv_call *c, json_t *result)
{
    if (!result)
        return srv_fail(c, MN_NOMEM, "out of memory");
    c->result = result;
    return MN_OK;
}

/* JSON text stored by mnemo (metadata) as a value; NULL on OOM. */
static json_t *stored_json(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    return v ? v : json_object();
}

static json_t *write_json(const mn_checkpoint_write *w)
{
    return json_pack("{s:s,s:s,s:I,s:s,s:s,s:s}", "task_id", w->task_id, "task_path", w->task_path, "idx",
                     (json_int_t)w->idx, "channel", w->channel, "type", w->type, "value", w->value);
}

static json_t *checkpoint_json(const mn_checkpoint *cp)
{
    json_t *writes = json_array();
    for (size_t i = 0; writes && i < cp->n_writes; i++)
        if (json_array_append_new(writes, write_json(&cp->writes[i]))) {
            json_decref(writes);
            writes = NULL;
        }
    if (!writes)
        return NULL;
    return json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s,s:s,s:o,s:I,s:o}", "thread_id", cp->thread, "session_id",
                     cp->session_id, "checkpoint_ns", cp->checkpoint_ns, "checkpoint_id", cp->id,
                     "parent_checkpoint_id", cp->parent_id, "type", cp->type, "checkpoint", cp->data, "metadata",
                     stored_json(cp->metadata), "created_at", (json_int_t)cp->created_at, "pending_writes", writes);
}

mn_status srv_op_checkpoint_put(struct srv_call *c)
{
    mn_checkpoint_in in = MN_CHECKPOINT_IN_INIT;
    mn_status st = srv_call_ns(c, &in.ns);
    if (st)
        return st;
    char *metadata = NULL;
    json_t *m = json_object_get(c->params, "metadata");
    if (m && !(metadata = json_dumps(m, JSON_COMPACT)))
        return srv_fail(c, MN_NOMEM, "out of memory");
    in.thread = str(c, "thread_id");
    in.checkpoint_ns = str(c, "checkpoint_ns");
    in.id = str(c, "checkpoint_id");
    in.parent_id = str(c, "parent_checkpoint_id");
    in.type = str(c, "type");
    in.data = str(c, "checkpoint");
    in.metadata = metadata;
    st = mn_checkpoint_put(c->db, &in);
    free(metadata);
    if (st)
        return srv_fail_lib(c, st);
    return done(c, json_pack("{s:s,s:s,s:s}", "thread_id", in.thread, "checkpoint_ns",
                             in.checkpoint_ns ? in.checkpoint_ns : "", "checkpoint_id", in.id));
}

/* A write's members: the known ones, idx an integer (the library checks the strings). */
static mn_status check_write(struct srv_call *c, json_t *o, size_t i)
{
    static const char *const known[] = {"task_id", "task_path", "idx", "channel", "type", "value"};
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        size_t j = 0;
        while (j < sizeof known / sizeof *known && strcmp(k, known[j]) != 0)
            j++;
        if (j == sizeof known / sizeof *known)
            return srv_fail(c, MN_INVALID, "writes[%zu].%.64s: not a member of a write", i, k);
    }
    if (!json_is_integer(json_object_get(o, "idx")))
        return srv_fail(c, MN_INVALID, "writes[%zu].idx: required, an integer", i);
    return MN_OK;
}

mn_status srv_op_checkpoint_put_writes(struct srv_call *c)
{
    const char *ns;
    mn_status st = srv_call_ns(c, &ns);
    if (st)
        return st;
    json_t *arr = json_object_get(c->params, "writes");
    size_t n = json_array_size(arr); /* bounded by the declaration's maxItems */
    mn_checkpoint_write *w = calloc(n ? n : 1, sizeof *w);
    if (!w)
        return srv_fail(c, MN_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i);
        if ((st = check_write(c, o, i))) {
            free(w);
            return st;
        }
        w[i].task_id = json_string_value(json_object_get(o, "task_id"));
        w[i].task_path = json_string_value(json_object_get(o, "task_path"));
        w[i].idx = json_integer_value(json_object_get(o, "idx"));
        w[i].channel = json_string_value(json_object_get(o, "channel"));
        w[i].type = json_string_value(json_object_get(o, "type"));
        w[i].value = json_string_value(json_object_get(o, "value"));
    }
    st = mn_checkpoint_put_writes(c->db, ns, str(c, "thread_id"), str(c, "checkpoint_ns"), str(c, "checkpoint_id"),
                                  w, n);
    free(w);
    if (st)
        return srv_fail_lib(c, st);
    return done(c, json_pack("{s:I}", "stored", (json_int_t)n));
}

/* {checkpoints: [...]} or, one, {checkpoint: {...}}. */
static mn_status list_answer(struct srv_call *c, mn_checkpoints *l, const char *one)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < l->count; i++)
        if (json_array_append_new(arr, checkpoint_json(mn_checkpoints_at(l, i)))) {
            json_decref(arr);
            arr = NULL;
        }
    mn_checkpoints_free(l);
    if (!arr)
        return srv_fail(c, MN_NOMEM, "out of memory");
    if (!one)
        return done(c, json_pack("{s:o}", "checkpoints", arr));
    json_t *first = json_incref(json_array_get(arr, 0));
    json_decref(arr);
    return done(c, json_pack("{s:o}", one, first));
}

mn_status srv_op_checkpoint_get(struct srv_call *c)
{
    const char *ns;
    mn_status st = srv_call_ns(c, &ns);
    if (st)
        return st;
    mn_checkpoints *l = NULL;
    if ((st = mn_checkpoint_get(c->db, ns, str(c, "thread_id"), str(c, "checkpoint_ns"), str(c, "checkpoint_id"), &l)))
        return srv_fail_lib(c, st);
    return list_answer(c, l, "checkpoint");
}

mn_status srv_op_checkpoint_list(struct srv_call *c)
{
    mn_checkpoint_query q = MN_CHECKPOINT_QUERY_INIT;
    mn_status st = srv_call_ns(c, &q.ns);
    if (st)
        return st;
    char *filter = NULL;
    json_t *f = json_object_get(c->params, "filter");
    if (f && !(filter = json_dumps(f, JSON_COMPACT)))
        return srv_fail(c, MN_NOMEM, "out of memory");
    q.thread = str(c, "thread_id");
    q.checkpoint_ns = str(c, "checkpoint_ns");
    q.id = str(c, "checkpoint_id");
    q.before = str(c, "before");
    q.filter = filter;
    json_t *limit = json_object_get(c->params, "limit");
    q.limit = limit ? (size_t)json_integer_value(limit) : 0;
    mn_checkpoints *l = NULL;
    st = mn_checkpoint_list(c->db, &q, &l);
    free(filter);
    if (st)
        return srv_fail_lib(c, st);
    return list_answer(c, l, NULL);
}

mn_status srv_op_checkpoint_delete_thread(struct srv_call *c)
{
    const char *ns;
    mn_status st = srv_call_ns(c, &ns);
    if (st)
        return st;
    int64_t removed = 0;
    if ((st = mn_checkpoint_delete_thread(c->db, ns, str(c, "thread_id"), &removed)))
        return srv_fail_lib(c, st);
    return done(c, json_pack("{s:I}", "deleted", (json_int_t)removed));
}
