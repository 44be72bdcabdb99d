/*
 * records.h — building the caller-owned records of mnemo.h (mn_session, mn_message and their
 * lists). Each record or list owns one arena that holds the struct(s) and every string, so the
 * public _free functions release it in one step.
 */
#ifndef MN_STORE_RECORDS_H
#define MN_STORE_RECORDS_H

#include "mnemo.h"
#include "util/arena.h"

struct mn_messages_impl {
    mn_messages pub; /* first: the public pointer is the impl pointer */
    size_t cap;
    struct mn_arena arena;
};

struct mn_sessions_impl {
    mn_sessions pub;
    size_t cap;
    struct mn_arena arena;
};

/* A list of strings (mn_strings_free releases it). */
struct mn_strings_impl {
    mn_strings pub; /* first: the public pointer is the impl pointer */
    size_t cap;
    struct mn_arena arena;
};

struct mn_messages_impl *mn__records_message_list_new(void);
/* A new zeroed item at the end; NULL on OOM. */
mn_message *mn__records_message_push(struct mn_messages_impl *l);
struct mn_sessions_impl *mn__records_session_list_new(void);
mn_session *mn__records_session_push(struct mn_sessions_impl *l);
/* Appends a copy of s; non-zero on OOM. */
int mn__records_strings_push(struct mn_strings_impl *l, const char *s);

/* A message-scan visitor that copies each message into l (mn_store_message_fn shape; rc gets
 * MN_NOMEM and the scan stops when a copy fails). */
struct mn_records_collect {
    struct mn_messages_impl *l;
    mn_status rc;
};
int mn__records_collect_message(void *user, const mn_message *m);
/* A standalone copy of a summary (mn_summary_free releases it); a NULL text becomes "".
 * NULL on OOM. */
mn_summary *mn__records_summary_copy(const mn_summary *src);
/* Reverses the list in place (a newest-first read handed back oldest to newest). */
void mn__records_message_list_reverse(mn_messages *l);

/* Deep copies into a standalone record (one allocation); NULL on OOM. */
mn_message *mn__records_message_copy(const mn_message *m);
mn_session *mn__records_session_copy(const mn_session *s);
/* Deep copy of src's strings into dst using arena a; returns non-zero on OOM. */
int mn__records_message_fill(struct mn_arena *a, mn_message *dst, const mn_message *src);
int mn__records_session_fill(struct mn_arena *a, mn_session *dst, const mn_session *src);

/* A standalone record for a message not known yet (NULL on OOM), filled later by
 * mn__records_message_adopt, which cannot fail: for the calls that must not allocate once the
 * message is stored (an allocation failure then would answer MN_NOMEM for a stored message). */
mn_message *mn__records_message_shell(void);
/* Moves l's first message (and the arena holding its strings) into shell, and frees l. */
void mn__records_message_adopt(mn_message *shell, mn_messages *l);

/* Frees what mn__records_message_copy / mn__records_session_copy made (never a list item). */
void mn__records_message_free(mn_message *m);
void mn__records_session_free(mn_session *s);
void mn__records_message_list_free(mn_messages *l);
void mn__records_session_list_free(mn_sessions *l);

#endif
