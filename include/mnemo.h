/*
 * mnemo.h — the whole public API of libmnemo, a conversation memory engine for LLM agents.
 *
 * Conventions (every function below follows them unless its comment says otherwise):
 *  - Functions return an mn_status. On failure a message naming the field and the limit is
 *    available from mn_errmsg() on the calling thread until that thread's next mnemo call.
 *  - Results come back through out-parameters, which are left NULL (or 0) on failure.
 *  - A pointer handed to the caller is caller-owned and is released with the matching _free
 *    function; every _free accepts NULL. Pointers inside a returned record are owned by that
 *    record and live exactly as long as it does.
 *  - Strings are UTF-8 and NUL-terminated. Invalid UTF-8 is refused with MN_INVALID.
 *  - Times are milliseconds since the Unix epoch (UTC).
 *  - An mn_db handle may be used from several threads at once; calls on one handle are
 *    serialised internally. Several processes may open the same database file.
 *  - The library never prints and never aborts: out of memory is MN_NOMEM. Diagnostics go to
 *    the log callback (mn_set_log) when one is installed.
 *  - Option structs start with a `size` member; initialise them with their _INIT macro so that
 *    later versions can add fields without breaking callers (the ABI policy below).
 *
 * ABI policy. The shared library is libmnemo.so.MAJOR (SONAME = MN_VERSION_MAJOR, set from the
 * one version in CMakeLists.txt; mn_version() reports the library actually linked). A program
 * built against this header keeps working, without a rebuild, with any later library of the same
 * MAJOR. Within a MAJOR a release may only:
 *  - add functions, and enum values, status codes or flags (a caller must treat an unknown value
 *    it receives as "something newer", and the library refuses an unknown one it is given);
 *  - add members at the END of a caller-filled struct that starts with `size_t size` (its _INIT
 *    macro sets size = sizeof). The library reads only the members the caller's size covers and
 *    gives the others their _INIT defaults, so a caller built against an older header gets the
 *    old behaviour. A size below the struct's first layout, 0 included (a struct zeroed instead
 *    of made with _INIT), is refused with MN_MISUSE; so is a size larger than this library knows
 *    when the extra bytes are not all zero (the caller set members this library would ignore).
 *    An array of such structs (mn_append_batch, mn_append_many) is walked by the size its first
 *    element carries; every element carries the same. A new member never reuses the trailing
 *    padding of the previous layout;
 *  - add members at the END of a record the library hands out (mn_session, mn_message,
 *    mn_search_hit, mn_memory, …) and of its list. A list carries item_size, the sizeof of its
 *    items in the library that made it; index lists with their _at function (mn_messages_at, …),
 *    which is right whatever header the caller was built with. `items[i]` is right only for a
 *    caller built against the same header as the library. mn_message is embedded in
 *    mn_search_hit, so mn_message itself does not grow within a MAJOR;
 *  - add keys to JSON objects the library prints (a reader must ignore keys it does not know).
 * Everything else needs a new MAJOR: removing or renaming a function, type, member, macro or
 * enum value, changing a signature, a member's type or offset, an enum's number, or the meaning
 * of an existing argument; growing mn_message, a struct without a size member that the caller
 * allocates (mn_stats, mn_budget, mn_import_stats, mn_extract_stats, mn_append_result) or
 * mn_fold_job. MINOR counts releases that added something; PATCH fixes only.
 */
#ifndef MNEMO_H
#define MNEMO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MNEMO_BUILDING) && defined(__GNUC__)
#define MN_API __attribute__((visibility("default")))
#else
#define MN_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Version. Same major version = ABI compatible; new behaviour arrives as new functions.
 */
#define MN_VERSION_MAJOR 0
#define MN_VERSION_MINOR 1
#define MN_VERSION_PATCH 0
#define MN_VERSION_STRING "0.1.0"
#define MN_VERSION_NUMBER (MN_VERSION_MAJOR * 10000 + MN_VERSION_MINOR * 100 + MN_VERSION_PATCH)

/* The version of the library actually linked, as "MAJOR.MINOR.PATCH". Static string. */
MN_API const char *mn_version(void);
/* The same as a number, MAJOR*10000 + MINOR*100 + PATCH. */
MN_API int mn_version_number(void);

/* ---------------------------------------------------------------------------------------------
 * Status codes. One table makes the enum, the names and the descriptions; codes are never
 * renumbered. X(NAME, value, "short_name", "description")
 */
#define MN_STATUS_TABLE(X)                                                                     \
    X(OK, 0, "ok", "success")                                                                  \
    X(NOTFOUND, 1, "not_found", "no such session or message")                                  \
    X(INVALID, 2, "invalid", "invalid argument")                                               \
    X(BUSY, 3, "busy", "database is busy")                                                     \
    X(EXPIRED, 4, "expired", "session has expired")                                            \
    X(TOOBIG, 5, "too_big", "value exceeds a size limit")                                      \
    X(IO, 6, "io", "input/output error")                                                       \
    X(CORRUPT, 7, "corrupt", "data is corrupt or not a mnemo database")                        \
    X(UNAVAILABLE, 8, "unavailable", "a required resource or provider is unavailable")         \
    X(NOMEM, 9, "no_memory", "out of memory")                                                  \
    X(MISUSE, 10, "misuse", "library used incorrectly")                                        \
    X(CONFLICT, 11, "conflict", "conflicts with existing data")                                \
    X(INTERNAL, 12, "internal", "internal error")

typedef enum mn_status {
#define MN__STATUS_ENUM(name, value, short_name, text) MN_##name = value,
    MN_STATUS_TABLE(MN__STATUS_ENUM)
#undef MN__STATUS_ENUM
} mn_status;

/* "not_found", "invalid", …; "unknown" for a value outside the table. Static string. */
MN_API const char *mn_status_name(mn_status status);
/* A one-line English description of the status. Static string. */
MN_API const char *mn_status_str(mn_status status);
/* The calling thread's last error message ("" when the last call succeeded). Borrowed: valid
 * until the next mnemo call on this thread. Never NULL. Thread-safe (per-thread storage). */
MN_API const char *mn_errmsg(void);

/* ---------------------------------------------------------------------------------------------
 * Logging. The library never prints; it hands diagnostics to one process-wide callback.
 */
typedef enum mn_log_level { MN_LOG_DEBUG = 0, MN_LOG_INFO = 1, MN_LOG_WARN = 2, MN_LOG_ERROR = 3 } mn_log_level;
typedef void (*mn_log_fn)(void *user, mn_log_level level, const char *message);
/* Installs fn (NULL removes it) for messages at min_level and above. `message` is
 * callback-scoped. The callback may be called from any thread that calls into mnemo and from the
 * library's own threads (background embedding and memory work, the semantic half of a hybrid
 * search), so it must be thread-safe. Set it before opening databases; changing it while other
 * threads run mnemo calls is not synchronised. */
MN_API void mn_set_log(mn_log_fn fn, void *user, mn_log_level min_level);

/* Frees a string or buffer that a mnemo function handed to the caller as `char *`. NULL is a
 * no-op. */
MN_API void mn_free(void *p);

/* ---------------------------------------------------------------------------------------------
 * Configuration: built-in defaults < user file < project file < environment < explicit settings.
 * Keys are dotted YAML paths, e.g. "memory.storage_path". Each value remembers its source.
 */
typedef struct mn_config mn_config;

/* Creates a configuration holding the built-in defaults. Caller frees with mn_config_free.
 * Errors: MN_NOMEM. */
MN_API mn_status mn_config_new(mn_config **out);
/* Layers the configuration files and the environment over `cfg`, in precedence order:
 * the user file ($XDG_CONFIG_HOME/mnemo/config.yaml, else ~/.config/mnemo/config.yaml), the
 * project file (.mnemo/config.yaml in the current directory), then MNEMO_* variables. When
 * `explicit_file` is not NULL it replaces both files and must exist. Unknown keys are reported
 * to the log and ignored. Errors: MN_IO (explicit file unreadable), MN_INVALID (bad YAML or a
 * bad value, naming file, line and key). Not thread-safe for one cfg. */
MN_API mn_status mn_config_load(mn_config *cfg, const char *explicit_file);
/* Sets `key` to `value` (text form, checked against the key's type) with the given source
 * label ("flag" when NULL). Errors: MN_INVALID (unknown key or bad value). */
MN_API mn_status mn_config_set(mn_config *cfg, const char *key, const char *value, const char *source);
/* Looks up a key: *value and *source are borrowed from cfg (valid until it changes); either
 * out-pointer may be NULL. Errors: MN_NOTFOUND (unknown key). */
MN_API mn_status mn_config_get(const mn_config *cfg, const char *key, const char **value, const char **source);
/* mn_config_get for display (`mnemo config show`): *value is a copy with every secret as ***,
 * by the rule of the database's messages — a URL's password and its parameters named like a
 * secret (pass, secret, token), a keyword string's password= — applied to memory.storage_path
 * and the model servers' *.base_url, and with each key hash of server.api_keys as ***. Other
 * values are copied as they are. Caller frees *value with mn_free; *source is borrowed, as from
 * mn_config_get. Errors: MN_NOTFOUND (unknown key), MN_NOMEM; *value is NULL on failure. */
MN_API mn_status mn_config_get_shown(const mn_config *cfg, const char *key, char **value, const char **source);
/* Number of known keys, and the i-th key name (borrowed, static; NULL past the end), in
 * documentation order — for `mnemo config show`. */
MN_API size_t mn_config_count(void);
MN_API const char *mn_config_key(size_t i);
/* Releases cfg. NULL is a no-op. */
MN_API void mn_config_free(mn_config *cfg);

/* ---------------------------------------------------------------------------------------------
 * Database handle.
 */
typedef struct mn_db mn_db;

/* Opens (creating when missing, with its directory) the database named by the configuration's
 * memory.storage_path (a SQLite file path; "~/" is expanded), applies schema migrations, and
 * loads the configured tokenizer. `cfg` may be NULL for defaults; the handle keeps its own copy.
 * A SQLite database has its keyword index in a second file beside it, "<path>.keywords" (created,
 * or built again from the messages when it is missing or not this database's; docs/format.md),
 * and the handle runs a thread that keeps it current. The first open in a process turns off
 * SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS, a process-wide mutex on every allocation)
 * unless the application initialised SQLite before; do not open the first handle while other
 * threads are starting SQLite. Caller closes with mn_close. Errors: MN_IO (cannot open or create
 * the file, naming it), MN_CORRUPT (not a mnemo/SQLite database, or a newer schema), MN_BUSY,
 * MN_INVALID, MN_NOMEM. */
MN_API mn_status mn_open(const mn_config *cfg, mn_db **out);
/* The same, with an explicit path overriding memory.storage_path. With memory.auto_prune_days
 * set, an open prunes sessions idle longer than that (mn_prune) at most once a day per database
 * (the time kept in the database); a failure there is logged, not the open's. */
MN_API mn_status mn_open_path(const char *path, const mn_config *cfg, mn_db **out);
/* Closes the handle; no call may be running on it. Waits for the keyword indexing asked of the
 * handle's thread (at most a few search.fts_drain chunks). NULL is a no-op. */
MN_API void mn_close(mn_db *db);
/* The path or URL the handle was opened on, safe to print: a URL's password is shown as ***.
 * Borrowed from db. */
MN_API const char *mn_db_path(const mn_db *db);
/* The name of the tokenizer that counts tokens for this handle ("heuristic", …). Borrowed. */
MN_API const char *mn_db_tokenizer(const mn_db *db);
/* How many mn_append_many calls on this database pay to run at once, from different threads, for
 * different sessions: 1 on SQLite (one writer at a time: a second waits for the first's lock), 2
 * on PostgreSQL (one group's statements overlap the other's commit and WAL flush). `mnemo serve`
 * runs this many group committers unless server.committers says otherwise. 1 for NULL or a
 * closed handle. Thread-safe: it reads a constant of the backend. */
MN_API int mn_db_append_writers(const mn_db *db);
/* Whether this database answers a short read (a session, a history page, a window context) in
 * this process from local files, in microseconds: 1 on SQLite. 0 on PostgreSQL, where every read
 * waits on round trips to the server; 0 for NULL or a closed handle. `mnemo serve` answers short
 * reads on its event loops only when this is 1: on PostgreSQL a loop that waited on the database
 * would hold every other request of its connections. Thread-safe: it reads a constant of the
 * backend. */
MN_API int mn_db_reads_local(const mn_db *db);

/* ---------------------------------------------------------------------------------------------
 * Sessions. A session is one conversation with a UUIDv7 id.
 */
typedef struct mn_session {
    const char *id;            /* canonical lower-case UUID */
    const char *ns;            /* namespace (tenant/user); "default" unless set */
    const char *title;         /* NULL until set or derived from the first user message */
    const char *system_prompt; /* may be NULL */
    const char *metadata;      /* JSON object text, "{}" when none */
    const char *tool_name;     /* the tool that opened it; may be NULL */
    const char *parent_id;     /* the session it was forked from; may be NULL */
    int64_t created_at;
    int64_t updated_at;
    int64_t expires_at; /* 0 = never */
    int64_t message_count;
    int64_t token_count; /* sum of the stored token counts of its messages */
    int64_t ttl_ms;      /* idle time after which it expires; 0 = never (plain sessions) */
    int64_t max_turns;   /* turn limit: the newest turns kept active (mn_session_set_max_turns
                            says what a turn is); 0 = none */
    int64_t turn_count;  /* user messages appended (not the limit's unit) */
    int64_t inactive_count; /* of message_count, those past the turn limit (kept for search) */
    int64_t cleared_seq;    /* the newest seq the clears since the last undo moved out of the
                               active history; 0: none (or undone) */
    int64_t cleared_from;   /* the oldest seq they moved out (the messages active at the first of
                               them): an undo brings back cleared_from .. cleared_seq, those the
                               turn limit keeps; 0 with cleared_seq set: not recorded (before
                               schema 13), an undo goes by the turn limit alone */
    const char *key;        /* the caller's own name for it (mn_session_opts.key), unique in its
                               namespace; NULL when it was made without one */
} mn_session;

