/*
 * main.c — the `mnemo` command: global flags, the command table with its help, dispatch.
 * Exit status: 0 success, 2 usage error, 1 any other error (one line "mnemo: …" on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* A macro's value as a string literal (help texts quote the library's limits). */
#define MN_STR_(x) #x
#define MN_STR(x) MN_STR_(x)

static const struct cli_opt o_none[] = {{NULL, 0}};
static const struct cli_opt o_session_new[] = {{"title", 1},     {"system-prompt", 1}, {"metadata", 1}, {"namespace", 1},
                                               {"id", 1},        {"tool-name", 1},   {"ttl-seconds", 1},      {"max-turns", 1},
                                               {"json", 0},      {"key", 1},         {NULL, 0}};
static const struct cli_opt o_fork[] = {{"upto-seq", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_resume[] = {{"namespace", 1}, {NULL, 0}};
static const struct cli_opt o_state[] = {{"reveal", 0}, {"history", 0}, {NULL, 0}};
static const struct cli_opt o_reveal[] = {{"reveal", 0}, {NULL, 0}};
static const struct cli_opt o_session_list[] = {
    {"limit", 1}, {"offset", 1}, {"namespace", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_json[] = {{"json", 0}, {NULL, 0}};
static const struct cli_opt o_pin[] = {{"message-id", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_gc[] = {{"vacuum", 0}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_add[] = {{"tool-calls", 1}, {"tool-call-id", 1}, {"name", 1}, {"metadata", 1},
                                       {"idempotency-key", 1}, {"create", 0},       {"files", 1}, {"model", 1},
                                       {"tool-name", 1},  {"pinned", 0},       {"json", 0},  {"messages", 1}, {NULL, 0}};
static const struct cli_opt o_history[] = {{"json", 0}, {"limit", 1}, {"after", 1}, {"all", 0}, {"tail", 0}, {NULL, 0}};
static const struct cli_opt o_context[] = {{"max-tokens", 1}, {"strategy", 1}, {"format", 1},   {"report", 0},
                                           {"model-window", 1}, {"no-fold", 0}, {"fold", 1}, {"rag", 0}, {"no-rag", 0},
                                           {"rag-top-k", 1}, {"detail", 0}, {"rag-scope", 1}, {"rag-min-similarity", 1},
                                           {"memories", 0}, {"no-memories", 0}, {"memories-top-k", 1}, {"json", 0},
                                           {NULL, 0}};
static const struct cli_opt o_compact[] = {{"json", 0}, {"instructions", 1}, {NULL, 0}};
static const struct cli_opt o_events[] = {{"limit", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_export[] = {{"out", 1}, {NULL, 0}};
static const struct cli_opt o_import[] = {{"json", 0}, {NULL, 0}};
static const struct cli_opt o_tokens[] = {{"encoding", 1}, {"ids", 0}, {"json", 0}, {"threads", 1}, {NULL, 0}};
static const struct cli_opt o_reindex[] = {{"tokens", 0}, {"json", 0}, {"embeddings", 0}, {"threads", 1}, {NULL, 0}};
static const struct cli_opt o_search[] = {{"mode", 1},  {"session-id", 1}, {"namespace", 1}, {"top-k", 1},
                                          {"role", 1},  {"min-similarity", 1}, {"embed-first", 0},
                                          {"json", 0}, {"report", 0}, {"since", 1}, {"until", 1},
                                          {"metadata", 1}, {NULL, 0}};
static const struct cli_opt o_files[] = {{"limit", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_message_delete[] = {{"message-id", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_message_edit[] = {{"metadata", 1}, {"message-id", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_message_pin[] = {{"unpin", 0}, {"message-id", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_session_update[] = {{"title", 1}, {"metadata", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_handover[] = {{"files", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_forget[] = {{"yes", 0}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_embed[] = {{"backfill", 0}, {"pending", 0}, {"json", 0}, {"threads", 1}, {NULL, 0}};
static const struct cli_opt o_prune[] = {{"days", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_migrate[] = {{"from", 1}, {"to", 1}, {"append", 0}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_upgrade[] = {{"json", 0}, {NULL, 0}};
static const struct cli_opt o_chat[] = {{"strategy", 1}, {"max-tokens", 1},    {"rag", 0},
                                        {"rag-scope", 1}, {"system-prompt", 1}, {"resume", 0}, {NULL, 0}};
static const struct cli_opt o_clear[] = {{"undo", 0}, {"state", 0}, {"json", 0}, {NULL, 0}};
/* memory (cmd_memory.c) */
static const struct cli_opt o_mem_add[] = {{"kind", 1},   {"namespace", 1},  {"user-id", 1},      {"agent-id", 1},
                                           {"session-id", 1}, {"metadata", 1},  {"sources", 1},    {"pinned", 0},
                                           {"token-cap", 1}, {"valid-from", 1}, {"valid-to", 1}, {"reason", 1},
                                           {"json", 0},   {NULL, 0}};
static const struct cli_opt o_mem_list[] = {{"namespace", 1}, {"user-id", 1}, {"agent-id", 1}, {"session-id", 1},
                                            {"kind", 1},      {"metadata", 1}, {"as-of", 1}, {"include-closed", 0},
                                            {"pinned", 0},    {"unpinned", 0}, {"limit", 1}, {"offset", 1}, {"json", 0},
                                            {NULL, 0}};
static const struct cli_opt o_mem_search[] = {{"namespace", 1}, {"user-id", 1},  {"agent-id", 1},  {"session-id", 1},
                                              {"kind", 1},      {"metadata", 1}, {"as-of", 1}, {"include-closed", 0},
                                              {"pinned", 0},    {"unpinned", 0}, {"limit", 1}, {"mode", 1},  {"json", 0},
                                              {NULL, 0}};
static const struct cli_opt o_mem_update[] = {{"text", 1},      {"kind", 1},     {"metadata", 1}, {"sources", 1},
                                              {"valid-from", 1}, {"valid-to", 1}, {"token-cap", 1}, {"pinned", 0},
                                              {"unpinned", 0},  {"reason", 1},   {"json", 0},     {NULL, 0}};
static const struct cli_opt o_mem_delete[] = {{"at", 1}, {"reason", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_mem_extract[] = {{"extractor", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_mem_queue[] = {{"data", 1}, {"json", 0}, {NULL, 0}};
/* checkpoint (cmd_checkpoint.c) */
static const struct cli_opt o_cp_put[] = {{"checkpoint-id", 1}, {"type", 1},          {"checkpoint", 1},
                                          {"parent-checkpoint-id", 1}, {"checkpoint-ns", 1}, {"metadata", 1},
                                          {"namespace", 1},     {"json", 0},          {NULL, 0}};
static const struct cli_opt o_cp_writes[] = {{"checkpoint-id", 1}, {"writes", 1}, {"checkpoint-ns", 1},
                                             {"namespace", 1},     {"json", 0},   {NULL, 0}};
static const struct cli_opt o_cp_show[] = {{"checkpoint-id", 1}, {"checkpoint-ns", 1}, {"namespace", 1},
                                           {"json", 0},          {NULL, 0}};
static const struct cli_opt o_cp_list[] = {{"checkpoint-ns", 1}, {"checkpoint-id", 1}, {"before", 1}, {"filter", 1},
                                           {"limit", 1},         {"namespace", 1},     {"json", 0},   {NULL, 0}};
static const struct cli_opt o_cp_delete[] = {{"namespace", 1}, {"json", 0}, {NULL, 0}};
/* document (cmd_document.c) */
static const struct cli_opt o_doc_put[] = {{"value", 1},     {"index", 1}, {"ttl-ms", 1},
                                           {"namespace", 1}, {"json", 0},  {NULL, 0}};
static const struct cli_opt o_doc_get[] = {{"no-refresh-ttl", 0}, {"namespace", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_doc_delete[] = {{"namespace", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_doc_search[] = {{"filter", 1}, {"query", 1},          {"limit", 1},     {"offset", 1},
                                              {"no-refresh-ttl", 0}, {"namespace", 1}, {"json", 0}, {NULL, 0}};
static const struct cli_opt o_doc_paths[] = {{"prefix", 1}, {"suffix", 1},    {"max-depth", 1}, {"limit", 1},
                                             {"offset", 1}, {"namespace", 1}, {"json", 0},      {NULL, 0}};
static const struct cli_opt o_serve[] = {{"listen", 1},        {"api-key-env", 1}, {"key-namespace", 1},
                                         {"allow-origin", 1},  {"max-body", 1},    {"verbose", 0},
                                         {"log-format", 1},    {NULL, 0}};

/* The scope and filters memory list and memory search share (the API's memory filters). */
#define MEMORY_FILTERS                                                                                          \
    "--namespace NS] [--user-id U] [--agent-id A] [--session-id ID] [--kind K] [--metadata JSON]\n"             \
    "       [--as-of T] [--include-closed] [--pinned | --unpinned] [--limit N"
#define MEMORY_FILTERS_HELP                                                                                     \
    "  --namespace NS, --user-id U, --agent-id A, --session-id ID   only memories of this scope (also\n"          \
    "                    --user, --agent, --session)\n"                                                        \
    "  --kind K          only this kind\n"                                                                      \
    "  --as-of T         what was true at T (ms since the epoch or YYYY-MM-DD[THH:MM[:SS]])\n"                 \
    "  --include-closed  also closed (deleted) memories (also --all)\n"                                        \
    "  --pinned          only memory blocks (--unpinned: none of them)\n"                                        \
    "  --metadata JSON   an object of scalars each memory's metadata must match\n"

#define STATE_REVEAL_HELP "  --reveal          show sensitive params (state.sensitive_params) instead of [redacted]\n"

/* How a command takes a message of a session: its position, or its id. */
#define MESSAGE_REF_HELP                                                                                        \
    "  N                 the message's position in session ID: the #N of mnemo history (also written #N)\n"   \
    "  --message-id MSG_ID  the message by its database-wide id instead (history --json shows it; it must\n"   \
    "                    be ID's)\n"

const struct cli_cmd cli_commands[] = {
    {"session create",
     "[--title T] [--system-prompt TEXT] [--metadata JSON] [--namespace NS] [--id UUID]\n"
     "       [--key KEY] [--tool-name NAME] [--ttl-seconds S] [--max-turns N] [--json]",
     "create a session and print its id",
     "  --title T         title (default: the first user message, cut at 100 characters)\n"
     "  --system-prompt TEXT  system prompt, always part of the context (also --system)\n"
     "  --metadata JSON   a JSON object kept with the session\n"
     "  --namespace NS    tenant or user the session belongs to (default: default)\n"
     "  --id UUID         use this id instead of a new UUIDv7\n"
     "  --key KEY         your own name for it (any string but a UUID, at most 256 bytes), unique in\n"
     "                    its namespace: every command then takes KEY where the id goes (keys of\n"
     "                    the default namespace)\n"
     "  --tool-name NAME  the tool that opened it: makes it a thread, with threads.ttl_seconds (3 h)\n"
     "                    and threads.max_turns (50) unless --ttl-seconds / --max-turns say otherwise\n"
     "                    (also --tool)\n"
     "  --ttl-seconds S   expire after S seconds idle (0 or -1: never); appends extend it (also --ttl)\n"
     "  --max-turns N     keep the newest N turns active (0 or -1: no limit); older ones leave the\n"
     "                    active history (kept, or deleted with threads.trim: delete)\n"
     "  --json            print the stored session as JSON\n",
     o_session_new, 0, 0, cmd_session_new},
    {"session list", "[--limit N] [--offset N] [--namespace NS] [--json]", "list sessions, most recently updated first",
     "  --limit N         at most N sessions (default 20, at most " MN_STR(MN_SESSION_LIST_MAX) ")\n"
     "  --offset N        skip the first N\n"
     "  --namespace NS    only this namespace\n"
     "  --json            a JSON array of session objects (docs/cli.md)\n",
     o_session_list, 0, 0, cmd_session_list},
    {"session get", "ID [--json]", "show one session", "  --json            a JSON object (docs/cli.md)\n", o_json, 1, 1,
     cmd_session_show},
    {"session fork", "ID [--upto-seq SEQ] [--json]", "copy a session's history (up to a message) into a new session",
     "  --upto-seq SEQ    copy messages up to sequence number SEQ (default: all; also --upto)\n"
     "  --json            print the new session as JSON\n",
     o_fork, 1, 1, cmd_session_fork},
    {"session resume", "[ID] [--namespace NS]",
     "print the id of the session to continue: ID (an error when expired), else the newest live one",
     "  --namespace NS    only sessions of this namespace\n", o_resume, 0, 1, cmd_session_resume},
    {"session clear", "ID [--undo] [--state] [--json]",
     "clear the active history: kept and searchable, out of the context (seed 000's /clear)",
     "  --undo            bring the cleared messages back (those the turn limit keeps)\n"
     "  --state           also reset the session state (seed 003's clear())\n"
     "  --json            print {\"cleared\": N} or {\"restored\": N}\n",
     o_clear, 1, 1, cmd_session_clear},
    {"session set-max-turns", "ID TURNS [--json]", "change a session's turn limit now (0: none; seed 003's prune)",
     "  TURNS             keep the newest TURNS turns active (0 to 1000000; every message is a turn, a tool\n"
     "                    call with its results one); older messages leave the\n"
     "                    active history at once (deleted with threads.trim: delete)\n"
     "  --json            print the session as JSON\n",
     o_json, 2, 2, cmd_session_limit},
    {"chat", "[SESSION | --resume] [--system TEXT] [--strategy S] [--max-tokens N] [--rag] [--rag-scope session|all]",
     "chat with a model, mnemo as its memory (docs/chat.md)",
     "  SESSION           continue this session (default: a new one, created with your first message)\n"
     "  --resume          continue the most recently active live session\n"
     "  --system TEXT     the system prompt of a new session (default: chat.system_prompt; also\n"
     "                    --system-prompt)\n"
     "  --strategy S      window, summary, chunked or hybrid (default: memory.strategy)\n"
     "  --max-tokens N    the context budget (default: memory.max_history_tokens)\n"
     "  --rag             inject relevant past messages into each request\n"
     "  --rag-scope S     retrieve from this session or all (its namespace); default: memory.rag.scope\n"
     "  The model: chat.model (else summarizer.model) at chat.base_url, chat.protocol openai or\n"
     "  ollama (chat.base_url empty: the summarizer.* server). Type /help inside for the commands.\n",
     o_chat, 0, 1, cmd_chat},
    {"session delete", "ID [--json]", "delete a session and all its messages",
     "  --json            print {\"deleted\": ID}\n", o_json, 1, 1, cmd_session_delete},
    {"session update", "ID [--title T] [--metadata JSON] [--json]", "change a session's title and/or metadata",
     "  --title T         the new title\n"
     "  --metadata JSON   a JSON object that replaces the stored metadata\n"
     "  --json            print the session as JSON\n",
     o_session_update, 1, 1, cmd_session_update},
    {"message delete", "ID N|--message-id MSG_ID [--json]",
     "delete one message of a session, for real (docs/erasure.md)",
     MESSAGE_REF_HELP
     "  Summaries that folded it go too; the next context folds again from what remains.\n"
     "  --json            print {\"deleted\": MSG_ID}\n",
     o_message_delete, 1, 2, cmd_message_delete},
    {"message edit", "ID N|--message-id MSG_ID TEXT|- [--metadata JSON] [--json]",
     "change a message's content (and metadata) in place; tokens and the search index follow",
     MESSAGE_REF_HELP
     "  TEXT              the new content; - reads it from standard input\n"
     "  --metadata JSON   a JSON object that replaces the message's metadata\n"
     "  Its id, seq, role and time stay; summaries that folded the old text are dropped and a\n"
     "  message_edited event is written (mnemo events).\n"
     "  --json            print the edited message as JSON\n",
     o_message_edit, 2, 3, cmd_message_edit},
    {"message pin", "ID N|--message-id MSG_ID [--unpin] [--json]",
     "pin one message of a session: the hybrid strategy keeps it verbatim whatever its age",
     MESSAGE_REF_HELP
     "  --unpin           unpin it instead\n"
     "  --json            print {\"id\": MSG_ID, \"pinned\": true|false}\n",
     o_message_pin, 1, 2, cmd_message_pin},
    {"append",
     "ID ROLE [TEXT|-] [--tool-calls JSON] [--tool-call-id ID] [--name N] [--metadata JSON] [--files JSON]\n"
     "       [--model M] [--tool-name NAME] [--pinned] [--idempotency-key K] [--create] [--json]\n"
     "       mnemo append ID --messages FILE|- [--create] [--json]",
     "append a message (one durable transaction) and print its position #N in the session",
     "  ROLE              system, user, assistant or tool\n"
     "  TEXT              the content; - reads it from standard input\n"
     "  --tool-calls JSON assistant tool calls, OpenAI form: [{\"id\",\"type\":\"function\",\"function\":{\"name\",\"arguments\"}}]\n"
     "  --tool-call-id ID the call a tool message answers (required for role tool)\n"
     "  --name N          participant or tool name\n"
     "  --metadata JSON   a JSON object kept with the message\n"
     "  --files JSON      a JSON array of file paths the message refers to\n"
     "  --model M         the model that produced the message\n"
     "  --tool-name NAME  the tool (agent CLI) that produced the message (also --tool)\n"
     "  --pinned          pin the message (also --pin)\n"
     "  --idempotency-key K  a retry with the same key stores nothing new (also --key)\n"
     "  --messages FILE   a batch: a JSON array of message objects ({\"role\", \"content\", \"tool_calls\",\n"
     "                    \"tool_call_id\", \"name\", \"metadata\", \"files\", \"model\", \"tool_name\",\n"
     "                    \"pinned\", \"idempotency_key\"}), all stored in one transaction or none; - reads\n"
     "                    standard input; prints one position a line\n"
     "  --create          create the session when it does not exist (ID must be a UUID)\n"
     "  --json            print the stored message as JSON, its id included (with --messages: a JSON array)\n",
     o_add, 1, 3, cmd_add},
    {"history", "ID [--json] [--limit N] [--after SEQ [--tail]] [--all]", "print a session's messages, oldest to newest",
     "  --limit N         at most N messages: the newest N, or with --after the first N after SEQ\n"
     "  --all             also messages past the turn limit, kept for search (\"active\": false)\n"
     "  --after SEQ       only messages after sequence number SEQ; the next page of a reading from the\n"
     "                    start is --after <the last seq shown> --limit N\n"
     "  --tail            with --after: the newest N after SEQ instead of the first N (without --after\n"
     "                    --limit always takes the newest)\n"
     "  --json            a JSON array of message objects (docs/cli.md)\n",
     o_history, 1, 1, cmd_history},
    {"context build",
     "ID [--max-tokens N] [--strategy window|summary|chunked|hybrid] [--format openai|anthropic|text]\n"
     "       [--model-window N] [--fold background|sync|off] [--no-fold] [--report [--json]] [--detail]\n"
     "       [--rag|--no-rag [--rag-top-k N] [--rag-scope session|all]\n"
     "       [--rag-min-similarity X]] [--memories|--no-memories [--memories-top-k N]]",
     "print the context for the next model call",
     "  --max-tokens N    token budget (default: memory.max_history_tokens, or with --model-window\n"
     "                    the history share of the window: see mnemo budget)\n"
     "  --strategy S      window, summary, chunked or hybrid (default: memory.strategy; docs/context.md)\n"
     "  --model-window N  the model's context window: pre-flight check in the report, token trigger\n"
     "  --fold M          a due fold: background (default: queued, or run here within\n"
     "                    context.fold_timeout_ms), sync (run it first, however long), off\n"
     "  --no-fold         the same as --fold off (use the stored summary as it is)\n"
     "  --format F        openai (JSON messages), anthropic ({system, messages}) or text\n"
     "  --report          after the context, the report of what was kept and dropped, as text\n"
     "  --json            with --report: {\"messages\": …, \"report\": {…}} (--format text: the text, then\n"
     "                    the report's JSON)\n"
     "  --detail          the report lists each message's fate (kept, trimmed, offloaded, dropped and why)\n"
     "  --rag             prepend relevant past messages to the last user message, within the budget\n"
     "                    (default: memory.rag.enabled)\n"
     "  --no-rag          do not, whatever memory.rag.enabled says\n"
     "  --rag-top-k N     at most N of them (default: memory.rag.top_k, 40)\n"
     "  --rag-scope S     session (default) or all (the session's namespace)\n"
     "  --rag-min-similarity X  semantic threshold (default 0.7; 0 or less: none)\n"
     "  --memories        long-term memories after the system prompt: the memory blocks and the\n"
     "                    memories relevant to the last user message (default: memory.context.enabled)\n"
     "  --no-memories     do not, whatever memory.context.enabled says\n"
     "  --memories-top-k N  at most N relevant memories (default memory.context.top_k, 5; at most 50)\n"
     "  A context over its budget, or too big for the model window, is printed with a warning on stderr.\n",
     o_context, 1, 1, cmd_context},
    {"pin", "ID N | [ID] --message-id MSG_ID [--json]",
     "pin a message: the hybrid strategy keeps it verbatim whatever its age",
     "  ID N              session ID's message #N (the #N of mnemo history; also written #N)\n"
     "  --message-id MSG_ID  the message by its database-wide id (history --json shows it); with ID it\n"
     "                    must be ID's\n"
     "  --json            print {\"id\": MSG_ID, \"pinned\": true}\n",
     o_pin, 0, 2, cmd_pin},
    {"unpin", "ID N | [ID] --message-id MSG_ID [--json]", "unpin a message", "  as pin\n", o_pin, 0, 2, cmd_unpin},
    {"summary get", "ID [--json]", "print the session's global summary (what it covers, by whom)",
     "  --json            a JSON object with the text\n", o_json, 1, 1, cmd_summary_show},
    {"compact", "ID [--instructions TEXT] [--json]",
     "fold the session now: all but the last context.tail_turns turns into its summary",
     "  prints what was folded (messages, up to which #N, tokens before and after, summariser)\n"
     "  --instructions T  what the summary must keep (like /compact <focus>), for the summariser\n"
     "  --json            print the compaction event as JSON (docs/context.md)\n",
     o_compact, 1, 1, cmd_compact},
    {"events", "ID [--limit N] [--json]", "print the session's events (compactions, failures), newest first",
     "  --limit N         at most N events (default 50)\n"
     "  --json            a JSON array of {\"id\", \"kind\", \"created_at\", \"data\"}\n", o_events, 1, 1, cmd_events},
    {"budget", "WINDOW [--json]", "split a model window: response, history and files shares",
     "  response = min(window/4, 16000), history = min(rest/3, 50000), files = the rest\n", o_json, 1, 1,
     cmd_budget},
    {"file should-include", "ID PATH [FILE|-] [--json]",
     "whether to send a file's content in this session: include the first time, skip after (seed 002)",
     "  PATH              the file's path as the model sees it\n"
     "  FILE              where to read the content (default: PATH; - reads standard input)\n"
     "  prints include or skip; the same content under the same path is sent once, under another\n"
     "  path it is included. The pair is recorded.\n"
     "  --json            print {\"include\": true|false}\n",
     o_json, 2, 3, cmd_files_check},
    {"session files", "ID [--limit N] [--json]", "the unique file paths a session's messages list, newest first",
     "  --limit N         only the newest N (seed 002's GetRecentFiles(maxFiles))\n"
     "  --json            a JSON array of paths\n", o_files, 1, 1,
     cmd_files},
    {"thread summary-get", "ID [--files N] [--json]",
     "the thread summary for the next tool: id, start, tool, turns, tools used, files (seed 002)",
     "  prints Markdown (## Conversation Context) ready to put in a prompt\n"
     "  --files N         list at most the newest N files (default: all)\n"
     "  --json            {\"thread_id\", \"namespace\", \"title\", \"tool\", \"started\", \"updated_at\",\n"
     "                    \"expires_at\", \"turns\", \"messages\", \"tokens\", \"tools_used\", \"files\", \"text\"}\n",
     o_handover, 1, 1, cmd_handover},
    {"namespace forget", "NS --yes [--json]",
     "erase every session, message, summary, state, vector and memory of a namespace, for real",
     "  --yes             required: there is no undo (docs/erasure.md)\n"
     "  --json            print {\"sessions\": N, \"memories\": N}\n",
     o_forget, 1, 1, cmd_namespace_forget},
    /* the session's ask-user state (cmd_threads.c): each command prints the state it leaves */
    {"state get", "ID [--reveal]", "", STATE_REVEAL_HELP, o_reveal, 1, 1, cmd_state},
    {"state merge-params", "ID JSON [--reveal]", "",
     "  JSON              a JSON object merged into params (a null value removes a key)\n" STATE_REVEAL_HELP, o_reveal,
     2, 2, cmd_state},
    {"state set-waiting", "ID PARAM [--reveal]", "",
     "  PARAM             the parameter the flow waits for (mnemo state unwait clears it)\n" STATE_REVEAL_HELP,
     o_reveal, 2, 2, cmd_state},
    {"state unwait", "ID [--reveal]", "", STATE_REVEAL_HELP, o_reveal, 1, 1, cmd_state},
    {"state set-result", "ID INTENT [JSON] [--reveal]", "",
     "  INTENT            the last intent's id; JSON, optionally, its result\n" STATE_REVEAL_HELP, o_reveal, 2, 3,
     cmd_state},
    {"state set-plan", "ID [JSON] [--reveal]", "",
     "  JSON              the plan being executed (none: clear it)\n" STATE_REVEAL_HELP, o_reveal, 1, 2, cmd_state},
    {"state clear", "ID [--history] [--reveal]", "",
     "  --history         also clear the active history in the same transaction (seed 003's clear();\n"
     "                    mnemo session clear)\n" STATE_REVEAL_HELP,
     o_state, 1, 1, cmd_state},
    {"gc", "[--vacuum] [--json]", "purge expired threads",
     "  --vacuum          then VACUUM: PostgreSQL keeps deleted rows' text until a vacuum (docs/erasure.md)\n"
     "  --json            print {\"purged\": COUNT}\n", o_gc, 0, 0, cmd_gc},
    {"export", "[ID...] [--out FILE]", "write sessions as JSON Lines (all sessions when no ID is given)",
     "  --out FILE        write to FILE (atomically) instead of standard output\n", o_export, 0, -1, cmd_export},
    {"import", "[FILE|-] [--json]", "read an export; all or nothing, skips what is already there",
     "  FILE              the export to read (default: standard input)\n"
     "  --json            print the counts as JSON\n",
     o_import, 0, 1, cmd_import},
    {"migrate", "--from SRC --to DST [--append] [--json]",
     "copy a database into another, SQLite or PostgreSQL, in either direction",
     "  --from SRC        the database to read: a SQLite path, sqlite:PATH, or a postgres:// URL\n"
     "  --to DST          the database to write (created when missing); refused when it already\n"
     "                    holds sessions, unless --append\n"
     "  --append          merge into a non-empty DST: sessions and messages already there are skipped\n"
     "  --json            print {\"sessions_added\", \"sessions_skipped\", \"messages_added\", \"messages_skipped\"}\n"
     "  Moves sessions, messages, summaries, events, state and vectors; afterwards\n"
     "  'mnemo --db SRC export' and 'mnemo --db DST export' are identical (docs/scale-out.md).\n"
     "  Progress: a bar on a terminal, plain lines otherwise.\n",
     o_migrate, 0, 0, cmd_migrate},
    {"upgrade", "[--json]", "bring the database's schema up to this version, showing progress",
     "  --json            print {\"from_version\": N, \"schema_version\": N, \"messages\": N} (from 0: new)\n"
     "  Any command upgrades an older database when it opens it; this one shows the progress of\n"
     "  the long steps (version 10 rewrites a SQLite file's messages clustered by session: about\n"
     "  half a minute a million messages). One transaction: interrupted, the file stays as it\n"
     "  was (docs/format.md).\n",
     o_upgrade, 0, 0, cmd_upgrade},
    {"backup", "DEST", "copy the SQLite database, with its indexes, into a new file while others write",
     "  DEST              the backup's file: new (an existing file is refused), any folder\n"
     "  Copies the database as it is at one moment, its keyword index (DEST.keywords) from the\n"
     "  same moment, its saved vector indexes (DEST.hnsw, DEST.memories.hnsw) and, into DEST's\n"
     "  folder, the offloaded tool outputs of its sessions; servers and other commands go on\n"
     "  writing meanwhile. The backup opens without rebuilding any index. Written under a\n"
     "  temporary name in DEST's folder and moved into place at the end: after a crash DEST is\n"
     "  missing, never half a backup. PostgreSQL: use pg_basebackup or pg_dump.\n"
     "  Progress (pages copied): a bar on a terminal, plain lines otherwise.\n",
     o_none, 1, 1, cmd_backup},
    {"prune", "[--days N] [--json]", "delete sessions not updated for N days",
     "  --days N          1 to 36500 (default: memory.auto_prune_days, when set)\n"
     "  --json            print {\"deleted\": COUNT}\n",
     o_prune, 0, 0, cmd_prune},
    {"tokens", "[--encoding cl100k_base|o200k_base|heuristic] [FILE|-] [--ids] [--threads N] [--json]",
     "count the tokens of a text (standard input by default)",
     "  --encoding E      the encoding (default: the configured tokenizer.name)\n"
     "  --ids             print the token ids instead of the count\n"
     "  --threads N       threads that count a text of 1 MiB or more (0, the default: all cores;\n"
     "                    the count is the same for any N)\n"
     "  --json            print {\"encoding\", \"tokens\", \"bytes\"}\n",
     o_tokens, 0, 1, cmd_tokens},
    {"search", "QUERY [--mode auto|semantic|keyword|hybrid] [--session-id ID] [--namespace NS] [--role R]\n"
     "       [--since T] [--until T] [--metadata JSON] [--limit N] [--min-similarity X] [--embed-first] [--json]",
     "search stored messages (keyword, semantic or hybrid; docs/search.md)",
     "  --mode M          auto (hybrid with an embedder, else keyword), semantic, keyword, hybrid\n"
     "  --session-id ID   only this session's messages (also --session)\n"
     "  --namespace NS    only sessions of this namespace\n"
     "  --role R          only messages of this role\n"
     "  --since T         only messages written at T or later (ms since the epoch or YYYY-MM-DD[THH:MM[:SS]], UTC)\n"
     "  --until T         only messages written before T\n"
     "  --metadata JSON   only messages whose metadata has each key of this object with an equal value\n"
     "                    (scalars; at most 16 keys)\n"
     "  --limit N         how many hits (default 10, at most 1000; also --top-k, the API's top_k)\n"
     "  --min-similarity X  drop semantic candidates below this cosine similarity (-1 to 1)\n"
     "  --embed-first     embed the messages still queued first (local hash embedder only)\n"
     "  A semantic or hybrid search says on stderr what it could not see: messages queued (mnemo embed\n"
     "  --pending), and messages never queued, stored before the embedder was turned on, when they\n"
     "  outnumber those with a vector (mnemo embed --backfill)\n"
     "  --json            a JSON array of hits (docs/search.md)\n"
     "  --report          with --json: {\"hits\": [...], \"index\": {\"indexed\": N, \"scanned\": N, \"truncated\": B},\n"
     "                    \"not_embedded\": N}: what the vector index answered, what was scanned exactly\n"
     "                    beside it, and the queued messages no semantic search could see\n",
     o_search, 1, 1, cmd_search},
    {"embed", "--backfill|--pending [--threads N] [--json]", "embed stored messages with the configured embedder",
     "  --backfill        queue every message without a vector and embed them all, in batches (a progress\n"
     "                    bar on a terminal, plain lines otherwise); safe to interrupt and run again\n"
     "  --pending         embed only what is queued\n"
     "  --threads N       threads that build the vector index when it is built from scratch (0: all cores)\n"
     "  --json            print {\"done\": N, \"embedded\": N, \"queued\": N}\n",
     o_embed, 0, 0, cmd_embed},
    {"reindex", "--tokens|--embeddings [--threads N] [--json]", "recount tokens or re-embed every stored message",
     "  --embeddings      drop every vector and re-embed all messages with the configured embedder\n"
     "  --threads N       --embeddings: threads that rebuild the vector index (0, the default: all cores)\n"
     "  --tokens          recount token counts (after changing tokenizer.name); shows progress on a terminal\n"
     "                    (one of the two per run)\n"
     "  --json            --tokens: {\"recounted\": N, \"tokenizer\": NAME};\n"
     "                    --embeddings: {\"done\": N, \"embedded\": N, \"queued\": N}\n",
     o_reindex, 0, 0, cmd_reindex},
    {"memory add", "TEXT [--kind K] [--namespace NS] [--user-id U] [--agent-id A] [--session-id ID]\n"
     "       [--metadata JSON] [--sources ID,...] [--pinned [--token-cap N]] [--valid-from T] [--valid-to T]\n"
     "       [--reason R] [--json]",
     "remember a fact, preference, instruction or event (docs/memory.md)",
     "  --kind K          fact (default), preference, instruction, event, or another a-z_ word\n"
     "  --namespace NS, --user-id U, --agent-id A, --session-id ID   the memory's scope (also --user,\n"
     "                    --agent, --session)\n"
     "  --metadata JSON   a JSON object\n"
     "  --sources IDS     provenance: the ids of the messages it came from (also --source)\n"
     "  --pinned          a memory block: always in a context built with --memories\n"
     "  --token-cap N     a block's cap in tokens\n"
     "  --valid-from T, --valid-to T   when it was true (ms since the epoch or YYYY-MM-DD[THH:MM[:SS]])\n"
     "  --json            print the memory as JSON (else its id)\n",
     o_mem_add, 1, 1, cmd_memory_add},
    {"memory list", "[" MEMORY_FILTERS "] [--offset N] [--json]",
     "list the memories true now (or at --as-of T), newest first",
     MEMORY_FILTERS_HELP "  --limit N         1 to 1000 (default 100)\n"
     "  --offset N        skip the first N (the next page: --offset 100)\n",
     o_mem_list, 0, 0, cmd_memory_list},
    {"memory get", "ID [--json]", "show a memory's current version", "", o_json, 1, 1, cmd_memory_show},
    {"memory search", "QUERY [--mode auto|keyword|semantic|hybrid] [" MEMORY_FILTERS "] [--json]",
     "search memories by keyword, meaning or both, best first",
     MEMORY_FILTERS_HELP "  --limit N         how many (default 10)\n", o_mem_search, 1, 1, cmd_memory_search},
    {"memory history", "ID [--json]", "every version of a memory: what changed, when, by whom and why", "", o_json,
     1, 1, cmd_memory_history},
    {"memory update", "ID [--text T] [--kind K] [--metadata JSON] [--sources IDS] [--valid-from T] [--valid-to T]\n"
     "       [--pinned|--unpinned] [--token-cap N] [--reason R] [--json]",
     "write a new version of a memory; the previous one is closed, never erased",
     "  --valid-from T    when the new version became true (default now; the old valid_from corrects what\n"
     "                    was never true)\n",
     o_mem_update, 1, 1, cmd_memory_update},
    {"memory delete", "ID [--at T] [--reason R] [--json]",
     "close a memory: it stops being true at T (default now) and stays in its history", "", o_mem_delete, 1, 1,
     cmd_memory_delete},
    {"memory forget", "ID [--json]", "erase a memory and its whole history, for real", "", o_json, 1, 1,
     cmd_memory_forget},
    {"memory extract", "SESSION [--extractor offline|llm] [--json]",
     "extract memories from a session's new turns (explicit statements; docs/memory.md)",
     "  --extractor E     offline, or llm (the summarizer.* endpoint; default: memory.extract, offline when\n"
     "                    that is off)\n"
     "  --json            print {\"messages\", \"candidates\", \"added\", \"updated\", \"invalidated\",\n"
     "                    \"unchanged\", \"rejected\"}\n"
     "  Running it again over the same turns changes nothing.\n",
     o_mem_extract, 1, 1, cmd_memory_extract},
    {"memory extract-queue", "SESSION [--data JSON] [--json]",
     "queue an extraction of a session's turns up to now; prints the job (docs/memory.md)",
     "  SESSION           the session: its id or key\n"
     "  --data JSON       a JSON object kept with the job (at most 4096 bytes: ids, not message text)\n"
     "  --json            print the job object {\"id\", \"session_id\", \"namespace\", \"data\", \"state\",\n"
     "                    \"error\", \"upto_seq\", \"queued_at\", \"finished_at\"}\n"
     "  The job runs on the worker of the process that queued it; this command's ends with it, so\n"
     "  the job stays pending until `mnemo memory extract-job` (or a server) reads it and runs it.\n",
     o_mem_queue, 1, 1, cmd_memory_queue},
    {"memory extract-job", "JOB_ID [--json]", "an extraction job: pending, running, done or failed",
     "  JOB_ID            the job's id, as memory extract-queue printed it\n"
     "  --json            print the job object (as memory extract-queue --json)\n"
     "  A job still to run is run by this command, which waits for its end (the worker of the\n"
     "  process that queued it ended with it): it prints done or failed.\n",
     o_json, 1, 1, cmd_memory_job},
    {"checkpoint put",
     "THREAD --checkpoint-id ID --type T --checkpoint TEXT|- [--parent-checkpoint-id ID]\n"
     "       [--checkpoint-ns NS] [--metadata JSON] [--namespace NS] [--json]",
     "save a graph checkpoint of a thread (docs/checkpoints.md)",
     "  THREAD            the thread: a session's id or key; one naming nothing yet makes the session\n"
     "                    (with THREAD as its key, or as its id when a UUID)\n"
     "  --checkpoint-id ID  the checkpoint's id (ids sort by time: the greatest is the newest); one\n"
     "                    already saved in the thread and --checkpoint-ns is replaced\n"
     "  --type T          the serializer's type tag (1 to 64 bytes)\n"
     "  --checkpoint TEXT the serialized checkpoint, base64 for bytes (- reads standard input)\n"
     "  --parent-checkpoint-id ID  the checkpoint before it\n"
     "  --checkpoint-ns NS  the subgraph's namespace (default \"\": the root graph)\n"
     "  --metadata JSON   a JSON object, what checkpoint list --filter reads (default {})\n"
     "  --namespace NS    the namespace of the thread's session (default: default)\n"
     "  --json            print {\"thread_id\", \"checkpoint_ns\", \"checkpoint_id\"}\n",
     o_cp_put, 1, 1, cmd_checkpoint_put},
    {"checkpoint put-writes",
     "THREAD --checkpoint-id ID --writes JSON|- [--checkpoint-ns NS]\n"
     "       [--namespace NS] [--json]",
     "save pending writes against a checkpoint",
     "  --writes JSON     an array of {\"task_id\", \"task_path\", \"idx\", \"channel\", \"type\", \"value\"}\n"
     "                    (1 to 10000; - reads it from standard input), stored in one transaction: a\n"
     "                    write whose task_id and idx are stored already is ignored when idx >= 0 and\n"
     "                    replaces it when idx < 0 (errors, interrupts)\n"
     "  --checkpoint-id ID, --checkpoint-ns NS   the checkpoint they belong to; they may come before it\n"
     "                    (get and list show them with it once it is saved), and a THREAD naming\n"
     "                    nothing yet makes the session as put does\n"
     "  --json            print {\"stored\": N}\n",
     o_cp_writes, 1, 1, cmd_checkpoint_writes},
    {"checkpoint get", "THREAD [--checkpoint-id ID] [--checkpoint-ns NS] [--namespace NS] [--json]",
     "show a thread's checkpoint with its pending writes",
     "  --checkpoint-id ID  this checkpoint (default: the newest of --checkpoint-ns)\n"
     "  --checkpoint-ns NS  the subgraph's namespace (default \"\": the root graph)\n"
     "  prints its fields, the checkpoint's and each write's size; --json prints the checkpoint object\n"
     "  with the texts (docs/checkpoints.md)\n",
     o_cp_show, 1, 1, cmd_checkpoint_show},
    {"checkpoint list",
     "[THREAD] [--checkpoint-ns NS] [--checkpoint-id ID] [--before ID] [--filter JSON]\n"
     "       [--limit N] [--namespace NS] [--json]",
     "list checkpoints, newest first",
     "  THREAD            only this thread's (default: every thread of --namespace)\n"
     "  --checkpoint-ns NS  only this subgraph's (default: any; \"\" the root graph's)\n"
     "  --checkpoint-id ID  only this checkpoint\n"
     "  --before ID       only ids that sort below ID (the next page: the last id shown)\n"
     "  --filter JSON     only those whose metadata has each key of this object with an equal value\n"
     "  --limit N         at most N (1 to 10000; default: all)\n"
     "  --json            a JSON array of checkpoint objects, each with its pending writes\n",
     o_cp_list, 0, 1, cmd_checkpoint_list},
    {"checkpoint delete-thread", "THREAD [--namespace NS] [--json]",
     "delete a thread's checkpoints and pending writes; its session and messages stay",
     "  --json            print {\"deleted\": N}, the checkpoints deleted (0 for a thread naming nothing)\n",
     o_cp_delete, 1, 1, cmd_checkpoint_delete},
    {"document put",
     "PATH KEY --value JSON|- [--index JSON|false] [--ttl-ms N]\n"
     "       [--namespace NS] [--json]",
     "write a JSON document at a path and key, replacing the one there (docs/documents.md)",
     "  PATH              labels joined by '.' (users.alice.prefs); each label any UTF-8 but '.' and\n"
     "                    control characters\n"
     "  KEY               the document's key in its path\n"
     "  --value JSON      the document, a JSON object (- reads it from standard input)\n"
     "  --index JSON      the field paths to embed for document search --query, a JSON array (\"title\",\n"
     "                    \"meta.title\", \"chapters[*].text\", \"$\" for the whole value); false: none\n"
     "                    (default: the whole value; nothing is embedded with embedder.name none)\n"
     "  --ttl-ms N        gone N ms after it was written or last read (0, the default: never)\n"
     "  --namespace NS    the documents' namespace (default: default)\n"
     "  --json            print the stored document {\"namespace\", \"path\", \"key\", \"value\",\n"
     "                    \"created_at\", \"updated_at\", \"expires_at\", \"score\"}\n",
     o_doc_put, 2, 2, cmd_document_put},
    {"document get", "PATH KEY [--no-refresh-ttl] [--namespace NS] [--json]", "print one document's value",
     "  --no-refresh-ttl  leave its time to live running (by default a read starts it again)\n"
     "  --json            print the document object (as document put --json) instead of its value\n",
     o_doc_get, 2, 2, cmd_document_get},
    {"document delete", "PATH KEY [--namespace NS] [--json]", "delete one document",
     "  --json            print {\"deleted\": 1}, or 0 when there was none (not an error)\n", o_doc_delete, 2, 2,
     cmd_document_delete},
    {"document search",
     "[PREFIX] [--filter JSON] [--query TEXT] [--limit N] [--offset N] [--no-refresh-ttl]\n"
     "       [--namespace NS] [--json]",
     "search documents by path prefix, value filter and meaning",
     "  PREFIX            the documents at this path and below it (default: every path)\n"
     "  --filter JSON     value keys and the JSON values they must equal, or objects of operators\n"
     "                    $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin ({\"age\": {\"$gte\": 18}})\n"
     "  --query TEXT      rank by meaning against TEXT (needs an embedder; default: newest updated\n"
     "                    first)\n"
     "  --limit N         at most N (1 to 1000, default 10)\n"
     "  --offset N        skip the first N (the next page)\n"
     "  --no-refresh-ttl  leave the time to live of what is found running\n"
     "  prints a line a document: path, key, score (with --query; - for one without a vector),\n"
     "  value, separated by tabs\n"
     "  --json            a JSON array of document objects (as document put --json)\n",
     o_doc_search, 0, 1, cmd_document_search},
    {"document paths",
     "[--prefix P] [--suffix S] [--max-depth N] [--limit N] [--offset N]\n"
     "       [--namespace NS] [--json]",
     "list the paths holding documents",
     "  --prefix P        paths whose first labels are these (* matches any label: users.*.prefs)\n"
     "  --suffix S        paths whose last labels are these\n"
     "  --max-depth N     paths cut to their first N labels (and merged)\n"
     "  --limit N         at most N (1 to 1000, default 100)\n"
     "  --offset N        skip the first N\n"
     "  prints a path a line, in byte order\n"
     "  --json            a JSON array of paths\n",
     o_doc_paths, 0, 0, cmd_document_paths},
    {"stats", "[--json]", "sessions, messages, tokens, threads and bytes on disk",
     "  --json            a JSON object (docs/cli.md)\n", o_json, 0, 0, cmd_stats},
    {"config show", "[--json]", "print each effective setting and where it came from",
     "  --json            {KEY: {\"value\", \"source\"}}\n", o_json, 0, 0,
     cmd_config_show},
    {"version", "[--json]", "print the version", "  --json            {\"version\", \"library\"}\n", o_json, 0, 0,
     cmd_version},
    {"demo", "", "a short guided tour on the configured database", "", o_none, 0, 0, cmd_demo},
    {"serve",
     "[--listen HOST:PORT] [--api-key-env VAR] [--key-namespace NS] [--allow-origin O] [--max-body N]\n"
     "       [--log-format text|json] [--verbose]",
     "run the local memory service: REST API, MCP at /mcp, /openapi.json (docs/http-api.md)",
     "  --listen HOST:PORT  address to bind (default 127.0.0.1:8765; port 0 picks a free one). The URL is\n"
     "                      printed on standard output once the service is ready\n"
     "  --api-key-env VAR   require Authorization: Bearer <the value of $VAR> (default: MNEMO_API_KEY when\n"
     "                      set); required to listen on anything but loopback\n"
     "  --key-namespace NS  the key may only read and write sessions of namespace NS\n"
     "  --allow-origin O    also accept these browser Origins (comma-separated; * for any)\n"
     "  --max-body N        largest request body in bytes (default 8 MiB)\n"
     "  --verbose           log every request to standard error\n"
     "  --log-format F      text (key=value, the default) or json (one object a line)\n"
     "  API keys bound to namespaces: server.api_keys (SHA-256 hashes); background cleanup every\n"
     "  server.gc_interval_seconds (expired threads, memory.auto_prune_days)\n",
     o_serve, 0, 0, cmd_serve},
    {"mcp", "", "serve MCP over standard input and output (docs/mcp.md)", "", o_none, 0, 0, cmd_mcp},
    {"api", "[--json]", "list the operations of the HTTP API and MCP tools (the table behind this help)",
     "  --json            the whole table: names, routes, flags, parameter and result schemas\n", o_json, 0, 0,
     cmd_api},
    {NULL, NULL, NULL, NULL, NULL, 0, 0, NULL},
};

/* The older words of commands renamed to their operation's name (docs/names.md): they still run
 * the command, and its help names them. `shown` is how the help writes one (NULL: as it is);
 * alias NULL: an older form that old_state_form turns into the command's own words. */
static const struct {
    const char *alias, *name, *shown;
} aliases[] = {
    {"session new", "session create", NULL},
    {"session show", "session get", NULL},
    {"session limit", "session set-max-turns", NULL},
    {"add", "append", NULL},
    {"context", "context build", NULL},
    {"summary show", "summary get", NULL},
    {"files", "session files", NULL},
    {"files check", "file should-include", NULL},
    {"handover", "thread summary-get", NULL},
    {"memory show", "memory get", NULL},
    {"memory queue", "memory extract-queue", NULL},
    {"memory job", "memory extract-job", NULL},
    {"checkpoint writes", "checkpoint put-writes", NULL},
    {"checkpoint show", "checkpoint get", NULL},
    {"checkpoint delete", "checkpoint delete-thread", NULL},
    /* `mnemo state ID [VERB] …`: the verb comes first once old_state_form has moved it */
    {NULL, "state get", "state ID"},
    {NULL, "state get", "state ID get"},
    {"state merge", "state merge-params", "state ID merge"},
    {"state wait", "state set-waiting", "state ID wait"},
    {NULL, "state unwait", "state ID unwait"},
    {"state result", "state set-result", "state ID result"},
    {"state plan", "state set-plan", "state ID plan"},
    {NULL, "state clear", "state ID clear"},
};

static const struct cli_cmd *command_named(const char *name)
{
    for (const struct cli_cmd *c = cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* " (alias: session new)" for c, or "" (out has cap bytes). */
static const char *alias_note(const struct cli_cmd *c, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcmp(aliases[i].name, c->name) != 0)
            continue;
        int w = snprintf(out + used, cap - used, "%s%s", used ? ", " : " (alias: ",
                         aliases[i].shown ? aliases[i].shown : aliases[i].alias);
        if (w > 0 && (size_t)w < cap - used)
            used += (size_t)w;
    }
    if (used)
        snprintf(out + used, cap - used, ")");
    return out;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mnemo [--db PATH] [--config FILE] COMMAND [ARGS]\n\n"
               "mnemo keeps an agent's conversations durable and builds the context for its next call.\n\n"
               "commands:\n");
    int width = 0; /* the longest command name sets the column */
    for (const struct cli_cmd *c = cli_commands; c->name; c++)
        if ((int)strlen(c->name) > width)
            width = (int)strlen(c->name);
    for (const struct cli_cmd *c = cli_commands; c->name; c++) {
        char note[160];
        fprintf(f, "  %-*s  %s%s\n", width, c->name, cli_command_summary(c), alias_note(c, note, sizeof note));
    }
    fprintf(f, "\nglobal options:\n"
               "  --db PATH         the database file (also MNEMO_DB; default $XDG_DATA_HOME/mnemo/memory.db,\n"
               "                    or ~/.local/share/mnemo/memory.db when XDG_DATA_HOME is unset)\n"
               "  --db-replica URL  a PostgreSQL hot standby for reads (repeat for more; postgres.replicas)\n"
               "  --config FILE     read settings from FILE instead of the user and project files\n"
               "  --help            this text; 'mnemo COMMAND --help' explains a command\n"
               "  --version         print the version\n\n"
               "exit status: 0 success, 1 error, 2 usage error. Documentation: docs/cli.md, man mnemo.\n");
}

static void command_help(const struct cli_cmd *c)
{
    char note[160];
    printf("usage: mnemo %s%s%s\n\n%s%s\n", c->name, *c->usage ? " " : "", c->usage, cli_command_summary(c),
           alias_note(c, note, sizeof note));
    if (c->help[0])
        printf("\n%s", c->help);
    cli_print_command_op(c);
}

/* Matches a command's words, or older ones (aliases), two words before one ("files check" before
 * "files"); *used gets the word count. */
static const struct cli_cmd *find_command(int argc, char **argv, int *used)
{
    for (int words = argc < 2 ? 1 : 2; words >= 1 && argc >= 1; words--) {
        char name[64];
        int n = snprintf(name, sizeof name, "%s%s%s", argv[0], words == 2 ? " " : "", words == 2 ? argv[1] : "");
        if (n < 0 || (size_t)n >= sizeof name)
            continue;
        const char *canonical = name;
        for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
            if (aliases[i].alias && strcmp(aliases[i].alias, name) == 0)
                canonical = aliases[i].name;
        const struct cli_cmd *c = command_named(canonical);
        if (c) {
            *used = words;
            return c;
        }
    }
    return NULL;
}

/* The older `mnemo state ID [VERB] …` (VERB get, merge, wait, unwait, result, plan or clear), its
 * words from argv[at]: VERB moves before ID, where the aliases find it ("state merge": state
 * merge-params), and without a VERB "get" goes there (*argv is then a copy one word longer). The
 * state commands' options take no value, so the words are the arguments not starting with --. */
static void old_state_form(int *argc, char ***argv, int at)
{
    static const char *const verbs[] = {"get", "merge", "wait", "unwait", "result", "plan", "clear"};
    static char get[] = "get";
    static char **grown; /* the copy, kept to the end of the process */
    char **a = *argv + at;
    int n = *argc - at, id = 0, verb = 0, words = 0;
    for (int k = 1; k < n; k++)
        if (strncmp(a[k], "--", 2) != 0 && ++words <= 2)
            *(id ? &verb : &id) = k;
    char name[64];
    if (n < 1 || strcmp(a[0], "state") != 0 || !id ||
        (snprintf(name, sizeof name, "state %s", a[id]) < (int)sizeof name && command_named(name)))
        return; /* not the old form: `state get ID` … */
    if (!verb) {
        if (!(grown = malloc(((size_t)*argc + 2) * sizeof *grown)))
            return;
        memcpy(grown, *argv, ((size_t)at + 1) * sizeof *grown);
        grown[at + 1] = get;
        memcpy(grown + at + 2, a + 1, (size_t)n * sizeof *grown); /* a[n] is argv's NULL */
        *argv = grown;
        (*argc)++;
        return;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strcmp(a[verb], verbs[i]) == 0) {
            char *w = a[verb];
            memmove(a + id + 1, a + id, (size_t)(verb - id) * sizeof *a);
            a[id] = w;
            return;
        }
}

/* Lists group's subcommands ("new, list, ...": the command table's names "GROUP WORD") in out;
 * returns how many (0: group is not a group). */
static int group_words(const char *group, char *out, size_t cap)
{
    int n = 0;
    size_t len = strlen(group), used = 0;
    out[0] = '\0';
    for (const struct cli_cmd *c = cli_commands; c->name; c++) {
        if (strncmp(c->name, group, len) != 0 || c->name[len] != ' ')
            continue;
        int w = snprintf(out + used, cap - used, "%s%s", n ? ", " : "", c->name + len + 1);
        if (w > 0 && (size_t)w < cap - used)
            used += (size_t)w;
        n++;
    }
    return n;
}

static void group_help(const char *group)
{
    printf("usage:\n");
    for (const struct cli_cmd *c = cli_commands; c->name; c++) {
        char note[160];
        if (strncmp(c->name, group, strlen(group)) == 0 && c->name[strlen(group)] == ' ')
            printf("  mnemo %s %s\n      %s%s\n", c->name, c->usage, cli_command_summary(c),
                   alias_note(c, note, sizeof note));
    }
}

/* rc, or 1 when what was printed did not reach its file: a full disk or a failing device is an
 * I/O failure, not a success with nothing written (a closed pipe ends the process first). `what`
 * names the command (or flag) in the message. */
static int output_written(const char *what, int rc)
{
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "mnemo: %s: writing the output failed: %s\n", what, strerror(errno ? errno : EIO));
        return 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    struct cli_global g = {NULL, NULL, ""};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return output_written("--help", 0);
        }
        if (strcmp(arg, "--version") == 0)
            return output_written("--version", cmd_version(&g, NULL));
        const char **slot = strcmp(arg, "--db") == 0 ? &g.db : strcmp(arg, "--config") == 0 ? &g.config : NULL;
        if (slot && i + 1 < argc) {
            *slot = argv[++i];
            continue;
        }
        if (strcmp(arg, "--db-replica") == 0 || strncmp(arg, "--db-replica=", 13) == 0) {
            const char *url = arg[12] == '=' ? arg + 13 : i + 1 < argc ? argv[++i] : NULL;
            size_t used = strlen(g.replicas);
            if (!url || !*url)
                return cli_usage_error("--db-replica needs a PostgreSQL URL");
            if (used + strlen(url) + 2 > sizeof g.replicas)
                return cli_usage_error("--db-replica: the replicas' URLs are longer than %zu bytes together",
                                       sizeof g.replicas - 1);
            snprintf(g.replicas + used, sizeof g.replicas - used, "%s%s", used ? " " : "", url);
            continue;
        }
        if (strncmp(arg, "--db=", 5) == 0) {
            g.db = arg + 5;
            continue;
        }
        if (strncmp(arg, "--config=", 9) == 0) {
            g.config = arg + 9;
            continue;
        }
        if (slot)
            return cli_usage_error("%s needs a value", arg);
        return cli_usage_error("unknown option %s (see mnemo --help)", arg);
    }
    if (i >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    int used = 0;
    old_state_form(&argc, &argv, i);
    const struct cli_cmd *cmd = find_command(argc - i, argv + i, &used);
    if (!cmd) {
        char words[512];
        if (group_words(argv[i], words, sizeof words)) {
            if (i + 1 < argc && (strcmp(argv[i + 1], "--help") == 0 || strcmp(argv[i + 1], "-h") == 0)) {
                group_help(argv[i]);
                char what[64];
                snprintf(what, sizeof what, "%s --help", argv[i]);
                return output_written(what, 0);
            }
            if (i + 1 < argc)
                return cli_usage_error("unknown command '%s %s': '%s' takes %s", argv[i], argv[i + 1], argv[i], words);
            return cli_usage_error("'%s' needs a subcommand: %s", argv[i], words);
        }
        return cli_usage_error("unknown command '%s' (see mnemo --help)", argv[i]);
    }
    for (int k = i + used; k < argc; k++) {
        if (strcmp(argv[k], "--") == 0)
            break;
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            command_help(cmd);
            char what[64];
            snprintf(what, sizeof what, "%s --help", cmd->name);
            return output_written(what, 0);
        }
    }
    struct cli_args a;
    if (cli_parse(cmd, argc - i - used, argv + i + used, &a) != 0)
        return EXIT_USAGE;
    return output_written(cmd->name, cmd->run(&g, &a));
}
