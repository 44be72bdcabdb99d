/*
 * cli.h — shared pieces of the `mnemo` command: the command table, option parsing, opening the
 * database from flags/config, and output helpers. The CLI uses include/mnemo.h only.
 */
#ifndef MNEMO_CLI_H
#define MNEMO_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "mnemo.h"

enum { EXIT_USAGE = 2 };

/* One option a command accepts: "--name" with a value (takes_value) or a flag. The name is the
 * API parameter's, with `-` for `_` (tests/cli/t0110 checks it); util.c keeps the older, shorter
 * spellings still accepted (--system for --system-prompt). */
struct cli_opt {
    const char *name;
    int takes_value;
};

struct srv_op;

/* Parsed arguments of one command. */
struct cli_args {
    const char *values[24]; /* per declared option: its value, "" for a set flag, NULL if absent */
    const char *given[24];  /* per declared option: its name as typed (an older spelling, maybe;
                               it ends at '=' or NUL), for the errors to name */
    const char *pos[64];    /* positional arguments */
    int npos;
    const struct cli_opt *opts;
    const char *command;     /* the command's name */
    const struct srv_op *op; /* the operation whose declarations give the numeric options' ranges
                                (cli_command_ranges), or NULL */
};

/* Global flags, set before the command runs. */
struct cli_global {
    const char *db;
    const char *config;
    char replicas[4096]; /* --db-replica URL, each: postgres.replicas, space-separated */
};

struct cli_cmd {
    const char *name;  /* "session new", "add", … */
    const char *usage; /* the argument synopsis */
    const char *summary;
    const char *help; /* longer text: options explained */
    const struct cli_opt *opts;
    int min_pos, max_pos; /* max_pos -1: any */
    int (*run)(const struct cli_global *g, struct cli_args *a);
};

extern const struct cli_cmd cli_commands[];

/* Parses argv into a; prints a usage error and returns -1 on a bad option. */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, struct cli_args *a);
/* The value of option `name` (NULL when absent). */
const char *cli_opt(const struct cli_args *a, const char *name);
int cli_flag(const struct cli_args *a, const char *name);
/* Option `name` as the user typed it (an older spelling: "ttl" for "ttl-seconds"), for errors;
 * name itself when it was not given. buf (cap bytes) may hold the result. */
const char *cli_typed(const struct cli_args *a, const char *name, char *buf, size_t cap);
/* Numeric options. A limit is written once, in the operation table (app/server/ops.c): an option
 * whose name (`-` read as `_`) is a parameter of a->op takes that parameter's declared range with
 * cli_number, cli_fraction, cli_time_opt, cli_param_whole (and its default with cli_default); an
 * option the table does not have (--threads, --max-body) has its range at the call, with
 * cli_local_number. Either function called for the other kind of option aborts, whether or not
 * the option was given, so any test running the command finds the second copy of a range.
 * Each prints a usage error naming the option as typed and the range, and returns -1, when the
 * value is bad; leaves *out as it is when the option is absent. */
/* A whole number within the declared range of the integer parameter `name`. */
int cli_number(const struct cli_args *a, const char *name, long long *out);
/* The declared default of the integer parameter `name` (aborts when none is declared). */
long long cli_default(const struct cli_args *a, const char *name);
/* A positional argument (text, called `what` in the message: "TURNS") as the integer parameter
 * `param` of a->op. */
int cli_param_whole(const struct cli_args *a, const char *param, const char *text, const char *what, long long *out);
/* A real number within the declared range of the number parameter `name` (NaN and infinities
 * refused). */
int cli_fraction(const struct cli_args *a, const char *name, double *out);
/* A time option: ms since the epoch, or an ISO-8601 date/time in UTC (YYYY-MM-DD[THH:MM[:SS]][Z]),
 * within the declared range of the integer parameter `name`; *out 0 when absent. */
int cli_time_opt(const struct cli_args *a, const char *name, long long *out);
/* A whole number option from min to max, for an option no operation declares. */
int cli_local_number(const struct cli_args *a, const char *name, long long min, long long max, long long *out);
/* text as a whole number written plainly (srv_number_text) from min to max into *out: 0, else -1. */
int cli_whole(const char *text, long long min, long long max, long long *out);
/* Both flags x and y given: prints a usage error and returns -1 (else 0). */
int cli_contradict(const struct cli_args *a, const char *x, const char *y);

/* Loads the configuration (defaults, files, environment, flags); NULL after printing why. */
mn_config *cli_config(const struct cli_global *g);
/* Opens the database; NULL after printing why. */
mn_db *cli_open(const struct cli_global *g);