typedef struct mn_sessions {
    size_t count;
    mn_session *items;  /* items[i]: same-header callers only; mn_sessions_at is ABI-safe */
    size_t item_size;   /* sizeof(mn_session) in the library that made the list */
} mn_sessions;
/* Item i of the list, or NULL past its end (or for a NULL list). Borrowed from the list. The
 * ABI-safe way to index it: strides by item_size. */
MN_API const mn_session *mn_sessions_at(const mn_sessions *list, size_t i);

typedef struct mn_session_opts {
    size_t size;               /* sizeof(mn_session_opts) */
    const char *id;            /* NULL: a new UUIDv7; else a UUID to use (MN_CONFLICT if taken) */
    const char *ns;            /* NULL: "default"; 1-128 bytes of [A-Za-z0-9._:@-] */
    const char *title;         /* NULL: derived from the first user message */
    const char *system_prompt; /* NULL: none */
    const char *metadata;      /* NULL: "{}"; must be a JSON object */
    const char *tool_name;     /* NULL: none */
    int64_t ttl_ms;            /* 0: the default — threads.ttl_seconds when tool_name is set (a
                                  thread), else none; -1: never expires; else 1000 .. 366 days */
    int64_t max_turns;         /* turns kept active (mn_session_set_max_turns): 0: the default —
                                  threads.max_turns for a thread, else none; -1: no limit; else
                                  1 .. 1000000 */
    const char *key;           /* NULL: none; else the caller's own name for the session (a
                                  framework's session id such as "user-42-chat"): 1-256 bytes of
                                  UTF-8 without control characters, not a UUID, unique in its
                                  namespace (MN_CONFLICT if taken). Wherever a session id is
                                  taken, its key names it too (docs/http-api.md, "Session keys"). */
} mn_session_opts;
#define MN_SESSION_OPTS_INIT {sizeof(mn_session_opts), NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL}

/* Creates a session. opts may be NULL for all defaults. *out (optional, may be NULL) receives
 * the stored record; caller frees it with mn_session_free. Errors: MN_INVALID (bad id,
 * namespace, metadata JSON, invalid UTF-8), MN_TOOBIG (system prompt or title over the size
 * limit), MN_CONFLICT (id exists in the same namespace), MN_NOTFOUND (id exists in another
 * namespace: it looks missing, as everywhere), MN_BUSY, MN_IO. */
MN_API mn_status mn_session_create(mn_db *db, const mn_session_opts *opts, mn_session **out);
/* Reads one session. Caller frees *out with mn_session_free. Errors: MN_INVALID (not a UUID),
 * MN_NOTFOUND. */
MN_API mn_status mn_session_get(mn_db *db, const char *id, mn_session **out);
/* mn_session_get for a caller bound to namespace ns (NULL: any): a session of another namespace
 * is MN_NOTFOUND with the same message as a missing one, whether or not it has expired (never
 * MN_EXPIRED with its time). Front ends with namespace-bound callers use this. */
MN_API mn_status mn_session_get_in(mn_db *db, const char *ns, const char *id, mn_session **out);
/* A session reference — a session's UUID, or its key (mn_session_opts.key) in namespace ns (NULL:
 * "default") — as the session's canonical UUID in out. Every function that takes a session id
 * also takes a key in its place, in the namespace the call names (mn_append_request.ns,
 * mn_session_get_in) or else "default"; front ends that know their caller's namespace resolve a
 * key with this first. A UUID is only made canonical (whether it names a session is the next
 * call's to say); a key is looked up, expired sessions included. Errors: MN_INVALID (neither a
 * UUID nor a valid key, bad namespace), MN_NOTFOUND (a key naming no session). Thread-safe. */
MN_API mn_status mn_session_resolve(mn_db *db, const char *ns, const char *ref, char out[37]);
/* Lists sessions, most recently updated first. ns NULL = every namespace. limit 0 = 20,
 * at most 10000; offset skips that many. Caller frees *out with mn_sessions_free. */
MN_API mn_status mn_session_list(mn_db *db, const char *ns, size_t limit, size_t offset, mn_sessions **out);
/* Deletes a session and all its messages in one transaction, and erases them (docs/erasure.md):
 * the text leaves the keyword index, SQLite overwrites the freed space and truncates its WAL,
 * the session's offloaded tool outputs are removed and the saved vector index is dropped (it is
 * rebuilt at the next semantic search). Errors: MN_NOTFOUND. */
MN_API mn_status mn_session_delete(mn_db *db, const char *id);
/* Deletes sessions not updated for `days` days (>= 1), erasing them as mn_session_delete does;
 * *deleted (optional) gets the count. */
MN_API mn_status mn_prune(mn_db *db, int days, int64_t *deleted);
/* Reclaims the space of deleted rows now (VACUUM). PostgreSQL keeps a deleted row's text in
 * its table files until a vacuum; SQLite already overwrote it and only shrinks the file.
 * Errors: MN_BUSY, MN_IO, MN_UNAVAILABLE. */
MN_API mn_status mn_vacuum(mn_db *db);
MN_API void mn_session_free(mn_session *s);
MN_API void mn_sessions_free(mn_sessions *list);

/* ---------------------------------------------------------------------------------------------
 * Messages.
 */
typedef enum mn_role { MN_ROLE_SYSTEM = 0, MN_ROLE_USER = 1, MN_ROLE_ASSISTANT = 2, MN_ROLE_TOOL = 3 } mn_role;
/* "system", "user", "assistant", "tool"; NULL for a value outside the enum. Static string. */
MN_API const char *mn_role_name(mn_role role);
/* Parses a role name (exact, lower case). "agent" (seed 003's name) is accepted for assistant,
 * so every surface — CLI, REST, MCP, import — takes it; it is stored and shown as "assistant".
 * Errors: MN_INVALID naming the accepted values. */
MN_API mn_status mn_role_parse(const char *name, mn_role *out);

typedef struct mn_message_in {
    size_t size;                 /* sizeof(mn_message_in) */
    mn_role role;
    const char *content;         /* may be NULL only for an assistant message with tool_calls */
    const char *tool_calls;      /* assistant only: JSON array of OpenAI tool calls
                                    ({"id","type":"function","function":{"name","arguments"}}) */
    const char *tool_call_id;    /* required for role tool */
    const char *name;            /* optional participant or tool name */
    const char *tool_name;       /* the tool (agent CLI) that produced the turn; optional */
    const char *model;           /* the model that produced it; optional */
    const char *files;           /* JSON array of path strings; optional */
    const char *metadata;        /* JSON object; optional */
    const char *idempotency_key; /* optional, 1-200 bytes: a retried append with the same key in
                                    the same session returns the stored message; the same
                                    key for a different message is MN_CONFLICT */
    int pinned;
} mn_message_in;
#define MN_MESSAGE_IN_INIT {sizeof(mn_message_in), MN_ROLE_USER, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0}

typedef struct mn_message {
    int64_t id;          /* unique in the database, increasing */
    const char *session_id;
    int64_t seq;         /* 1, 2, … within the session */
    mn_role role;
    const char *content; /* NULL when stored without content */
    const char *tool_calls;
    const char *tool_call_id;
    const char *name;
    const char *tool_name;
    const char *model;
    const char *files;
    const char *metadata; /* JSON object text, "{}" when none */
    const char *idempotency_key;
    int64_t tokens;       /* tokens of content + tool call JSON, by the handle's tokenizer */
    int pinned;
    int64_t created_at;
    int active; /* 0: left the active history past the session's turn limit (kept for search) */
} mn_message;

typedef struct mn_messages {
    size_t count;
    mn_message *items;  /* items[i]: same-header callers only; mn_messages_at is ABI-safe */
    size_t item_size;   /* sizeof(mn_message) in the library that made the list */
} mn_messages;
/* Item i of the list, or NULL past its end (or for a NULL list). Borrowed from the list. The
 * ABI-safe way to index it: strides by item_size. */
MN_API const mn_message *mn_messages_at(const mn_messages *list, size_t i);

enum mn_append_flags {
    MN_APPEND_CREATE = 1 << 0, /* create the session (with that id, or that key) when it does not
                                  exist; when another writer makes it first, the append goes to theirs */
    /* mn_append_many on PostgreSQL: when another writer (another node's group) holds the session
     * right now, this request is not run and its result is MN_BUSY ("held by another writer"),
     * so the rest of the group need not wait for that writer's commit; the caller queues it
     * again. Only when every request of the call has it; elsewhere it changes nothing. */
    MN_APPEND_DEFER = 1 << 1
};

/* Appends one message as one durable transaction: when this returns MN_OK the message is
 * committed (with memory.durability=full, it survives power loss). The session's title is
 * derived from its first user message when it has none. *out (optional) receives the stored
 * message; on an idempotent retry it is the message stored the first time. Caller frees with
 * mn_message_free. Errors: MN_INVALID (naming the field: bad UTF-8 or JSON, role rules, bad
 * id), MN_TOOBIG (content over memory.max_message_bytes), MN_NOTFOUND (unknown session without
 * MN_APPEND_CREATE), MN_EXPIRED (a thread past its TTL), MN_CONFLICT (an idempotency key
 * already used for a different message), MN_BUSY (database locked beyond
 * memory.busy_timeout_ms), MN_IO. Nothing is written on failure. */
MN_API mn_status mn_append(mn_db *db, const char *session_id, const mn_message_in *msg, unsigned flags,
                           mn_message **out);
/* Appends n messages (1..100000) to one session in one transaction: all or nothing. Every
 * message is validated before anything is written. *out (optional) receives the stored
 * messages in order. Errors as mn_append; the message names the index of the bad message. */
MN_API mn_status mn_append_batch(mn_db *db, const char *session_id, const mn_message_in *msgs, size_t n,
                                 unsigned flags, mn_messages **out);

/* One request of mn_append_many: what mn_append_batch takes. */
typedef struct mn_append_request {
    size_t size;                /* sizeof(mn_append_request) */
    const char *session_id;
    const mn_message_in *msgs;  /* n messages, 1..100000 */
    size_t n;
    unsigned flags;             /* enum mn_append_flags */
    const char *ns;             /* NULL: any session, and MN_APPEND_CREATE makes it in "default".
                                   Else the session must be in this namespace: one of another is
                                   MN_NOTFOUND, checked under the session's lock (what an API key
                                   bound to a namespace needs), and MN_APPEND_CREATE makes it here */
} mn_append_request;
#define MN_APPEND_REQUEST_INIT {sizeof(mn_append_request), NULL, NULL, 0, 0, NULL}

typedef struct mn_append_result {
    mn_status status;    /* MN_OK: this request's messages are committed */
    char errmsg[256];    /* the failure message ("" on success) */
    mn_messages *stored; /* on MN_OK, when asked for: the stored messages (caller frees with
                            mn_messages_free); NULL otherwise */
} mn_append_result;

/* Group commit: appends n requests (1..10000), to one session or several, in ONE durable
 * transaction (one fsync), each request inside its own savepoint, so that a request that fails
 * (validation, MN_NOTFOUND, MN_EXPIRED, MN_CONFLICT, …) writes nothing and leaves the others.
 * results[i] (n of them) gets each request's status and message; with `want_stored`, the stored
 * messages. Returns MN_OK when the transaction committed — then every request whose result is
 * MN_OK is durable; individual results may still be failures. When the commit itself fails
 * (MN_BUSY, MN_IO, …) it returns that status, nothing is stored, and every result carries it.
 * Requests run in array order: two requests for one session get consecutive seqs in that order.
 * Errors: MN_INVALID (n out of range, NULL arrays), MN_MISUSE (a request without its size). */
MN_API mn_status mn_append_many(mn_db *db, const mn_append_request *reqs, size_t n, int want_stored,
                                mn_append_result *results);
/* Deletes one message of a session by its id (mn_message.id), in one transaction; the session's
 * message, token, turn and inactive counts follow. The message is erased as mn_session_delete
 * erases a session (its offloaded output file included), and every summary of the session that
 * covers it (covers_upto >= its seq) is deleted with a `summary_dropped` event: the next context
 * folds again from the messages that remain; a title taken from it is cleared
 * (docs/erasure.md). Errors: MN_NOTFOUND (no such session, or no such message in it), MN_EXPIRED,
 * MN_INVALID (bad id), MN_BUSY, MN_IO. */
MN_API mn_status mn_message_delete(mn_db *db, const char *session_id, int64_t message_id);
/* Updates a session's title and/or metadata (a JSON object that replaces the stored one); NULL
 * leaves a field as it is. Sets updated_at. Errors: MN_NOTFOUND, MN_EXPIRED, MN_INVALID (bad id,
 * metadata not a JSON object, invalid UTF-8), MN_TOOBIG (title over its limit), MN_BUSY, MN_IO. */
MN_API mn_status mn_session_update(mn_db *db, const char *id, const char *title, const char *metadata);

typedef struct mn_history_opts {
    size_t size;       /* sizeof(mn_history_opts) */
    int64_t after_seq; /* only messages with seq > after_seq (0 = from the start) */
    size_t limit;      /* 0 = no limit */
    int tail;          /* with limit: the newest `limit` messages instead of the oldest */
    int all;           /* also messages that left the active history (turn limit) */
} mn_history_opts;
#define MN_HISTORY_OPTS_INIT {sizeof(mn_history_opts), 0, 0, 0, 0}

