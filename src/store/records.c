/*
 * records.c — allocation of the public record types (see records.h). Lists grow their item
 * arrays with realloc; strings live in the list's arena.
 */
#include "store/records.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/banned.h"

struct mn_messages_impl *mn__records_message_list_new(void)
{
    struct mn_messages_impl *l = calloc(1, sizeof *l);
    if (l)
        l->pub.item_size = sizeof(mn_message);
    return l;
}

struct mn_sessions_impl *mn__records_session_list_new(void)
{
    struct mn_sessions_impl *l = calloc(1, sizeof *l);
    if (l)
        l->pub.item_size = sizeof(mn_session);
    return l;
}

/* The ABI-safe indexing of mnemo.h's lists: the stride is the list's item_size, so a caller
 * built against an older header, whose sizeof is smaller, still reaches item i. */
#define LIST_AT(list, i, type) \
    ((list) && (i) < (list)->count ? (const type *)(const void *)((const char *)(list)->items + (i) * (list)->item_size) : NULL)

const mn_message *mn_messages_at(const mn_messages *list, size_t i) { return LIST_AT(list, i, mn_message); }
const mn_session *mn_sessions_at(const mn_sessions *list, size_t i) { return LIST_AT(list, i, mn_session); }
const mn_search_hit *mn_search_hits_at(const mn_search_hits *list, size_t i) { return LIST_AT(list, i, mn_search_hit); }
const mn_memory *mn_memories_at(const mn_memories *list, size_t i) { return LIST_AT(list, i, mn_memory); }
const char *mn_strings_at(const mn_strings *list, size_t i) { return list && i < list->count ? list->items[i] : NULL; }

#define PUSH(l, type)                                                                                                \
    do {                                                                                                             \
        if ((l)->pub.count == (l)->cap) {                                                                            \
            size_t cap = (l)->cap ? (l)->cap * 2 : 16;                                                               \
            type *items = realloc((l)->pub.items, cap * sizeof(type));                                               \
            if (!items)                                                                                              \
                return NULL;                                                                                         \
            (l)->pub.items = items;                                                                                  \
            (l)->cap = cap;                                                                                          \
        }                                                                                                            \
        type *it = &(l)->pub.items[(l)->pub.count++];                                                                \
        memset(it, 0, sizeof *it);                                                                                   \
        return it;                                                                                                   \
    } while (0)

mn_message *mn__records_message_push(struct mn_messages_impl *l) { PUSH(l, mn_message); }

mn_session *mn__records_session_push(struct mn_sessions_impl *l) { PUSH(l, mn_session); }

static const char **strings_slot(struct mn_strings_impl *l) { PUSH(l, const char *); }

int mn__records_strings_push(struct mn_strings_impl *l, const char *s)
{
    const char **slot = strings_slot(l);
    int oom = !slot;
    if (slot)
        *slot = mn__arena_strdup(&l->arena, s, &oom);
    return oom;
}

int mn__records_message_fill(struct mn_arena *a, mn_message *dst, const mn_message *src)
{
    int oom = 0;
    *dst = *src;
    dst->session_id = mn__arena_strdup(a, src->session_id, &oom);
    dst->content = mn__arena_strdup(a, src->content, &oom);
    dst->tool_calls = mn__arena_strdup(a, src->tool_calls, &oom);
    dst->tool_call_id = mn__arena_strdup(a, src->tool_call_id, &oom);
    dst->name = mn__arena_strdup(a, src->name, &oom);
    dst->tool_name = mn__arena_strdup(a, src->tool_name, &oom);
    dst->model = mn__arena_strdup(a, src->model, &oom);
    dst->files = mn__arena_strdup(a, src->files, &oom);
    dst->metadata = mn__arena_strdup(a, src->metadata ? src->metadata : "{}", &oom);
    dst->idempotency_key = mn__arena_strdup(a, src->idempotency_key, &oom);
    return oom;
}