/* Prints "mnemo: <mn_errmsg()>" and returns 1. */
int cli_fail(mn_status rc);
/* Prints "mnemo: <message>" and returns 2. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reads all of stdin (or a file) into a NUL-terminated malloc'd string; NULL after printing. */
char *cli_read_all(FILE *f, const char *what, size_t *len);
/* The same for a path, "-" being standard input; NULL after printing "mnemo: cannot read PATH: …". */
char *cli_read_path(const char *path, size_t *len);
/* "2026-11-22 01:02:03" UTC. */
void cli_time(long long ms, char *out, size_t cap);
/* Now, in ms since the epoch (honours MNEMO_TEST_NOW_MS like the library). */
long long cli_now_ms(void);
/* "2h13m", "4m05s", "expired" or "-" (never expires). */
void cli_time_left(long long expires_at, long long now, char *out, size_t cap);
/* The progress line on a terminal (stderr): "label done/total". */
void cli_progress(const char *label, long long done, long long total);
/* Prints import / migrate counts as the documented JSON object, one line. */
void cli_print_import_stats_json(const mn_import_stats *st);

/* A message of a session, as a command line names it: by its position, the #N that `history`
 * and the web page show (seq; "N" or "#N"), or by --message-id, the database-wide id that only
 * JSON shows. One of seq and id is set (the other 0) until cli_message_resolve sets id. */
struct cli_msg_ref {
    long long seq, id;
};
/* Reads the position `position` (NULL: none was given) or the option --message-id into *r;
 * prints a usage error and returns EXIT_USAGE when neither, both, or a bad one was given. */
int cli_message_ref(const struct cli_args *a, const char *position, struct cli_msg_ref *r);
/* Sets r->id from the position in session_id (messages past the turn limit included): 0, or 1
 * after printing "mnemo: session ID has no message #N" (or the library's error). */
int cli_message_resolve(mn_db *db, const char *session_id, struct cli_msg_ref *r);

/* cmd_report.c: the library's JSON as text for people (`--json` prints the JSON itself). */
/* The context report: one line a part (tokens, messages kept and dropped, summary, fold, …). */
void cli_print_report_text(FILE *f, const char *report_json);
/* Warns on stderr when the report says the context is over its budget or does not fit the model
 * window, with the figures and what to change; max_tokens_flag: the --max-tokens given (0: none). */
void cli_context_warnings(const char *report_json, long long max_tokens_flag);
/* A compaction event (mn_compact) as one line on stdout. */
void cli_print_compaction_text(const char *event_json);
/* The array of mn_events_json as one line an event on stdout ("no events" when empty). */
void cli_print_events_text(const char *events_json);

/* Commands. */
int cmd_session_new(const struct cli_global *g, struct cli_args *a);
int cmd_session_list(const struct cli_global *g, struct cli_args *a);
int cmd_session_show(const struct cli_global *g, struct cli_args *a);
int cmd_session_delete(const struct cli_global *g, struct cli_args *a);
int cmd_add(const struct cli_global *g, struct cli_args *a);
int cmd_history(const struct cli_global *g, struct cli_args *a);
int cmd_context(const struct cli_global *g, struct cli_args *a);
int cmd_export(const struct cli_global *g, struct cli_args *a);
int cmd_import(const struct cli_global *g, struct cli_args *a);
int cmd_migrate(const struct cli_global *g, struct cli_args *a);
int cmd_upgrade(const struct cli_global *g, struct cli_args *a);
int cmd_backup(const struct cli_global *g, struct cli_args *a);
int cmd_prune(const struct cli_global *g, struct cli_args *a);
int cmd_stats(const struct cli_global *g, struct cli_args *a);
int cmd_config_show(const struct cli_global *g, struct cli_args *a);
int cmd_version(const struct cli_global *g, struct cli_args *a);
int cmd_tokens(const struct cli_global *g, struct cli_args *a);
int cmd_reindex(const struct cli_global *g, struct cli_args *a);
int cmd_session_fork(const struct cli_global *g, struct cli_args *a);
int cmd_session_resume(const struct cli_global *g, struct cli_args *a);
int cmd_gc(const struct cli_global *g, struct cli_args *a);
int cmd_files(const struct cli_global *g, struct cli_args *a);
int cmd_state(const struct cli_global *g, struct cli_args *a);
int cmd_demo(const struct cli_global *g, struct cli_args *a);
int cmd_pin(const struct cli_global *g, struct cli_args *a);
int cmd_unpin(const struct cli_global *g, struct cli_args *a);
int cmd_summary_show(const struct cli_global *g, struct cli_args *a);
int cmd_compact(const struct cli_global *g, struct cli_args *a);
int cmd_events(const struct cli_global *g, struct cli_args *a);
int cmd_budget(const struct cli_global *g, struct cli_args *a);
int cmd_serve(const struct cli_global *g, struct cli_args *a);
int cmd_mcp(const struct cli_global *g, struct cli_args *a);
int cmd_api(const struct cli_global *g, struct cli_args *a);
int cmd_chat(const struct cli_global *g, struct cli_args *a);
int cmd_session_clear(const struct cli_global *g, struct cli_args *a);
int cmd_session_limit(const struct cli_global *g, struct cli_args *a);
/* cmd_edit.c and cmd_handover.c (issue #14: every library capability has a command). */
int cmd_message_delete(const struct cli_global *g, struct cli_args *a);
int cmd_message_edit(const struct cli_global *g, struct cli_args *a);
int cmd_message_pin(const struct cli_global *g, struct cli_args *a);
/* Pins (pinned 1) or unpins a message for `pin`, `unpin` and `message pin` (cmd_context.c):
 * `session` (NULL: none given) and `position` (NULL: none given) or --message-id, as
 * cli_message_ref takes them; prints the result. Returns the exit status. */