/* Reads a session's messages, oldest to newest. opts may be NULL (everything). Caller frees
 * *out with mn_messages_free. Errors: MN_INVALID, MN_NOTFOUND (unknown session). */
MN_API mn_status mn_history(mn_db *db, const char *session_id, const mn_history_opts *opts, mn_messages **out);
MN_API void mn_message_free(mn_message *m);
MN_API void mn_messages_free(mn_messages *list);

/* Renders a message as a JSON object (the documented `history --json` shape). Caller frees
 * the string with mn_free. Errors: MN_NOMEM. */
MN_API mn_status mn_message_to_json(const mn_message *m, char **out);
/* Renders items [offset, offset + n) of a message list (fewer when the list is shorter) as a
 * JSON array of the objects mn_message_to_json makes, without building a tree: the server's
 * history answers use it. Caller frees the string with mn_free. Errors: MN_MISUSE (NULL
 * argument), MN_NOMEM. Thread-safe (reads the list only). */
MN_API mn_status mn_messages_to_json(const mn_messages *list, size_t offset, size_t n, char **out);
/* Renders a session as a JSON object (the documented `session show --json` shape). */
MN_API mn_status mn_session_to_json(const mn_session *s, char **out);

/* ---------------------------------------------------------------------------------------------
 * Context: what to send the model next, within a token budget, and why.
 */
typedef enum mn_format { MN_FORMAT_OPENAI = 0, MN_FORMAT_ANTHROPIC = 1, MN_FORMAT_TEXT = 2 } mn_format;
/* Parses "openai", "anthropic" or "text". Errors: MN_INVALID. */
MN_API mn_status mn_format_parse(const char *name, mn_format *out);

typedef struct mn_context_opts {
    size_t size;          /* sizeof(mn_context_opts) */
    const char *strategy; /* NULL: the configured memory.strategy; "window", "summary", "chunked"
                             or "hybrid" (docs/context.md) */
    int64_t max_tokens;   /* 0: memory.max_history_tokens (or, with a model window, the history
                             share of mn_budget_split); 1..100000000 */
    mn_format format;
    /* Since 0.2 (a caller built against 0.1 passes the smaller size; these are then 0): */
    int64_t model_window; /* 0: context.model_window (0 there too: unknown). Drives the token
                             trigger of summary/hybrid and the report's pre-flight check */
    unsigned flags;       /* enum mn_context_flags */
    /* Since 0.3, retrieval (RAG, docs/context.md "Retrieval in every context"): with rag on,
     * a build whose history does not all fit searches the session (or its namespace) with the
     * current turn's user message and sends, as a message of its own right before that user
     * message, the block of mn_relevant_context: the rag_top_k most relevant past messages not
     * already in the context, each cut at 200 characters. The history leaves the block its cost,
     * at most memory.rag.share_percent of max_tokens. The stored messages are never changed.
     * The report's "rag" member lists the injected messages (id, session_id, role, score).
     * Hybrid (keyword + semantic; min similarity applies to the semantic part) when an embedder
     * is configured, else keyword. A search that cannot run is reported, never an error.
     * Since 0.6 on by default (memory.rag.enabled). */
    int rag;                   /* 1: inject; negative: off; 0: as configured (memory.rag.enabled,
                                  default on; the report's rag.source then names it) */
    size_t rag_top_k;          /* 0: memory.rag.top_k (40); at most 100 */
    double rag_min_similarity; /* 0: memory.rag.min_similarity (0.7); negative: no threshold; at most 1 */
    int rag_scope;             /* MN_RAG_SCOPE_DEFAULT (0): memory.rag.scope (default session);
                                  MN_RAG_SCOPE_SESSION: this session; MN_RAG_SCOPE_ALL: its namespace */
    /* Since 0.4: what a due fold does (enum mn_context_fold; docs/context.md "Background folds").
     * MN_CONTEXT_FOLD_BACKGROUND (0, the default) never waits on the summariser longer than
     * context.fold_timeout_ms: the build uses the stored summary and the fold is queued on the
     * handle's fold queue (mn_fold_queue_set) when one is set, else runs here within that time.
     * MN_CONTEXT_FOLD_SYNC folds before building, however long it takes. MN_CONTEXT_FOLD_OFF
     * (or the flag MN_CONTEXT_NO_FOLD) never folds; the flag with MN_CONTEXT_FOLD_SYNC is
     * MN_INVALID. */
    int fold;
    /* Since 0.5, long-term memories (docs/context.md "Memories", docs/memory.md): with memories
     * set, one system message right after the system prompt holds the memory blocks of the
     * session's scope (pinned memories, each cut to its token_cap) and the memories_top_k live
     * memories most relevant to the last user message (semantic with an embedder, else keyword),
     * one "[id] kind: text" line each. Scope: the session's namespace; memories bound to another
     * session, or to a user_id / agent_id other than the session metadata's "user_id" /
     * "agent_id", are not used. Within the budget: the newest unit and the system prompt come
     * first, then the blocks (cut, the last first, when short), then relevant memories (the
     * lowest score leaves first), then the history. The report's "memories" member lists what
     * went in (id, version, kind, pinned, tokens, score) and what was left out and why. */
    int memories;          /* 1: add; negative: off; 0: as configured (memory.context.enabled, default
                              off; the report's memories.source then names it) */
    size_t memories_top_k; /* 0: memory.context.top_k (5); at most MN_CONTEXT_MAX_MEMORIES_TOP_K */
} mn_context_opts;
#define MN_CONTEXT_OPTS_INIT {sizeof(mn_context_opts), NULL, 0, MN_FORMAT_OPENAI, 0, 0, 0, 0, 0.0, 0, 0, 0, 0}
#define MN_CONTEXT_MAX_MEMORIES_TOP_K 50
enum mn_context_fold { MN_CONTEXT_FOLD_BACKGROUND = 0, MN_CONTEXT_FOLD_SYNC = 1, MN_CONTEXT_FOLD_OFF = 2 };
/* Since 0.6 MN_RAG_SCOPE_DEFAULT (0) follows memory.rag.scope; before, 0 was this session (still the
 * configuration's default). */
enum mn_rag_scope { MN_RAG_SCOPE_DEFAULT = 0, MN_RAG_SCOPE_ALL = 1, MN_RAG_SCOPE_SESSION = 2 };

enum mn_context_flags {
    MN_CONTEXT_NO_FOLD = 1 << 0, /* never summarise during this build: use the stored summary as is */
    /* Since 0.4: the report gets "detail", each history message's fate: first every message
     * kept ({"seq", "id", "tokens" as sent, "fate": "kept", "trimmed" or "offloaded"}), then
     * those dropped as a tool result without its call or a call without its results ({"seq",
     * "fate": "dropped_orphan" or "dropped_unmatched"}), each in seq order. A live message not
     * listed is folded into the summary (seq up to summary.covers_upto) or dropped for the budget
     * (dropped.budget counts them); hybrid never folds a system or pinned message, nor the tool
     * call or results in its unit: not listed, it was dropped for the budget. Used by the web
     * page's context picture (tests/unit/test_context_detail checks all of this over budgets). */
    MN_CONTEXT_DETAIL = 1 << 1
};

typedef struct mn_context {
    const char *rendered; /* openai: JSON array of chat messages; anthropic: JSON object
                             {"system": …, "messages": […]}; text: plain text */
    const char *report;   /* JSON object: strategy, budget, tokens per part, kept and dropped
                             messages and why (documented in docs/cli.md) */
    int64_t tokens;       /* total tokens of the context, framing included */
    size_t kept;          /* history messages included */
    size_t dropped;       /* history messages left out */
} mn_context;

/* Builds the context for a session's next model call. The newest message (with all the results
 * of a tool call) and the system prompt are always included, even when they alone are over
 * max_tokens: the report then says "over_budget": true and the "shortfall" in tokens. Within
 * the budget come, in this order, the summary (cut to fit, its newest end kept), pinned or head
 * messages, then older messages newest first (docs/context.md "The budget order"). A tool
 * result never appears without the assistant message that called it, nor a tool call without
 * all its results; the context never starts on a tool result. The same stored data and options
 * give the same bytes. Caller frees *out with mn_context_free.
 * Errors: MN_INVALID (unknown strategy, budget out of range, fold mode), MN_NOTFOUND. */
MN_API mn_status mn_context_build(mn_db *db, const char *session_id, const mn_context_opts *opts, mn_context **out);
MN_API void mn_context_free(mn_context *ctx);

/* ---------------------------------------------------------------------------------------------
 * Context governance: summaries, pinned messages, compaction events, budgets (docs/context.md).
 * The strategies summary, chunked and hybrid fold older messages into the session's global
 * summary inside mn_context_build (when their trigger fires) or on mn_compact. A fold never
 * changes or deletes messages; a failed summariser leaves everything as it was, the context
 * falls back (stored summary, else the static marker) and an event records why. At most one
 * fold per session runs at a time, across threads and processes (a claim on the session row).
 */

/* The split of a model's window for a tool-heavy call: response = min(window/4, 16000),
 * history = min((window - response)/3, 50000), files = the rest. Errors: MN_INVALID (window not
 * from 1 to 100000000). Thread-safe; no handle needed. */
typedef struct mn_budget {
    int64_t response, history, files;
} mn_budget;
MN_API mn_status mn_budget_split(int64_t model_window, mn_budget *out);

/* Pins (pinned 1) or unpins (0) a message by its id. Pinned messages stay verbatim in the hybrid
 * strategy whatever their age. Errors: MN_NOTFOUND (no such message), MN_INVALID (pinned not 0
 * or 1, id not positive), MN_BUSY, MN_IO. */
MN_API mn_status mn_message_pin(mn_db *db, int64_t message_id, int pinned);
/* Since 0.5: the same, for a message of session_id only (what the server's message_pin operation
 * and `mnemo message pin` call, so a caller limited to one namespace cannot pin another's
 * messages by id). Errors: MN_MISUSE (db or session_id NULL), MN_INVALID (session_id not a UUID,
 * pinned not 0 or 1, id not positive), MN_NOTFOUND (no such session, or the message is not
 * one of its messages), MN_EXPIRED, MN_BUSY, MN_IO. Thread-safe like every mn_db call. */
MN_API mn_status mn_session_message_pin(mn_db *db, const char *session_id, int64_t message_id, int pinned);

typedef struct mn_summary {
    int64_t id;
    const char *session_id;
    int64_t covers_upto; /* seq of the newest message folded in; every older message is covered */
    int64_t folded;      /* messages it stands for */
    const char *text;
    int64_t tokens;      /* by the handle's tokenizer */
    const char *model;   /* the model that wrote it; NULL for extractive / none */
    const char *summarizer; /* "llm", "extractive" or "none" */
    int64_t created_at;
} mn_summary;

/* The session's global summary (its latest). Caller frees *out with mn_summary_free.
 * Errors: MN_NOTFOUND (no such session, or no summary yet — the message says which),
 * MN_EXPIRED, MN_INVALID. */
MN_API mn_status mn_summary_get(mn_db *db, const char *session_id, mn_summary **out);
MN_API void mn_summary_free(mn_summary *s);

/* Folds the session now (like /compact): every message except the last context.tail_turns
 * turns goes into the global summary, with summarizer.model (the primary model, never the
 * cheaper automatic one). *event_json (optional; caller frees with mn_free) receives the event
 * written: {"kind":"compaction","outcome":"ok"|"failed"|"rolled_back"|"nothing_to_fold", …}.
 * Errors: MN_BUSY (another fold of this session is in flight), MN_UNAVAILABLE (the summariser
 * failed: nothing changed, the event says why), MN_NOTFOUND, MN_EXPIRED, MN_INVALID. */
MN_API mn_status mn_compact(mn_db *db, const char *session_id, char **event_json);

/* mn_compact with options (since 0.4). instructions: what the summary must keep, as people
 * write after /compact in coding agents ("keep the API decisions"); passed to the summariser
 * (at most 4000 bytes of UTF-8; NULL or "": none). */
typedef struct mn_compact_opts {
    size_t size; /* sizeof(mn_compact_opts) */
    const char *instructions;
} mn_compact_opts;
#define MN_COMPACT_OPTS_INIT {sizeof(mn_compact_opts), NULL}
#define MN_COMPACT_INSTRUCTIONS_MAX 4000
MN_API mn_status mn_compact_ex(mn_db *db, const char *session_id, const mn_compact_opts *opts, char **event_json);

/* Background folds (docs/context.md). A service with worker threads registers a queue: a
 * build whose fold is due (and fold mode background) calls fn(user, job) instead of folding;
 * fn copies what it keeps of job and returns 0 when queued (non-zero: the build folds itself
 * within context.fold_timeout_ms). A worker later calls mn_fold_run(db, job, …), which folds
 * as a build with fold mode sync would (the per-session claim keeps one fold of a session in
 * flight, across threads, processes and nodes). fn NULL removes the queue. Not thread-safe
 * against builds running on the handle: set it before serving. */
typedef struct mn_fold_job {
    const char *session_id;
    const char *strategy;
    int64_t max_tokens;
    int64_t model_window;
} mn_fold_job;
typedef int (*mn_fold_queue_fn)(void *user, const mn_fold_job *job);
MN_API mn_status mn_fold_queue_set(mn_db *db, mn_fold_queue_fn fn, void *user);
/* Runs job's fold now. *outcome_json (optional; caller frees with mn_free) gets the report's
 * "fold" member: {"mode":"sync","outcome":"ok"|"failed"|"in_flight"|"none"|…, "event": …}.
 * Errors: MN_NOTFOUND, MN_EXPIRED, MN_INVALID, store errors. */