int mn__records_session_fill(struct mn_arena *a, mn_session *dst, const mn_session *src)
{
    int oom = 0;
    *dst = *src;
    dst->id = mn__arena_strdup(a, src->id, &oom);
    dst->ns = mn__arena_strdup(a, src->ns, &oom);
    dst->title = mn__arena_strdup(a, src->title, &oom);
    dst->system_prompt = mn__arena_strdup(a, src->system_prompt, &oom);
    dst->metadata = mn__arena_strdup(a, src->metadata ? src->metadata : "{}", &oom);
    dst->tool_name = mn__arena_strdup(a, src->tool_name, &oom);
    dst->parent_id = mn__arena_strdup(a, src->parent_id, &oom);
    dst->key = mn__arena_strdup(a, src->key, &oom);
    return oom;
}

/* A standalone record (a message, a session or a summary): the struct first (the public pointer
 * is the record's), then the arena holding its strings. */
struct one {
    union {
        mn_message message;
        mn_session session;
        mn_summary summary;
    } pub;
    struct mn_arena arena;
};

/* Frees a standalone record, or a list (items: its array) whose arena is at arena_at in it. */
static void impl_free(void *impl, size_t arena_at, void *items)
{
    if (!impl)
        return;
    mn__arena_release((struct mn_arena *)((char *)impl + arena_at));
    free(items);
    free(impl);
}

/* Frees what one_new made: NULL, for a fill that failed. */
static struct one *one_free(struct one *one)
{
    impl_free(one, offsetof(struct one, arena), NULL);
    return NULL;
}

static struct one *one_new(void) { return calloc(1, sizeof(struct one)); }

mn_message *mn__records_message_copy(const mn_message *m)
{
    struct one *one = one_new();
    if (one && mn__records_message_fill(&one->arena, &one->pub.message, m))
        one = one_free(one);
    return one ? &one->pub.message : NULL;
}

mn_message *mn__records_message_shell(void)
{
    struct one *one = one_new();
    return one ? &one->pub.message : NULL;
}

void mn__records_message_adopt(mn_message *shell, mn_messages *pub)
{
    struct one *one = (struct one *)shell;
    struct mn_messages_impl *l = (struct mn_messages_impl *)pub;
    one->pub.message = l->pub.items[0];
    one->arena = l->arena; /* the strings stay where they are: their chunks change owner */
    l->arena = (struct mn_arena)MN_ARENA_INIT;
    mn__records_message_list_free(pub);
}

mn_session *mn__records_session_copy(const mn_session *s)
{
    struct one *one = one_new();
    if (one && mn__records_session_fill(&one->arena, &one->pub.session, s))
        one = one_free(one);
    return one ? &one->pub.session : NULL;
}

void mn__records_message_free(mn_message *m) { one_free((struct one *)m); }

void mn__records_session_free(mn_session *s) { one_free((struct one *)s); }

void mn_summary_free(mn_summary *s) { one_free((struct one *)s); }

void mn__records_message_list_free(mn_messages *pub)
{
    impl_free(pub, offsetof(struct mn_messages_impl, arena), pub ? pub->items : NULL);
}

void mn__records_session_list_free(mn_sessions *pub)
{
    impl_free(pub, offsetof(struct mn_sessions_impl, arena), pub ? pub->items : NULL);
}

void mn_strings_free(mn_strings *list)
{
    impl_free(list, offsetof(struct mn_strings_impl, arena), list ? list->items : NULL);
}

int mn__records_collect_message(void *user, const mn_message *m)
{
    struct mn_records_collect *c = user;
    mn_message *it = mn__records_message_push(c->l);
    if (!it || mn__records_message_fill(&c->l->arena, it, m)) {
        c->rc = mn__nomem();
        return 1;
    }
    return 0;
}

void mn__records_message_list_reverse(mn_messages *l)
{
    for (size_t i = 0, j = l->count; i + 1 < j; i++, j--) {
        mn_message t = l->items[i];
        l->items[i] = l->items[j - 1];
        l->items[j - 1] = t;
    }
}

mn_summary *mn__records_summary_copy(const mn_summary *src)
{
    struct one *one = one_new();
    if (!one)
        return NULL;
    int oom = 0;
    mn_summary *m = &one->pub.summary;
    *m = *src;
    m->session_id = mn__arena_strdup(&one->arena, src->session_id, &oom);
    m->text = mn__arena_strdup(&one->arena, src->text ? src->text : "", &oom);
    m->model = mn__arena_strdup(&one->arena, src->model, &oom);
    m->summarizer = mn__arena_strdup(&one->arena, src->summarizer, &oom);
    if (oom)
        one = one_free(one);
    return one ? m : NULL;
}