int cli_pin(const struct cli_global *g, const struct cli_args *a, const char *session, const char *position,
            int pinned);
int cmd_session_update(const struct cli_global *g, struct cli_args *a);
int cmd_handover(const struct cli_global *g, struct cli_args *a);
int cmd_files_check(const struct cli_global *g, struct cli_args *a);
int cmd_namespace_forget(const struct cli_global *g, struct cli_args *a);

/* The operation table's side of the help (cmd_api.c): the API operation a command performs
 * (NULL: none), its one-line summary (the operation's when it has one) and the API line with
 * the operation's parameters under `--help`. */
const struct srv_op *cli_command_op(const struct cli_cmd *c);
/* The operation whose parameter declarations give c's numeric options their ranges: the one it
 * performs, or for a command that performs none but takes one's parameters (chat, pin), that
 * one's; NULL: none. */
const struct srv_op *cli_command_ranges(const struct cli_cmd *c);
const char *cli_command_summary(const struct cli_cmd *c);
void cli_print_command_op(const struct cli_cmd *c);
/* Runs API operation `name` on db with params (a JSON object, borrowed) exactly as REST and MCP
 * do: the same declarations check them, so errors name the same fields. 0 with *result (caller
 * json_decref's it), or 1 after printing "mnemo: <message>". For input only JSON can carry (a
 * batch of messages) and results only the operation puts in JSON (checkpoints); a command with
 * options of its own calls the library. */
struct json_t;
int cli_run_op(mn_db *db, const char *name, struct json_t *params, struct json_t **result);
int cmd_search(const struct cli_global *g, struct cli_args *a);
int cmd_embed(const struct cli_global *g, struct cli_args *a);
int cmd_reindex_embeddings(const struct cli_global *g, struct cli_args *a);
/* cmd_memory.c: long-term memories (docs/memory.md). */
int cmd_memory_add(const struct cli_global *g, struct cli_args *a);
int cmd_memory_list(const struct cli_global *g, struct cli_args *a);
int cmd_memory_show(const struct cli_global *g, struct cli_args *a);
int cmd_memory_search(const struct cli_global *g, struct cli_args *a);
int cmd_memory_history(const struct cli_global *g, struct cli_args *a);
int cmd_memory_update(const struct cli_global *g, struct cli_args *a);
int cmd_memory_delete(const struct cli_global *g, struct cli_args *a);
int cmd_memory_forget(const struct cli_global *g, struct cli_args *a);
int cmd_memory_extract(const struct cli_global *g, struct cli_args *a);
int cmd_memory_queue(const struct cli_global *g, struct cli_args *a);
int cmd_memory_job(const struct cli_global *g, struct cli_args *a);
/* op_call.c: commands that run one operation with parameters built from their options. */
/* The options a command cannot do without: a usage error naming the first one missing. */
int cli_require(const struct cli_args *a, const char *const *names);
/* params[field] = text (NULL: left out). 0, or 1 after printing. */
int cli_param_text(struct json_t *params, const char *field, const char *text);
/* params[field] = the JSON text (NULL: left out), parsed as strictly as a REST body; the operation
 * checks its type. 0, or 1 after printing (in the library's words for bad JSON). */
int cli_param_json(struct json_t *params, const char *field, const char *text);
/* Runs operation op with params (released here) on a handle of its own: 0 with *result, or 1
 * after printing. */
int cli_op_once(const struct cli_global *g, const char *op, struct json_t *params, struct json_t **result);
/* Prints v as compact JSON on a line. */
int cli_print_json(const struct json_t *v);
/* A string member of o, "" when absent. */
const char *cli_member(const struct json_t *o, const char *name);

/* cmd_checkpoint.c: graph checkpoints (docs/checkpoints.md). */
int cmd_checkpoint_put(const struct cli_global *g, struct cli_args *a);
int cmd_checkpoint_writes(const struct cli_global *g, struct cli_args *a);
int cmd_checkpoint_show(const struct cli_global *g, struct cli_args *a);
int cmd_checkpoint_list(const struct cli_global *g, struct cli_args *a);
int cmd_checkpoint_delete(const struct cli_global *g, struct cli_args *a);
/* cmd_document.c: JSON documents at a path and key (docs/documents.md). */
int cmd_document_put(const struct cli_global *g, struct cli_args *a);
int cmd_document_get(const struct cli_global *g, struct cli_args *a);
int cmd_document_delete(const struct cli_global *g, struct cli_args *a);
int cmd_document_search(const struct cli_global *g, struct cli_args *a);
int cmd_document_paths(const struct cli_global *g, struct cli_args *a);

#endif