MN_API mn_status mn_fold_run(mn_db *db, const mn_fold_job *job, char **outcome_json);

/* How many folds (automatic or mn_compact) this process has run since it started, over every
 * handle, by outcome: the summary was stored (ok), the summariser failed (failed), or the
 * summary was not shorter and was dropped (rolled_back). Each pointer may be NULL. For a
 * service's metrics; the per-session history is mn_events_json. Thread-safe. */
MN_API void mn_compaction_counts(int64_t *ok, int64_t *failed, int64_t *rolled_back);

/* The session's events (compactions, failures, fallbacks), newest first, at most `limit`
 * (0: 50, at most 10000), as a JSON array of {"id","kind","created_at","data":{…}}. Caller frees
 * with mn_free. Errors: MN_NOTFOUND, MN_INVALID. */
MN_API mn_status mn_events_json(mn_db *db, const char *session_id, size_t limit, char **out);

/* ---------------------------------------------------------------------------------------------
 * Chat (mnemo chat, docs/chat.md): one model turn with mnemo as the memory. The model is
 * chat.model, else summarizer.model. The server is chat.base_url with chat.protocol (openai:
 * /v1/chat/completions with "stream": true and the usage chunk; ollama: /api/chat, NDJSON),
 * chat.api_key_env and chat.timeout_ms (the longest silence); with chat.base_url empty, the `llm`
 * summariser's server as a whole (summarizer.base_url, .protocol, .api_key_env, .timeout_ms).
 */

/* Whether a chat can be attempted: MN_OK with *model (optional; borrowed from db) the model
 * that will answer. Errors: MN_UNAVAILABLE naming exactly the settings to set. */
MN_API mn_status mn_chat_ready(mn_db *db, const char **model);

typedef struct mn_chat_opts {
    size_t size;                    /* sizeof(mn_chat_opts) */
    const mn_context_opts *context; /* NULL: the defaults (strategy, budget, no RAG); the format is
                                       always openai */
    const char *model;              /* NULL: the configured model (mn_chat_ready) */
} mn_chat_opts;
#define MN_CHAT_OPTS_INIT {sizeof(mn_chat_opts), NULL, NULL}

/* Receives reply text as it arrives (len bytes, not NUL-terminated; callback-scoped), and ticks
 * with len 0 at least once a second while the provider is silent. Return 0 to go on, non-zero to
 * interrupt the reply. */
typedef int (*mn_chat_stream_fn)(void *user, const char *text, size_t len);

typedef struct mn_chat_result {
    mn_message *reply;   /* the stored assistant message; NULL when interrupted */
    int interrupted;     /* 1: the stream function stopped the reply; nothing was stored */
    char *model;         /* the model asked */
    char *report;        /* the mn_context_build report of the request sent (JSON object) */
    int64_t context_tokens; /* tokens of that context by the handle's tokenizer */
    int64_t prompt_tokens, completion_tokens, cached_tokens; /* as the provider reported: -1 when it
                                                                did not (cached: OpenAI's
                                                                prompt_tokens_details) */
    int64_t session_turns, session_prompt_tokens, session_completion_tokens, session_cached_tokens;
                         /* the session's totals after this turn (metadata "chat") */
} mn_chat_result;

/* Sends the session's context — exactly mn_context_build's OpenAI rendering for opts->context —
 * to the configured model and streams the reply to fn (may be NULL). The caller appends the
 * user turn first (mn_append). When the reply is whole it is appended as one assistant message
 * (model set; metadata {"usage":{…},"context_tokens":N}) and the usage is added to the session
 * metadata's "chat" object {"turns","prompt_tokens","completion_tokens","cached_tokens"} (a
 * read-modify-write: concurrent chats on one session may lose a count, never a message). When fn
 * interrupts, or on any error, no reply is stored. Caller frees *out with mn_chat_result_free.
 * Errors: MN_UNAVAILABLE (no model or server configured, connection failed, an HTTP error or an
 * error in the stream: the message is one line with the status and the provider's words),
 * the errors of mn_context_build and mn_append. */
MN_API mn_status mn_chat_reply(mn_db *db, const char *session_id, const mn_chat_opts *opts, mn_chat_stream_fn fn,
                               void *user, mn_chat_result **out);
MN_API void mn_chat_result_free(mn_chat_result *r);

/* ---------------------------------------------------------------------------------------------
 * Export and import: JSON Lines (docs/format.md). A header line, then for each session one
 * session line followed by its message lines.
 */
/* Receives `len` bytes of output (whole lines). Returns 0 to continue, non-zero to stop with
 * MN_IO. The bytes are callback-scoped. */
typedef int (*mn_write_fn)(void *user, const char *bytes, size_t len);
/* Reads up to `cap` bytes into buf; returns the count, 0 at the end, -1 on error (MN_IO). */
typedef long (*mn_read_fn)(void *user, char *buf, size_t cap);

/* Exports the sessions named in ids (n of them, in that order; an id named twice is written once),
 * or every session when n is 0, oldest first.
 * Errors: MN_NOTFOUND (a named session is missing; nothing is written), MN_IO. */
MN_API mn_status mn_export(mn_db *db, const char *const *ids, size_t n, mn_write_fn write, void *user);

typedef struct mn_import_stats {
    int64_t sessions_added, sessions_skipped; /* skipped: the id was already there */
    int64_t messages_added, messages_skipped; /* skipped: that session already had that seq */
} mn_import_stats;

/* Imports an export stream in one transaction: on any error nothing is written. Idempotent on
 * ids: sessions already present and messages whose (session, seq) is present are skipped.
 * Token counts are recounted with the database's tokenizer (the file's are ignored); every
 * integer is bounded (ids and seqs 1..2^53, times up to year 9999, ttl_ms and max_turns as
 * mn_session_create). stats may be NULL. Errors: MN_INVALID (naming the line: bad JSON, bad
 * field or integer out of range, missing, repeated or unknown-version header, empty input),
 * MN_TOOBIG (a line over 64 MiB), MN_IO. */
MN_API mn_status mn_import(mn_db *db, mn_read_fn read, void *user, mn_import_stats *stats);

/* ---------------------------------------------------------------------------------------------
 * Threads: sessions opened with a TTL and a turn limit (mn_session_opts.ttl_ms, max_turns) that
 * any tool may continue by id. Reads and appends on an expired thread fail with MN_EXPIRED and
 * a message giving the time it expired; an append extends the thread's life by its TTL.
 */

/* The live session to continue: `id` when given (MN_EXPIRED / MN_NOTFOUND as mn_session_get),
 * else the most recently updated session that has not expired, in namespace ns (NULL: any).
 * Caller frees *out with mn_session_free. Errors: MN_NOTFOUND (nothing to resume). */
MN_API mn_status mn_session_resume(mn_db *db, const char *ns, const char *id, mn_session **out);
/* Copies a session's active messages up to seq upto_seq (0: all) into a new session whose
 * parent_id is `id`, with the same namespace, system prompt, metadata and limits, in one
 * transaction. Caller frees *out with mn_session_free. Errors: MN_NOTFOUND, MN_EXPIRED,
 * MN_INVALID (upto_seq negative). */
MN_API mn_status mn_session_fork(mn_db *db, const char *id, int64_t upto_seq, mn_session **out);
/* Deletes every expired thread with its messages, erasing them as mn_session_delete does, and
 * the rows of documents past their time to live; *purged (optional) gets the threads' count. */
MN_API mn_status mn_gc(mn_db *db, int64_t *purged);

typedef struct mn_strings {
    size_t count;
    const char **items; /* pointers: their size never changes, so items[i] is ABI-safe */
} mn_strings;
/* String i, or NULL past the end (or for a NULL list). Borrowed from the list. */
MN_API const char *mn_strings_at(const mn_strings *list, size_t i);
/* The unique file paths the session's messages list, as seed 002's GetFileList walks them:
 * messages newest first, each message's files in the order it lists them; a path keeps the place
 * of its first occurrence. Paths are compared as given ("a.c", "./a.c" and "/abs/a.c" are three
 * files). Caller frees *out with mn_strings_free. Errors: MN_NOTFOUND, MN_EXPIRED. */
MN_API mn_status mn_session_files(mn_db *db, const char *session_id, mn_strings **out);
MN_API void mn_strings_free(mn_strings *list);
/* Whether to send a file's content in this session (seed 002's FileDeduplicator): the session
 * remembers, durably, the path each content (by SHA-256) was first seen under. *include is 1 for
 * content new to the session, 0 for that content again under that first path, and 1 under any
 * other path, every time (the path string as given). Errors: MN_NOTFOUND, MN_EXPIRED,
 * MN_INVALID (path not UTF-8). */
MN_API mn_status mn_file_should_include(mn_db *db, const char *session_id, const char *path, const char *content,
                                        size_t len, int *include);

/* ---------------------------------------------------------------------------------------------
 * Clearing and turn limits (seed 000's /clear, seed 003's clear() and prune(max_messages)).
 */
enum mn_clear_flags {
    MN_CLEAR_UNDO = 1 << 0, /* bring the cleared messages back instead */
    MN_CLEAR_STATE = 1 << 1 /* also reset the session state (mn_state_clear), in the same transaction */
};
/* Clears a session's active history in one transaction: every active message leaves the active
 * history — out of every context, mn_history and forks — but stays stored, counted and
 * searchable (mn_history with `all` shows it, with active 0); the summaries written before the
 * clear stop being the session's summary. New messages start a fresh active history. With
 * MN_CLEAR_UNDO, every message cleared since the last undo comes back (mn_session.cleared_from
 * to cleared_seq), except those the turn limit would keep out anyway — a message the limit had
 * moved out before the clear stays out; the summaries written since the clear are deleted (they
 * folded only what followed it, and would hide the messages brought back), with a
 * `summary_dropped` event (reason `clear_undone`): the next fold covers them all.
 * *count (optional) gets the messages moved (0 for an undo with nothing cleared). flags: 0 or
 * enum mn_clear_flags. Errors: MN_INVALID (bad id, unknown flag, UNDO with STATE), MN_NOTFOUND,
 * MN_EXPIRED, MN_BUSY, MN_IO. */
MN_API mn_status mn_session_clear(mn_db *db, const char *session_id, unsigned flags, int64_t *count);
/* Changes a session's turn limit (mn_session.max_turns; 0: none) and applies it at once, in one
 * transaction: the messages before the newest max_turns turns leave the active history (deleted
 * with threads.trim: delete). A turn (seed 002) is one appended message of any role, except that
 * an assistant message with tool_calls and the tool results after it are one turn: the limit
 * never keeps a result without its call, nor a call without its stored results. The session's
 * system prompt is no turn. The limit applies again after every append that stores a message,
 * whatever its role, so a session holds at most max_turns turns in its active history.
 * Raising or removing the limit brings nothing back.
 * Errors: MN_INVALID (bad id, max_turns not from 0 to 1000000), MN_NOTFOUND, MN_EXPIRED,
 * MN_BUSY, MN_IO. */
MN_API mn_status mn_session_set_max_turns(mn_db *db, const char *session_id, int64_t max_turns);

/* ---------------------------------------------------------------------------------------------
 * Session state for ask-user flows: a JSON object per session with "params" (object),
 * "waiting_for_param" (string or null), "last_intent_id", "last_result" and "plan_execution".
 * Every change is one transaction that reads and writes the state, so concurrent changes from
 * threads or processes never lose each other. The value of every member named in
 * state.sensitive_params (any case) or whose name holds a secret word (password, passwd,
 * secret, token, api_key, authorization, credential, private_key, …), at any depth of the
 * state, is shown as "[redacted]" unless `reveal` is set, and never logged. `reveal` is for the
 * user at a terminal: the MCP surface never sets it (a model must not see the secrets).
 */

/* The state object as JSON (caller frees with mn_free). Errors: MN_NOTFOUND, MN_EXPIRED. */
MN_API mn_status mn_state_get(mn_db *db, const char *session_id, int reveal, char **out);
/* Merges a JSON object into params (shallow: each key replaces; a null value removes the key);
 * clears waiting_for_param when the awaited parameter arrives. Errors: MN_INVALID (not a JSON
 * object), MN_NOTFOUND, MN_EXPIRED, MN_TOOBIG (state over 1 MiB). */
MN_API mn_status mn_state_merge_params(mn_db *db, const char *session_id, const char *params_json);
/* Sets the parameter the flow waits for (NULL clears it). */
MN_API mn_status mn_state_set_waiting(mn_db *db, const char *session_id, const char *param);
/* Records the last intent and its result (any JSON value; NULL leaves it unchanged). */
MN_API mn_status mn_state_set_result(mn_db *db, const char *session_id, const char *intent_id,
                                     const char *result_json);
/* Stores the plan being executed (any JSON value; NULL clears it), for resumption. */
MN_API mn_status mn_state_set_plan(mn_db *db, const char *session_id, const char *plan_json);
/* Resets the state to its empty form. */
MN_API mn_status mn_state_clear(mn_db *db, const char *session_id);

/* ---------------------------------------------------------------------------------------------
 * Tokens. Encodings: "cl100k_base" and "o200k_base" (exact, tiktoken-compatible; their rank
 * files are looked up in MNEMO_DATA_DIR, $XDG_DATA_HOME/mnemo, the installed data directory,
 * then the build tree) and "heuristic" (4 characters a token). Loaded encodings are cached for
 * the life of the process and shared by all handles.
 */

/* Counts the tokens of text[0..len) (any bytes) in `encoding`. A text of 1 MiB or more in
 * cl100k_base or o200k_base is counted on all online cores (cut where both encodings always
 * split, so the count is the same as on one thread). Errors: MN_INVALID (unknown encoding),
 * MN_UNAVAILABLE (its rank file is missing), MN_CORRUPT (its rank file has an unknown SHA-256).
 * Thread-safe. */
MN_API mn_status mn_count_tokens(const char *encoding, const char *text, size_t len, size_t *count);
/* The same with at most `threads` threads for a large text (0: the online cores, 1: the calling
 * thread only). */
MN_API mn_status mn_count_tokens_threads(const char *encoding, const char *text, size_t len, unsigned threads,
                                         size_t *count);
/* The token ids of text[0..len). Caller frees *ids with mn_free. Errors as mn_count_tokens, and
 * MN_INVALID for "heuristic", which has no ids. Thread-safe. */
MN_API mn_status mn_encode_tokens(const char *encoding, const char *text, size_t len, uint32_t **ids, size_t *n);

/* Called during long operations: `done` of `total` items so far. */
typedef void (*mn_progress_fn)(void *user, int64_t done, int64_t total);
/* Recounts the stored token count of every message with this handle's tokenizer (after a change
 * of tokenizer), in batches of 1000 messages per transaction, and records the tokenizer in the
 * database. progress may be NULL. *recounted (optional) gets the number of messages. Safe to
 * interrupt and run again. Errors: MN_BUSY, MN_IO. */
MN_API mn_status mn_reindex_tokens(mn_db *db, mn_progress_fn progress, void *user, int64_t *recounted);

/* Brings the schema of the database at path (NULL: the configuration's memory.storage_path;
 * SQLite or PostgreSQL) up to this version, as mn_open does on its own, calling progress (may be
 * NULL) with (messages done, messages in all) during the long steps: version 10 rewrites a SQLite
 * file's messages clustered by session (docs/format.md), about half a minute a million messages.
 * *from_version (may be NULL) gets the version the database had (0: it was new; equal to the
 * current version: nothing was done). The whole upgrade is one transaction: interrupted, the file
 * stays at its old version. Creates the database when it is missing. Other processes that open
 * it meanwhile wait for the write lock up to memory.busy_timeout_ms, then fail with MN_BUSY;
 * processes of an older mnemo must be stopped first (they keep writing the old layout).
 * Errors: those of mn_open. Thread-safe. */
MN_API mn_status mn_upgrade(const char *path, const mn_config *cfg, mn_progress_fn progress, void *user,
                            int *from_version);

/* ---------------------------------------------------------------------------------------------
 * Migration between databases and backends (docs/scale-out.md, mnemo migrate).
 */
/* Copies everything from the database `from` into the database `to`, across backends: each is a
 * SQLite path, "sqlite:PATH", or a postgres:// / postgresql:// URL; `from` must exist, `to` is
 * created (a file) or given its schema (an empty PostgreSQL database) when needed. Opens both with
 * cfg (NULL: defaults) but never with an embedder, so nothing is queued or embedded meanwhile.
 * Moves: sessions and messages (ids, seq, timestamps, tokens, flags: the export of `to` is then
 * byte-identical to the export of `from`) in one transaction on `to`; then per session its latest
 * summary, its events (new ids, same times) and its state, each only when the `to` session has
 * none; the recorded tokenizer and embedding queue setting; and, when `to` was empty, the stored
 * vectors with their embedder identity. Not moved: the file-dedup records (a file's content is
 * sent once more) and the embedding queue's entries (mnemo embed --backfill queues them again).
 * A `to` that already holds sessions is refused unless `append` is non-zero; appending skips
 * sessions and messages already there, like mn_import. progress (may be NULL) gets done/total
 * steps, ending with done == total. stats (optional) gets the session and message counts.
 * Errors: MN_NOTFOUND (no database at `from`), MN_CONFLICT (`to` not empty, or an idempotency
 * key clash while appending), MN_INVALID (the same database twice; a SQLite `from` of an older
 * schema, which is only read: mn_upgrade it, or a copy, first), MN_CORRUPT (a SQLite `from` that
 * is empty or another application's), the errors of mn_open_path for either side, MN_BUSY, MN_IO, MN_UNAVAILABLE. A failure before the first commit leaves `to`
 * unchanged; one after it names the session and says to run again with append. */
MN_API mn_status mn_migrate(const char *from, const char *to, const mn_config *cfg, int append,
                            mn_progress_fn progress, void *user, mn_import_stats *stats);

/* ---------------------------------------------------------------------------------------------
 * Backup (docs/cli.md, mnemo backup).
 */
/* Writes a backup of the SQLite database db has open into the new file dest_path ("~/" is the
 * home folder), with what mnemo keeps beside it, while this and other handles and processes go on
 * writing. The database is copied as it is at one moment (SQLite's online backup API, from one
 * read snapshot: writers wait only while the snapshot begins); its keyword index
 * ("<dest_path>.keywords") from the same moment; its saved vector indexes ("<dest_path>.hnsw",
 * "<dest_path>.memories.hnsw") before it, so that each is behind the copy or current, never ahead,
 * and catches up from the copy's change log; and, when dest_path is in another folder, the
 * offloaded tool outputs of its sessions (FOLDER/tool-outputs/SESSION/). The backup opens like any
 * database and rebuilds no index. Everything is written under a temporary name in dest_path's
 * folder and moved into place at the end, the database last, with every file and the folder
 * fsynced: after a crash dest_path is missing or whole, never a part of a backup. progress (may be
 * NULL) gets the pages of the database and its keyword index copied and their total, ending with
 * done == total. While the copy runs, the source's write-ahead log cannot restart, so it grows
 * with what others write. Errors: MN_CONFLICT (dest_path exists, or a SQLite journal of another
 * database by its name is beside it), MN_INVALID (dest_path is the database itself or not a file
 * path; db is a PostgreSQL database — back it up with PostgreSQL's own tools, pg_basebackup or
 * pg_dump — or has no file: in memory, a file: URI), MN_BUSY (the write lock was not had within
 * memory.busy_timeout_ms), MN_IO, MN_NOMEM, MN_MISUSE (a bad handle, a NULL dest_path). Thread-safe. */
MN_API mn_status mn_backup(mn_db *db, const char *dest_path, mn_progress_fn progress, void *user);

/* ---------------------------------------------------------------------------------------------
 * Search and retrieval (docs/search.md). Keyword search is SQLite FTS5 with BM25 over message
 * content and always available. Semantic search needs an embedder (embedder.name: hash, openai
 * or ollama); `hash` is offline and lexical, not semantic: it finds shared words and word
 * pieces, not synonyms. Vectors live in the database with the embedder's name, model and
 * dimension; the HNSW index over them is a cache kept next to the database file
 * ("<db>.hnsw"), rebuilt from the stored vectors when it is missing, damaged or out of date.
 * Appends queue new messages for embedding (embedder.mode queue, the default) or embed them
 * before returning (inline); mn_embed_pending drains the queue.
 */
typedef enum mn_search_mode {
    MN_SEARCH_AUTO = 0,     /* hybrid when an embedder is configured, else keyword */
    MN_SEARCH_SEMANTIC = 1, /* nearest vectors by cosine similarity */
    MN_SEARCH_KEYWORD = 2,  /* FTS5 BM25 */
    MN_SEARCH_HYBRID = 3    /* reciprocal rank fusion of both lists (k = search.rrf_k, 60) */
} mn_search_mode;
/* Parses "auto", "semantic", "keyword" or "hybrid". Errors: MN_INVALID. */
MN_API mn_status mn_search_mode_parse(const char *name, mn_search_mode *out);
/* "auto", "semantic", "keyword", "hybrid"; NULL outside the enum. Static string. */
MN_API const char *mn_search_mode_name(mn_search_mode mode);

typedef struct mn_search_filter {
    size_t size;            /* sizeof(mn_search_filter) */
    const char *session_id; /* NULL: every session */
    const char *ns;         /* NULL: every namespace */
    int role;               /* -1: any; else an mn_role */
    int64_t since, until;   /* created_at within [since, until) in ms; 0: unbounded */
    /* Since 0.5 (a caller built before passes the smaller size; this is then NULL): */
    const char *metadata;   /* NULL: any; else a JSON object of scalars (string, number, true,
                               false, null), at most 16 keys of 1-64 bytes [A-Za-z0-9_.-]: each
                               key must be in the message's metadata with an equal value
                               (keyword, semantic and hybrid alike) */
} mn_search_filter;
#define MN_SEARCH_FILTER_INIT {sizeof(mn_search_filter), NULL, NULL, -1, 0, 0, NULL}

typedef struct mn_search_hit {
    mn_message message;  /* the stored message (strings owned by the list) */
    const char *ns;      /* its session's namespace */
    double score;        /* what the list is ordered by: similarity (semantic), bm25 (keyword),
                            the fused RRF score (hybrid) */
    double similarity;   /* cosine similarity to the query; 0 when not in the semantic list */
    double bm25;         /* BM25 relevance (larger is better); 0 when not in the keyword list */
    int semantic_rank;   /* 1-based rank in the semantic list; 0: absent */
    int keyword_rank;    /* 1-based rank in the keyword list; 0: absent */
} mn_search_hit;

typedef struct mn_search_hits {
    size_t count;
    mn_search_hit *items; /* best first; ties by smaller message id */
    mn_search_mode mode;  /* the mode that ran (never AUTO) */
    /* Of the messages that pass the filter, how many wait to be embedded (queued), so
     * a semantic or hybrid search cannot find them by meaning yet: run mn_embed_pending and
     * search again. 0 for a keyword search (it sees every message). */
    int64_t not_embedded;
    /* Since 0.4, the semantic part: vectors the saved index answered for, and vectors scanned
     * exactly because the index does not reflect them yet (stored since it was last saved; all
     * of them when there is no index). index_truncated is 1 when that scan stopped at its bound
     * of 100,000 rows (the rest was not searched: run mnemo embed --pending, or keep mnemo
     * serve running, to bring the index up to date). */
    int64_t index_indexed, index_scanned;
    int index_truncated;
    size_t item_size; /* sizeof(mn_search_hit) in the library that made the list */
    /* Since 0.6, the keyword part: messages the keyword index does not hold yet, and how many
     * of the newest of them were scanned instead (at most 5,000; the older rest were not
     * searched). Both 0 but while the index is rebuilt in the background: its file
     * (DB.keywords) was missing or stale when the database was opened, and more messages than
     * a search should wait for (2,000) had to be indexed again. mn_keyword_drain with all = 1
     * finishes it in the foreground. 0 for a semantic search and on PostgreSQL. */
    int64_t keyword_unindexed, keyword_scanned;
} mn_search_hits;
/* Hit i, or NULL past the end (or for a NULL list). Borrowed from the list. ABI-safe indexing. */
MN_API const mn_search_hit *mn_search_hits_at(const mn_search_hits *hits, size_t i);

/* Searches stored messages (active or not) for `query`. top_k 1..1000 (0: 10). filter may be
 * NULL. min_similarity (-1..1) drops semantic candidates below it (0: keep all); in hybrid mode
 * it applies to the semantic list before fusion. With a filter, a semantic search returns top_k
 * hits whenever top_k embedded messages pass it (filtered searches are exact when the filter is
 * selective). Messages not embedded yet are found by keyword only; a semantic or hybrid search
 * counts them in (*out)->not_embedded (mn_embed_pending embeds them). Caller
 * frees *out with mn_search_hits_free. Errors: MN_INVALID (empty or non-UTF-8 query, bad mode,
 * filter or limits), MN_UNAVAILABLE (semantic/hybrid without an embedder, or the embedder
 * failed), MN_CONFLICT (the stored vectors come from another embedder/model/dimension than the
 * configured one: the message names both; mnemo reindex --embeddings re-embeds), MN_BUSY,
 * MN_IO. Thread-safe. */
MN_API mn_status mn_search(mn_db *db, const char *query, mn_search_mode mode, size_t top_k,
                           const mn_search_filter *filter, double min_similarity, mn_search_hits **out);
MN_API void mn_search_hits_free(mn_search_hits *hits);
/* The hits as a JSON array of {"rank","score","similarity","bm25","semantic_rank",
 * "keyword_rank","namespace","message":{…history --json shape…}} (not_embedded and mode are
 * fields of mn_search_hits, not of this array). Caller frees with mn_free. */
MN_API mn_status mn_search_hits_to_json(const mn_search_hits *hits, char **out);

/* Past messages relevant to `query`, as the RAG block injected before a question:
 *   RELEVANT CONTEXT FROM PAST CONVERSATIONS:\n---\n[ROLE]: content…\n---
 * (each message cut at 200 characters, "..." marking a cut). Over-fetches 20 hits (AUTO mode)
 * and keeps them, best first, while their lines fit max_tokens (1..1000000) by the handle's
 * tokenizer. *text is "" when nothing is relevant. Caller frees with mn_free. Errors as
 * mn_search. */
MN_API mn_status mn_relevant_context(mn_db *db, const char *query, int64_t max_tokens,
                                     const mn_search_filter *filter, char **text);

/* Embeds up to `max` queued messages (0: all), in batches of embedder.batch, each batch one
 * transaction. *done (optional) gets how many were embedded. Messages with no words are taken
 * off the queue without a vector. Errors: MN_UNAVAILABLE (no embedder configured, or it failed:
 * the batch stays queued), MN_CONFLICT (stored vectors of another model), MN_BUSY, MN_IO. */
MN_API mn_status mn_embed_pending(mn_db *db, size_t max, size_t *done);
/* Queues every message with content that has no vector yet, then drains the queue like
 * mn_embed_pending, calling progress (may be NULL) after each batch with (done, total). Safe to
 * interrupt and run again: what was embedded stays. *done (optional) gets the count. */
MN_API mn_status mn_embed_backfill(mn_db *db, mn_progress_fn progress, void *user, int64_t *done);
/* Drops every stored vector and re-embeds all messages with the configured embedder (after a
 * change of embedder or model), like mn_embed_backfill. */
MN_API mn_status mn_reindex_embeddings(mn_db *db, mn_progress_fn progress, void *user, int64_t *done);
/* Counts: messages with a vector, messages queued. Either pointer may be NULL. */
MN_API mn_status mn_embed_counts(mn_db *db, int64_t *embedded, int64_t *queued);

/* The keyword index catches up with new messages as they arrive (docs/search.md, "Keeping the
 * keyword index current"): on SQLite the index is a file of its own, "<db>.keywords", and after
 * every search.fts_drain rows an append logged, the handle's indexer thread applies them to it in
 * transactions of at least that many rows, beside the appends (an append waits for it while it
 * is more than four chunks behind); a keyword search applies what is left; mn_close waits for
 * what was asked of the thread. A missing or stale index file (more than 2,000 messages to
 * index) is rebuilt by the thread in the background instead: searches answer meanwhile
 * (mn_search_hits.keyword_unindexed), and mn_close stops it after its step. mn_keyword_drain runs that step now, on the calling thread:
 * all = 0 applies what this handle logged if it is at least search.fts_drain rows (else
 * nothing), all = 1 the whole log, chunk by chunk. *applied (optional) gets the log rows
 * applied, *pending (optional) the rows still waiting (a count of the log; the thread may apply
 * some of them meanwhile).
 * mn_keyword_drain_defer(db, 1) leaves the step to the caller: appends on this handle stop
 * asking for it (mnemo serve's group committer drains after it has acknowledged a group).
 * PostgreSQL indexes each message as it is inserted: nothing to do, *applied and *pending are 0.
 * Errors: MN_BUSY, MN_IO. Thread-safe, as every call on a handle. */
MN_API mn_status mn_keyword_drain(mn_db *db, int all, int64_t *applied, int64_t *pending);
MN_API mn_status mn_keyword_drain_defer(mn_db *db, int on);

/* ---------------------------------------------------------------------------------------------
 * Statistics.
 */
typedef struct mn_stats {
    int64_t sessions, messages, tokens;
    int64_t threads;         /* sessions with a TTL */
    int64_t turns;           /* user messages, over all sessions */
    int64_t expired_pending; /* expired threads not yet purged by mn_gc */
    int64_t db_bytes, wal_bytes; /* the database's files (SQLite: the database and its keyword
                                  * index, "<db>.keywords") and their write-ahead logs, in bytes */
    int schema_version;
} mn_stats;

/* Fills *out with counts from the session table (cheap: no scan of messages). Errors: MN_BUSY,
 * MN_IO. */
MN_API mn_status mn_stats_get(mn_db *db, mn_stats *out);
/* The same plus path, backend, tokenizer and bytes_per_message as a JSON object. Caller frees
 * with mn_free. */
MN_API mn_status mn_stats_json(mn_db *db, char **out);

/* ---------------------------------------------------------------------------------------------
 * Read replicas (PostgreSQL; docs/scale-out.md#read-replicas). With postgres.replicas set, the
 * reads of mn_context_build, mn_history, mn_search, mn_session_list, mn_memory_search and
 * mn_export go to a hot standby that has replayed what the read must see; writes, claims and
 * background work go to the primary. A read always sees this handle's own commits; to read
 * another handle's writes (another node, another process), pass its position on. SQLite has no
 * replicas: positions are "" and every read sees every commit.
 * ------------------------------------------------------------------------------------------- */

#define MN_POSITION_MAX 32 /* a position's bytes, its NUL included */

/* Writes into out the position after every commit this handle has made (an opaque token, e.g.
 * "16/B374D848"; "" before the first commit and on SQLite). A client that wrote through this
 * handle hands it to the handle that reads next (mn_db_read_after). Never fails on a checked
 * handle. Thread-safe. */
MN_API mn_status mn_db_position(mn_db *db, char out[MN_POSITION_MAX]);
/* From now on, the calling thread's reads through db see every commit up to `position` (a token
 * of mn_db_position, from any handle on the same database): a replica behind it is waited for,
 * up to postgres.replica_max_lag_ms, then the primary serves the read. NULL or "" clears it.
 * Errors: MN_INVALID for a token that is not a position. Per thread: other threads' reads are
 * unaffected. */
MN_API mn_status mn_db_read_after(mn_db *db, const char *position);

typedef struct mn_replica_stats {
    int64_t replicas;    /* postgres.replicas configured */
    int64_t replicas_up; /* of which reachable when last tried */
    int64_t on_replica;  /* reads a replica served */
    int64_t on_primary;  /* reads that could have gone to a replica and went to the primary */
    int64_t waited;      /* reads that waited for a replica to replay a position */
    int64_t lagging;     /* times a replica was passed over: behind by more than the bound */
    int64_t down;        /* times a replica could not be reached */
} mn_replica_stats;

/* Fills *out with what the read replicas did since the handle opened (zeros without replicas).
 * Thread-safe. Errors: MN_MISUSE. */
MN_API mn_status mn_replica_stats_get(mn_db *db, mn_replica_stats *out);

/* ---------------------------------------------------------------------------------------------
 * Long-term memory (docs/memory.md). A memory is a short text that outlives conversations: a
 * fact, preference, instruction or event, in a scope (namespace plus optional user, agent and
 * session), with metadata, provenance (the ids of the messages it came from) and time. Every
 * change makes a new version of the memory (same id, version + 1) and closes the previous one:
 *   valid_from / valid_to   when the fact was true in the world (valid_to 0: still true);
 *   recorded_at             when this version was written;
 *   superseded_at           when a later version replaced this one (0: the current version).
 * A version's validity ends where the next version's begins, so "as of T" (what was true at T)
 * is every version with valid_from <= T < valid_to. A delete closes the fact (a version with
 * valid_to set); mn_memory_forget removes the memory and all its versions for real. Pinned
 * memories are memory blocks, always placed in a context built with memories, each within its
 * token_cap.
 */
#define MN_MEMORY_MAX_TEXT 8192       /* bytes of a memory's text */
#define MN_MEMORY_MAX_METADATA 16384  /* bytes of its metadata JSON */
#define MN_MEMORY_MAX_SOURCES 256     /* message ids in its provenance */
#define MN_MEMORY_MAX_TOKEN_CAP 100000 /* a memory block's token cap */

typedef struct mn_memory {
    char *id;           /* UUIDv7, the same for every version */
    int64_t version;    /* 1, 2, … */
    char *text;
    char *kind;         /* "fact", "preference", "instruction", "event" or another [a-z_] word */
    char *ns;           /* namespace ("default") */
    char *user_id, *agent_id, *session_id; /* NULL when unset */
    char *metadata;     /* JSON object text, "{}" when none */
    int64_t *sources;   /* provenance: message ids */
    size_t n_sources;
    int pinned;         /* 1: a memory block */
    int64_t token_cap;  /* a block's cap in tokens (0: none) */
    int64_t valid_from, valid_to, recorded_at, superseded_at; /* ms; 0 valid_to / superseded_at: open */
    char *change;       /* what made this version: "add", "update", "delete" */
    char *actor;        /* who: "api", "cli", "mcp", "mem0", "extractor:offline", "extractor:llm", … */
    char *reason;       /* why (NULL when not given) */
    double score;       /* search: what the list is ordered by (larger is better); else 0 */
} mn_memory;

typedef struct mn_memories {
    size_t count;
    mn_memory *items;  /* items[i]: same-header callers only; mn_memories_at is ABI-safe */
    size_t item_size;  /* sizeof(mn_memory) in the library that made the list */
} mn_memories;
/* Item i, or NULL past the end (or for a NULL list). Borrowed from the list. ABI-safe indexing. */
MN_API const mn_memory *mn_memories_at(const mn_memories *list, size_t i);

/* What to write. Add: text is required; NULL kind is "fact", NULL ns "default", valid_from 0 is
 * now, valid_to 0 is open. Update: NULL/negative fields keep the current value (pinned and
 * token_cap -1; valid_from 0 is now); the scope cannot change (set ns, user_id, agent_id and
 * session_id to NULL). */
typedef struct mn_memory_in {
    size_t size; /* sizeof(mn_memory_in) */
    const char *text;
    const char *kind;
    const char *ns, *user_id, *agent_id, *session_id;
    const char *metadata;     /* a JSON object */
    const int64_t *sources;   /* message ids: messages of the memory's namespace (add, update) */
    size_t n_sources;
    int pinned;               /* add: 0/1; update: -1 keeps */
    int64_t token_cap;        /* add: 0..MN_MEMORY_MAX_TOKEN_CAP; update: -1 keeps */
    int64_t valid_from, valid_to;
    const char *actor, *reason; /* NULL actor: "api" */
} mn_memory_in;
#define MN_MEMORY_IN_INIT {sizeof(mn_memory_in), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, -1, -1, 0, 0, NULL, NULL}

/* Which memories to read. Scope fields NULL: any. */
typedef struct mn_memory_query {
    size_t size; /* sizeof(mn_memory_query) */
    const char *ns, *user_id, *agent_id, *session_id;
    const char *kind;
    const char *metadata; /* a JSON object of scalars: each key must equal */
    int64_t as_of;        /* 0: what is true now (current versions, not closed); else at that moment */
    int include_closed;   /* 1 (with as_of 0): current versions even when closed (deleted) */
    int pinned;           /* -1: any; 0: not blocks; 1: blocks only */
    size_t limit;         /* 1..1000 (0: 100; search: 10) */
    size_t offset;        /* list only */
} mn_memory_query;
#define MN_MEMORY_QUERY_INIT {sizeof(mn_memory_query), NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, -1, 0, 0}

/* Adds a memory; *out (may be NULL) gets it (caller frees with mn_memory_free). Refused before
 * anything is written, naming the field and the limit: empty or too long text, a bad kind,
 * metadata that is not a JSON object or too long, too many sources, a bad scope id, valid_to
 * before valid_from. Provenance names the memory's own namespace: each of `sources` must be a
 * message of a session of that namespace, and a session_id that is a session id (a UUID) a
 * session of it (expired or not); any other session_id text is a label that names no session
 * (Mem0's run_id). A message or session of another namespace is refused exactly as a missing
 * one, MN_NOTFOUND naming the field ("sources: message 12 not found in namespace 'beta'"), so
 * that a memory never points into another namespace and the refusal says nothing of it. (An
 * import restores memories as they were exported, sources and all.) Errors: MN_INVALID,
 * MN_TOOBIG, MN_NOTFOUND, MN_BUSY, MN_IO. Thread-safe. */
MN_API mn_status mn_memory_add(mn_db *db, const mn_memory_in *in, mn_memory **out);
/* The current version of memory `id` (even when closed). Errors: MN_INVALID, MN_NOTFOUND. */
MN_API mn_status mn_memory_get(mn_db *db, const char *id, mn_memory **out);
/* mn_memory_get for a caller bound to namespace ns (NULL: any): a memory of another
 * namespace is MN_NOTFOUND with the text of a missing one, whatever its state, checked before
 * anything else is told (closed or not). Front ends with namespace-bound callers use this, as
 * mn_session_get_in for sessions. Caller frees *out with mn_memory_free; NULL on failure.
 * Errors: MN_INVALID (not a UUID), MN_NOTFOUND, MN_BUSY, MN_IO. Thread-safe. */
MN_API mn_status mn_memory_get_in(mn_db *db, const char *ns, const char *id, mn_memory **out);
/* Writes a new version of memory `id` with the changed fields; the previous version is closed
 * (its validity ends at the new valid_from; superseded_at is now). A correction of what was
 * never true passes valid_from = the old valid_from. New sources must be messages of the
 * memory's namespace, as for add. Errors: MN_NOTFOUND (the memory, or a source, as add),
 * MN_INVALID (as add; or the memory is closed), MN_CONFLICT (another writer made a version
 * first). */
MN_API mn_status mn_memory_update(mn_db *db, const char *id, const mn_memory_in *changes, mn_memory **out);
/* Closes the fact: a new version with valid_to = at (0: now) and change "delete". actor and
 * reason may be NULL. Errors: MN_NOTFOUND, MN_INVALID (already closed). */
MN_API mn_status mn_memory_delete(mn_db *db, const char *id, int64_t at, const char *actor, const char *reason);
/* Removes memory `id`, every version, its index entries and vectors, for real (erasure).
 * Errors: MN_NOTFOUND. */
MN_API mn_status mn_memory_forget(mn_db *db, const char *id);
/* Every version of memory `id`, oldest first. Errors: MN_NOTFOUND. */
MN_API mn_status mn_memory_history(mn_db *db, const char *id, mn_memories **out);
/* Memories matching q (NULL: every live memory), newest recorded first. */
MN_API mn_status mn_memory_list(mn_db *db, const mn_memory_query *q, mn_memories **out);
/* Memories matching q ranked against `query`: keyword (FTS5 / tsvector BM25), semantic (cosine
 * over the configured embedder's vectors, exact: never fewer hits than match) or hybrid (RRF).
 * AUTO is hybrid with an embedder, else keyword. Errors as mn_search. */
MN_API mn_status mn_memory_search(mn_db *db, const char *query, mn_search_mode mode, const mn_memory_query *q,
                                  mn_memories **out);
/* What an extraction run did. */
typedef struct mn_extract_stats {
    int64_t messages;   /* user messages read */
    int64_t candidates; /* statements the extractor proposed */
    int64_t added, updated, unchanged;
    int64_t invalidated; /* llm: memories closed because they stopped being true */
    int64_t rejected;    /* llm: malformed answers (nothing changed; a session event each) */
} mn_extract_stats;
/* Extracts memories from session_id's messages not extracted before (a per-session watermark:
 * re-running over the same turns changes nothing) with `extractor` ("offline", or NULL for the
 * configured memory.extract, offline when that is off). The offline extractor takes explicit
 * statements only (docs/memory.md); a keyed fact ("my city is …") said again with another value
 * updates the memory, valid from when it was said. Memories go in the session's namespace and
 * memory scope (metadata memory_scope: user_id, agent_id, session_id; an id it leaves unset is
 * none, not any), compared only with the live memories of exactly that scope, with the message
 * ids as provenance, actor "extractor:offline". "llm" asks the summarizer.* chat
 * endpoint for candidate facts, then per candidate (with the most similar live memories) for
 * add / update / invalidate / nothing, in strict JSON; a malformed answer changes nothing, is a
 * "memory_extract_rejected" session event, and leaves the watermark so that a later run retries.
 * stats may be NULL. Errors: MN_NOTFOUND (session), MN_INVALID (extractor), MN_UNAVAILABLE (the
 * LLM is not configured or failed). */
MN_API mn_status mn_memory_extract(mn_db *db, const char *session_id, const char *extractor, mn_extract_stats *stats);

/* Extraction jobs: mn_memory_extract on the handle's background worker (the one memory.extract
 * offline or llm uses), for a caller that answers before the extraction ends and is asked about
 * it later (docs/memory.md, "Async add and its event", Mem0's async add).
 *
 * mn_memory_extract_queue records a job — the extraction of session_id's messages up to its
 * newest one now — and queues the session on the worker, whatever memory.extract says (the
 * extractor is the one mn_memory_extract with extractor NULL uses: offline when it is off). The
 * job is kept in the database as a "memory_extract_queued" event of the session, so it outlives
 * the process (and goes when the session is deleted). data (NULL: {}) is a JSON object of at most
 * 4096 bytes the caller keeps with the job (ids, not message text). *job_id (optional) receives
 * the job's id, a UUID; caller frees it with mn_free. Errors: MN_INVALID (session id, data not a
 * JSON object), MN_TOOBIG (data), MN_NOTFOUND, MN_EXPIRED (the session), MN_NOMEM, MN_BUSY, MN_IO.
 * Thread-safe. */
MN_API mn_status mn_memory_extract_queue(mn_db *db, const char *session_id, const char *data, char **job_id);

typedef enum mn_extract_state {
    MN_EXTRACT_PENDING = 0, /* queued, not started */
    MN_EXTRACT_RUNNING = 1, /* this handle's worker is extracting the session now (or another
                               run read the job's messages and the job's own, which records its
                               end, is still queued) */
    MN_EXTRACT_DONE = 2,    /* no message of the job is left unread by extraction (the session's
                               watermark passed upto_seq, or the messages were erased) */
    MN_EXTRACT_FAILED = 3   /* a background run over the job's messages failed (the extractor is
                               unavailable, or its answer was rejected): nothing is retried, but
                               a later run that reads them (the session's next job or automatic
                               run, mn_memory_extract) makes the job DONE */
} mn_extract_state;

/* A job as mn_memory_extract_job reads it; every string is owned by the struct. */
typedef struct mn_extract_job {
    char *id;             /* the job's id (a UUID) */
    char *session_id;     /* the session it extracts from, and its namespace */
    char *ns;
    char *data;           /* the caller's JSON object, "{}" when none was given */
    char *error;          /* FAILED: why; else NULL */
    int64_t upto_seq;     /* the newest message of the session when it was queued (0: none) */
    int64_t queued_at;    /* ms since the epoch */
    int64_t finished_at;  /* DONE, FAILED: when the run that ended it did (0: not known — a run
                             that was not the job's, mn_memory_extract or an automatic one) */
    mn_extract_state state;
} mn_extract_job;

/* The job job_id, for a caller bound to namespace ns (NULL: any): a job of another namespace's
 * session is MN_NOTFOUND with the text of a missing one. A PENDING job that this handle's worker
 * does not hold — its run was lost with the process that queued it (mn_close drops the queue), or
 * a full queue dropped it — is queued again here, so that asking until the state is DONE or
 * FAILED always ends. Caller frees *out with mn_extract_job_free; NULL on failure. Errors:
 * MN_INVALID (job_id is not a UUID), MN_NOTFOUND (no such job in ns; its session was deleted;
 * or it is older than the session's newest 10000 events), MN_NOMEM, MN_BUSY, MN_IO. Thread-safe. */
MN_API mn_status mn_memory_extract_job(mn_db *db, const char *ns, const char *job_id, mn_extract_job **out);
/* Frees a job; NULL is a no-op. */
MN_API void mn_extract_job_free(mn_extract_job *job);
MN_API void mn_memory_free(mn_memory *m);
MN_API void mn_memories_free(mn_memories *list);
/* {"id","version","text","kind","namespace","user_id","agent_id","session_id","metadata",
 * "sources","pinned","token_cap","valid_from","valid_to","recorded_at","superseded_at",
 * "change","actor","reason"[, "score"]} (times in ms, 0 as null). Caller frees with mn_free. */
MN_API mn_status mn_memory_to_json(const mn_memory *m, char **out);
/* A JSON array of the above. */
MN_API mn_status mn_memories_to_json(const mn_memories *list, char **out);

/* ---------------------------------------------------------------------------------------------
 * Hand-over, edits and erasure by namespace (issue #14: every capability on every surface).
 * The server operations that call these carry the names given with each function.
 */

/* The largest `limit` mn_session_list takes; front ends use this constant for their limit. */
#define MN_SESSION_LIST_MAX 10000

/* mn_session_files with at most max_files paths (0: all): the first max_files of its list
 * (seed 002's GetRecentFiles(maxFiles)). Caller frees *out with mn_strings_free. Errors:
 * MN_INVALID (bad id), MN_NOTFOUND, MN_EXPIRED, MN_BUSY, MN_IO.
 * Server operation: "session_files" with parameter "limit" (CLI `mnemo session files ID --limit N`). */
MN_API mn_status mn_session_files_n(mn_db *db, const char *session_id, size_t max_files, mn_strings **out);

/* What one tool hands to the next about a thread (seed 002's BuildContextSummary). Allocated by
 * the library (later versions may add fields at the end); strings are owned by the record. */
typedef struct mn_thread_summary {
    const char *thread_id;  /* the session id (the continuation id) */
    const char *ns;         /* its namespace */
    const char *title;      /* NULL when none */
    const char *tool_name;  /* the tool that opened it; NULL for a plain session */
    int64_t started;        /* created_at, ms */
    int64_t updated_at;     /* last activity, ms */
    int64_t expires_at;     /* 0: never */
    int64_t turns;          /* user turns appended (mn_session.turn_count) */
    int64_t messages;       /* messages stored, active or not */
    int64_t tokens;         /* their stored tokens */
    mn_strings tools_used;  /* the distinct tool_name of its messages, in order of first use
                               (even a single one, which the text does not print) */
    mn_strings files;       /* the unique files its messages list, in mn_session_files's order
                               (at most the max_files asked for) */
    const char *text;       /* the same as Markdown, for a prompt: "## Conversation Context\n\n"
                               then "**Thread ID:** …", "**Started:** <RFC 3339 UTC>",
                               "**Tool:** …" (when set), "**Turns:** N", "**Tools Used:** a, b"
                               (only for more than one tool, as in seed 002) and
                               "**Files:** x, y" (when any), one a line */
} mn_thread_summary;

/* The hand-over summary of a session or thread: its id, start, tool, turns, tools used and
 * files (at most max_files of them, in mn_session_files's order; 0: all). Reads only; an
 * expired thread is MN_EXPIRED as everywhere. Caller frees *out with mn_thread_summary_free.
 * Errors: MN_INVALID (bad id), MN_NOTFOUND, MN_EXPIRED, MN_BUSY, MN_IO, MN_NOMEM. Thread-safe.
 * Server operation: "thread_summary_get" (REST GET /v1/sessions/{id}/handover; MCP tool
 * "thread_summary_get"; CLI `mnemo thread summary-get`). */
MN_API mn_status mn_thread_summary_get(mn_db *db, const char *session_id, size_t max_files, mn_thread_summary **out);
MN_API void mn_thread_summary_free(mn_thread_summary *s);
/* The summary as one JSON object: {"thread_id","namespace","title","tool","started",
 * "updated_at","expires_at","turns","messages","tokens","tools_used":[…],"files":[…],"text"}
 * (times in ms; title, tool and a 0 expires_at as null). Caller frees with mn_free. */
MN_API mn_status mn_thread_summary_to_json(const mn_thread_summary *s, char **out);

/* Changes one message's content, and its metadata when `metadata` is not NULL (a JSON object
 * that replaces the stored one), in place and in one transaction: the id, seq, role and time
 * stay; the token count is recounted by the handle's tokenizer and the session's token count
 * follows; the keyword index drops the old text and indexes the new one before this returns;
 * a stored vector is dropped and the message queued again for embedding (when the queue is
 * on); every summary of the session that covers the message (covers_upto >= its seq) is
 * deleted with a `summary_dropped` event (reason "message_edited"): it holds the old text; a
 * session title taken from the old text is replaced by the new text's; and a
 * `message_edited` event {"message_id","seq","tokens_before","tokens_after"} is written.
 * content is required (a message with tool calls keeps them); it obeys the append rules
 * (UTF-8, memory.max_message_bytes). *out (optional) gets the stored message after the edit;
 * caller frees with mn_message_free. Errors: MN_INVALID (bad id, message_id not positive,
 * content NULL or not UTF-8, metadata not a JSON object), MN_TOOBIG, MN_NOTFOUND (no such
 * session, or no such message in it), MN_EXPIRED, MN_BUSY, MN_IO.
 * Server operation: "message_edit" (REST PATCH /v1/sessions/{id}/messages/{message_id}; CLI
 * `mnemo message edit`). */
MN_API mn_status mn_message_edit(mn_db *db, const char *session_id, int64_t message_id, const char *content,
                                 const char *metadata, mn_message **out);

/* What mn_namespace_forget removed. */
typedef struct mn_forget_stats {
    int64_t sessions; /* sessions erased, with their messages, summaries, events, state, file
                         records, vectors and offloaded tool outputs */
    int64_t memories; /* long-term memories erased, every version */
} mn_forget_stats;

/* Erases everything of namespace ns, for real (docs/erasure.md): every session as
 * mn_session_delete erases one, expired threads included, and every long-term memory of the
 * namespace as mn_memory_forget erases one. It runs as a sequence of those erasures, not as one
 * transaction: when it fails part-way (MN_BUSY, MN_IO) what was erased stays erased and running
 * it again finishes the job. A namespace with nothing in it is not an error (counts 0). stats
 * may be NULL. Errors: MN_INVALID (ns NULL or not a namespace), MN_BUSY, MN_IO.
 * Server operation: "namespace_forget" (REST DELETE /v1/namespaces/{ns}; CLI
 * `mnemo namespace forget NS --yes`). */
MN_API mn_status mn_namespace_forget(mn_db *db, const char *ns, mn_forget_stats *stats);

/* Erases, for real, the messages of session `session_id` that no live memory of the
 * session's namespace names as a source in any of its versions (a memory is live while its
 * current version is not closed): with memory_id, only the messages that memory names (in any
 * version) — the raw text it came from, once it is no longer true — else (NULL) every message
 * of the session. Each goes as mn_message_delete erases one (keyword index, vector, offloaded
 * output, the summaries that cover it; docs/erasure.md), expired session or not. When
 * memory_id is NULL and no message is kept, the session goes with them, as mn_session_delete
 * erases one (one erasure, not one per message), and a session made again with its id is read
 * by mn_memory_extract from its first message. Messages of other sessions are never touched,
 * whatever memory_id's sources say; a live memory of another namespace keeps nothing, and a
 * memory_id of another namespace is MN_NOTFOUND, as a missing one. What the Mem0 routes'
 * delete and delete-all call for the session that keeps a scope's messages (docs/memory.md):
 * the raw messages do not outlive the memories made from them. *erased (may be NULL) gets how many
 * were erased. Errors: MN_INVALID (an id is not a UUID), MN_NOTFOUND (no such session, or
 * memory), MN_BUSY, MN_IO; when one fails part-way, those already erased stay erased and
 * calling again finishes the job. Thread-safe. */
MN_API mn_status mn_memory_erase_sources(mn_db *db, const char *session_id, const char *memory_id, int64_t *erased);

/* ---- Graph checkpoints (docs/checkpoints.md) ------------------------------------------------
 * The state a graph runtime (LangGraph) saves after each step, kept per session: a thread is a
 * session, named by its id or its key (mn_session_opts.key) in a namespace. Checkpoints and
 * their pending writes are opaque to mnemo (the framework's serializer's type tag and text);
 * only the metadata, a JSON object, is read, by the list filter. They go with their session:
 * mn_session_delete, export and import, mnemo migrate and the erasure functions take them too. */

typedef struct mn_checkpoint_write {
    const char *task_id;   /* 1-256 bytes */
    const char *task_path; /* NULL or "": none */
    int64_t idx;           /* its place among the task's writes; negative: a special channel (an
                              error, an interrupt), which a later write of the same idx replaces,
                              where a later write of a non-negative idx is ignored */
    const char *channel;   /* 1-256 bytes */
    const char *type;      /* the serializer's type tag, 1-64 bytes */
    const char *value;     /* the serialized value, text (base64 for bytes), up to the checkpoint limit */
} mn_checkpoint_write;

typedef struct mn_checkpoint {
    const char *thread;        /* the session's key, else its id: the thread as the caller names it */
    const char *session_id;    /* the session's UUID */
    const char *checkpoint_ns; /* "" for the root graph */
    const char *id;            /* the checkpoint id (ids sort by time: LangGraph's are UUIDv6) */
    const char *parent_id;     /* NULL: the thread's first */
    const char *type;          /* the serializer's type tag */
    const char *data;          /* the serialized checkpoint */
    const char *metadata;      /* a JSON object */
    int64_t created_at;        /* ms since the epoch */
    size_t n_writes;
    const mn_checkpoint_write *writes; /* its pending writes, by task path, task id and idx */
} mn_checkpoint;

typedef struct mn_checkpoints {
    size_t count;
    mn_checkpoint *items; /* items[i]: same-header callers only; mn_checkpoints_at is ABI-safe */
    size_t item_size;     /* sizeof(mn_checkpoint) in the library that made the list */
} mn_checkpoints;
/* Item i of the list, or NULL past its end (or for a NULL list). Borrowed from the list. */
MN_API const mn_checkpoint *mn_checkpoints_at(const mn_checkpoints *list, size_t i);
/* Frees a list from mn_checkpoint_get or mn_checkpoint_list; NULL is a no-op. */
MN_API void mn_checkpoints_free(mn_checkpoints *list);

typedef struct mn_checkpoint_in {
    size_t size;               /* sizeof(mn_checkpoint_in) */
    const char *ns;            /* namespace; NULL: "default" */
    const char *thread;        /* a session id or key; a key (or UUID) naming nothing makes the session */
    const char *checkpoint_ns; /* NULL: "" (the root graph); at most 256 bytes */
    const char *id;            /* 1-256 bytes without control characters */
    const char *parent_id;     /* NULL: none */
    const char *type;          /* 1-64 bytes */
    const char *data;          /* up to 16 MiB */
    const char *metadata;      /* NULL: {}; a JSON object */
} mn_checkpoint_in;
#define MN_CHECKPOINT_IN_INIT {sizeof(mn_checkpoint_in), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}

/* Saves checkpoint cp of its thread, replacing one of the same thread, checkpoint_ns and id; the
 * session is made (with cp->thread as its key, or as its id when a UUID) when nothing has that
 * name yet, as LangGraph's savers make a thread on its first checkpoint (a UUID of another
 * namespace's session looks missing: MN_NOTFOUND, nothing made). Errors: MN_INVALID
 * (a field out of its bounds, metadata not a JSON object, invalid UTF-8), MN_TOOBIG (data over
 * the limit), MN_NOTFOUND, MN_EXPIRED, MN_BUSY, MN_IO. Thread-safe. Server operation:
 * "checkpoint_put". */
MN_API mn_status mn_checkpoint_put(mn_db *db, const mn_checkpoint_in *cp);

/* Saves the pending writes of task writes[i].task_id against checkpoint checkpoint_id of thread
 * (namespace ns, NULL: "default"; checkpoint_ns NULL: ""), in one transaction. A write whose
 * (task_id, idx) is stored already is ignored when idx >= 0 and replaces it when idx < 0. The
 * writes may come before their checkpoint (LangGraph saves a step's writes as they are made and
 * its checkpoint after the previous one) and make the thread's session as mn_checkpoint_put
 * does; they show with the checkpoint once it is saved. n is 1 to 10000. Errors: MN_INVALID,
 * MN_TOOBIG, MN_NOTFOUND (another namespace's UUID), MN_EXPIRED, MN_BUSY, MN_IO. Thread-safe. Server operation: "checkpoint_put_writes". */
MN_API mn_status mn_checkpoint_put_writes(mn_db *db, const char *ns, const char *thread, const char *checkpoint_ns,
                                          const char *checkpoint_id, const mn_checkpoint_write *writes, size_t n);

typedef struct mn_checkpoint_query {
    size_t size;               /* sizeof(mn_checkpoint_query) */
    const char *ns;            /* namespace; NULL: "default" */
    const char *thread;        /* NULL: every thread of the namespace */
    const char *checkpoint_ns; /* NULL: any */
    const char *id;            /* NULL: any; else only this checkpoint */
    const char *before;        /* NULL: none; else only ids that sort below it */
    const char *filter;        /* NULL: none; else a JSON object: the metadata has each key, with an
                                  equal JSON value (at most 64 keys) */
    size_t limit;              /* 0: every match; else at most this many */
} mn_checkpoint_query;
#define MN_CHECKPOINT_QUERY_INIT {sizeof(mn_checkpoint_query), NULL, NULL, NULL, NULL, NULL, NULL, 0}

/* The checkpoints matching q, newest id first, each with its pending writes. A thread naming no
 * session has none (an empty list, not an error). Caller frees *out with mn_checkpoints_free.
 * Errors: MN_INVALID, MN_BUSY, MN_IO. Thread-safe. Server operation: "checkpoint_list". */
MN_API mn_status mn_checkpoint_list(mn_db *db, const mn_checkpoint_query *q, mn_checkpoints **out);

/* One checkpoint of thread: checkpoint id, or (id NULL) the newest of checkpoint_ns (NULL: "").
 * *out holds one item; caller frees it with mn_checkpoints_free. Errors: MN_INVALID,
 * MN_NOTFOUND (no such thread or checkpoint), MN_BUSY, MN_IO. Thread-safe. Server operation:
 * "checkpoint_get". */
MN_API mn_status mn_checkpoint_get(mn_db *db, const char *ns, const char *thread, const char *checkpoint_ns,
                                   const char *id, mn_checkpoints **out);

/* Deletes every checkpoint and pending write of thread (its messages and the session stay:
 * mn_session_delete takes all). *removed (may be NULL) gets the checkpoints deleted; a thread
 * naming nothing removes 0. Errors: MN_INVALID, MN_BUSY, MN_IO. Thread-safe. Server operation:
 * "checkpoint_delete_thread". */
MN_API mn_status mn_checkpoint_delete_thread(mn_db *db, const char *ns, const char *thread, int64_t *removed);

/* ---- Documents (docs/documents.md) ---------------------------------------------------------
 * A key-value store of JSON documents for an agent's long-term data, as LangGraph's BaseStore
 * keeps them: a document is a JSON object at a path and a key in a namespace. A path is one or
 * more labels joined by '.' ("users.alice.prefs"): each label 1 or more bytes of UTF-8 without
 * '.' or a control character, the path at most MN_DOCUMENT_MAX_PATH bytes. Searching a prefix
 * reads the documents at that path and below it. A document may carry vectors of chosen fields
 * (embedded by the database's embedder when it is written) for a search by meaning, and a
 * time to live after which it is gone. Documents belong to their namespace: mn_namespace_forget,
 * export and import, and mnemo migrate take them too. */
#define MN_DOCUMENT_MAX_PATH 1024        /* bytes of a path */
#define MN_DOCUMENT_MAX_KEY 1024         /* bytes of a key */
#define MN_DOCUMENT_MAX_VALUE (1 << 20)  /* bytes of a value's JSON text */
#define MN_DOCUMENT_MAX_FIELDS 16        /* index field paths of one document */
#define MN_DOCUMENT_MAX_TTL_MS 3153600000000LL /* 100 years */

typedef struct mn_document {
    const char *ns;       /* namespace */
    const char *path;     /* "users.alice" */
    const char *key;
    const char *value;    /* a JSON object, as written (key order kept) */
    int64_t created_at;   /* ms since the epoch: the first put of this path and key */
    int64_t updated_at;   /* ms: the last put */
    int64_t expires_at;   /* ms; 0: never */
    int scored;           /* 1: score is the document's similarity to the search's query */
    double score;         /* cosine similarity of its closest field vector, -1..1 */
} mn_document;

typedef struct mn_documents {
    size_t count;
    mn_document *items; /* items[i]: same-header callers only; mn_documents_at is ABI-safe */
    size_t item_size;   /* sizeof(mn_document) in the library that made the list */
} mn_documents;
/* Item i of the list, or NULL past its end (or for a NULL list). Borrowed from the list. */
MN_API const mn_document *mn_documents_at(const mn_documents *list, size_t i);
/* Frees a list from mn_document_get or mn_document_search; NULL is a no-op. */
MN_API void mn_documents_free(mn_documents *list);

typedef struct mn_document_in {
    size_t size;        /* sizeof(mn_document_in) */
    const char *ns;     /* namespace; NULL: "default" */
    const char *path;   /* required */
    const char *key;    /* required, 1..MN_DOCUMENT_MAX_KEY bytes without control characters */
    const char *value;  /* required, a JSON object of at most MN_DOCUMENT_MAX_VALUE bytes */
    const char *index;  /* which fields to embed: NULL or "true": the whole value; "false": none; else a JSON
                           array of 1..MN_DOCUMENT_MAX_FIELDS field paths as LangGraph writes them
                           ("title", "meta.title", "chapters[*].text", "authors[0]", "tags[-1]",
                           "{title,summary}", "$" for the whole value) */
    int64_t ttl_ms;     /* 0: never expires; else 1..MN_DOCUMENT_MAX_TTL_MS: the document is gone
                           that long after it was written (or last read, when reads refresh it) */
} mn_document_in;
#define MN_DOCUMENT_IN_INIT {sizeof(mn_document_in), NULL, NULL, NULL, NULL, NULL, 0}

/* Writes document (path, key) of namespace in->ns, replacing the one there (its created_at
 * stays). With an embedder configured (embedder.name not "none") and an index other than
 * "false", the text at each index field path is embedded and stored with the document; a path
 * that finds no text adds no vector. *out (may be NULL) gets the stored document; caller frees it
 * with mn_documents_free. Errors: MN_INVALID (a field out of its bounds, value not a JSON object,
 * a bad index), MN_TOOBIG (value over the limit), MN_UNAVAILABLE (the embedder failed: nothing
 * written), MN_BUSY, MN_IO. Thread-safe. Server operation: "document_put". */
MN_API mn_status mn_document_put(mn_db *db, const mn_document_in *in, mn_documents **out);

/* Document (path, key) of namespace ns (NULL: "default") when it is there and has not expired;
 * with refresh_ttl 1, a document with a time to live starts it again. *out holds one item;
 * caller frees it with mn_documents_free. Errors: MN_INVALID, MN_NOTFOUND, MN_BUSY, MN_IO.
 * Thread-safe. Server operation: "document_get". */
MN_API mn_status mn_document_get(mn_db *db, const char *ns, const char *path, const char *key, int refresh_ttl,
                                 mn_documents **out);

/* Deletes document (path, key) of namespace ns (NULL: "default"); *deleted (may be NULL) gets 1,
 * or 0 when there was none (not an error). Errors: MN_INVALID, MN_BUSY, MN_IO. Thread-safe.
 * Server operation: "document_delete". */
MN_API mn_status mn_document_delete(mn_db *db, const char *ns, const char *path, const char *key, int64_t *deleted);

typedef struct mn_document_query {
    size_t size;        /* sizeof(mn_document_query) */
    const char *ns;     /* namespace; NULL: "default" */
    const char *prefix; /* NULL or "": every path; else this path and the paths below it */
    const char *filter; /* NULL: none; else a JSON object of at most 64 value keys, each mapped to
                           the JSON value it must equal or to an object of operators: $eq, $ne,
                           $gt, $gte, $lt, $lte (numbers, or strings by byte order), $in, $nin
                           (an array of values) */
    const char *query;  /* NULL: newest updated first; else ranked by meaning against it, the
                           documents without a vector of the embedder's size after the others */
    size_t limit;       /* 1..1000; 0: 10 */
    size_t offset;      /* 0..100000 */
    int refresh_ttl;    /* 1: the documents returned that have a time to live start it again */
} mn_document_query;
#define MN_DOCUMENT_QUERY_INIT {sizeof(mn_document_query), NULL, NULL, NULL, NULL, 0, 0, 1}

/* The documents matching q that have not expired, a page of them. Errors: MN_INVALID (bad
 * prefix, filter or bounds), MN_UNAVAILABLE (a query with no embedder configured, or the
 * embedder failed), MN_BUSY, MN_IO. Caller frees *out with mn_documents_free. Thread-safe.
 * Server operation: "document_search". */
MN_API mn_status mn_document_search(mn_db *db, const mn_document_query *q, mn_documents **out);

typedef struct mn_document_paths_query {
    size_t size;        /* sizeof(mn_document_paths_query) */
    const char *ns;     /* namespace; NULL: "default" */
    const char *prefix; /* NULL: any; else the paths whose first labels are these ("*": any label) */
    const char *suffix; /* NULL: any; else the paths whose last labels are these ("*": any label) */
    size_t max_depth;   /* 0: whole paths; else paths cut to their first max_depth labels (merged) */
    size_t limit;       /* 1..1000; 0: 100 */
    size_t offset;      /* 0..100000 */
} mn_document_paths_query;
#define MN_DOCUMENT_PATHS_QUERY_INIT {sizeof(mn_document_paths_query), NULL, NULL, NULL, 0, 0, 0}

/* The paths holding documents that have not expired (LangGraph's listNamespaces), matching q,
 * in byte order, a page of them. Caller frees *out with mn_strings_free. Errors: MN_INVALID,
 * MN_BUSY, MN_IO. Thread-safe. Server operation: "document_paths". */
MN_API mn_status mn_document_paths(mn_db *db, const mn_document_paths_query *q, mn_strings **out);

#ifdef __cplusplus
}
#endif
#endif /* MNEMO_H */
