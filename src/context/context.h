/*
 * context.h — building what a model gets next: the `window` strategy (newest messages that fit
 * the budget, tool calls kept with their results), token accounting with per-message framing,
 * and rendering as OpenAI, Anthropic or text with a report of what was kept and dropped.
 * Design notes: docs/context.md.
 */
#ifndef MN_CONTEXT_H
#define MN_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "store/store.h"
#include "token/token.h"
#include "util/arena.h"
#include "util/json.h"

/* Framing per message in chat formats: 3 tokens of separators plus the role (one token in
 * cl100k_base and o200k_base), one more when a name is set, and the reply priming once per
 * context — the rule of OpenAI's token-counting guide. The name's own tokens are in the
 * message's stored count (mn__message_tokens). */
#define MN_FRAME_PER_MESSAGE 4
#define MN_FRAME_PER_NAME 1
#define MN_FRAME_REPLY 3

struct mn_gov;

struct mn_window {
    struct mn_arena arena;
    mn_message *items; /* kept history, oldest to newest */
    size_t count, cap;
    const char *system_prompt;
    int64_t max_tokens;
    int64_t system_tokens, message_tokens, framing_tokens;
    int64_t total_messages;
    int64_t dropped_budget, dropped_orphan, dropped_unmatched;
    int over_budget;
    struct mn_gov *gov;   /* tool-output governance applied during the walk; NULL: none */
    int64_t synthetic;    /* kept items that are not stored messages (summary, marker) */
    int64_t summarized;   /* history messages the summary stands for (not dropped) */
    int64_t turn_skipped; /* mn__window_collect: steps of the current turn passed over */
};

/* Framing tokens one message costs. */
int64_t mn__context_frame_tokens(const mn_message *m);
void mn__window_release(struct mn_window *w);
/* Renders the kept messages and the report (both malloc'd, caller frees). */
mn_status mn__context_render(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt,
                            char **rendered, char **report);
/* The same; the members of `extra` (a JSON object, may be NULL; not consumed) are appended to
 * the report. */
mn_status mn__context_render_ex(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt,
                               const json_t *extra, char **rendered, char **report);

/* The window walk over msgs[0..n) (oldest to newest, already in memory) instead of the store:
 * keeps the newest whole units within `left` tokens (cost = stored tokens + framing), counts
 * orphans and unmatched calls, applies w->gov. Appends the kept messages to w->items, oldest to
 * newest, after what is there; adds to message_tokens / framing_tokens; *used gets the cost. */
mn_status mn__window_walk(struct mn_window *w, const mn_message *msgs, size_t n, int64_t left, int64_t *used);
/* The newest governed units of session s newer than stop_seq, from the store, newest first
 * while they fit in max_tokens, the newest unit whatever its cost, and the current turn's user
 * message (the newest user message) whatever its cost: when the budget runs out inside the
 * current turn, the older steps are passed over to it; into w->items oldest first (w->gov
 * applied; orphans and unmatched calls counted). Loads no more than a layout can use. */
mn_status mn__window_collect(mn_store *st, const mn_session *s, int64_t stop_seq, int64_t max_tokens,
                            struct mn_window *w);

/* ---- tool-output governance (govern.c) -------------------------------------------------------
 * Runs inside every walk, before a unit is costed. Tool results that are not among the newest
 * protect_messages messages (seed 001: 2), longer than trim_chars characters, become head + tail with
 * "[…truncated, N chars total]"; with offloading on and more than offload_threshold prunable
 * tokens (tool output beyond the newest protect_tokens), they are written to
 * DIR/tool-outputs/SESSION/SEQ.txt and replaced by a preview naming the file. */
struct mn_gov {
    /* settings */
    const mn_tokenizer *tk;
    int64_t trim_chars;        /* 0: no trimming */
    int offload;               /* 1: offloading may run */
    int64_t protect_messages;  /* results among the newest this many messages are never trimmed */
    int64_t protect_tokens, offload_threshold;
    const char *offload_dir;   /* the data directory (the database's folder) */
    int64_t loop_repeat;       /* report the same call repeated this many times in a row; 0: off */
    int64_t total_tool_tokens; /* stored tokens of all tool results the walk may meet */
    /* state of the walk (newest first) */
    int decided, active, loop_frozen;
    int64_t walked;            /* messages the walks have met, newest first (a result's age) */
    int64_t seen_tool_tokens;
    char loop_sig[65], loop_name[64];
    int64_t loop_run, loop_seq;
    /* results */
    int64_t trimmed, offloaded, offload_failed, chars_removed, tokens_saved;
    json_t *marks; /* MN_CONTEXT_DETAIL: {"<seq>": fate} of messages governed or dropped by a walk
                      ("trimmed", "offloaded", "dropped_orphan", "dropped_unmatched"); NULL: off.
                      Borrowed: copies of the settings share it */
};

/* Records the fate of message seq in g->marks (nothing when g or its marks are NULL). */
void mn__gov_mark(const struct mn_gov *g, int64_t seq, const char *fate);

/* Called by the walk for the results of one answered call (newest call first), before costing;
 * rewrites content and tokens of results in place (new strings in a). */
mn_status mn__gov_results(struct mn_gov *g, struct mn_arena *a, mn_message *results, size_t n);
/* Loop detection: called for every assistant tool call and user message the walk meets. */
void mn__gov_note(struct mn_gov *g, const mn_message *m);
/* The "tool_outputs" and "loop" members of the report. NULL on OOM. */
json_t *mn__gov_report(const struct mn_gov *g);

/* ---- layout (layout.c): the pure last step of every strategy --------------------------------
 * Chooses from parts already in memory and governed (validated units: a call before all of its
 * results). Always keeps the newest unit, the current turn's user message (the newest stored user
 * message of the recent part) and the system prompt; then the summary (cut to fit, newest end
 * kept), the current turn's older steps newest first, the old part, and, when every step is in,
 * older recent units newest first; a marker for what was left out when `marker` is set and it
 * fits. Appends to w (zeroed), whose arena holds new strings. */
typedef struct mn_layout_in {
    const char *session_id;
    const mn_tokenizer *tk;
    const char *system_prompt;  /* NULL: none */
    const mn_message *old;      /* head (summary strategy) or pinned units (hybrid), oldest first */
    size_t n_old;
    const char *summary;        /* the stored summary's text, NULL: none */
    int64_t summary_folded;     /* messages it stands for (its header) */
    const mn_message *tail;     /* the recent messages, oldest first; the last is the newest */
    size_t n_tail;
    int64_t hidden;             /* messages left out before the layout (counted by the marker) */
    int64_t max_tokens;
    int64_t mem_budget;         /* chunked: summary + recent messages at most this; 0: no limit */
    int marker;                 /* 1: a marker stands for the messages left out */
} mn_layout_in;

typedef struct mn_layout_out {
    int summary_shown, summary_cut;
    int64_t marker;             /* messages the marker counts (0: none, or marker off) */
    int64_t tail_dropped, old_dropped, orphans;
    int64_t shortfall;          /* tokens over max_tokens (0 when within) */
    int64_t turn_seq;           /* the current turn's user message (0: none in the recent part) */
    int64_t turn_steps, turn_steps_dropped; /* units after it before the newest one; left out */
} mn_layout_out;

/* Stored tokens + framing of one message. */
int64_t mn__context_cost(const mn_message *m);
mn_status mn__context_layout(const mn_layout_in *in, struct mn_window *w, mn_layout_out *out);

/* ---- folding (fold.c) ------------------------------------------------------------------------ */
enum mn_fold_outcome {
    MN_FOLD_NONE, MN_FOLD_OK, MN_FOLD_FAILED, MN_FOLD_ROLLED_BACK, MN_FOLD_IN_FLIGHT, MN_FOLD_COOLDOWN,
    MN_FOLD_DISABLED, MN_FOLD_NOTHING, MN_FOLD_QUEUED, MN_FOLD_TIMED_OUT, MN_FOLD_DEFERRED
};
const char *mn__fold_outcome_name(enum mn_fold_outcome o);

/* ---- strategies (strategy.c, plan.c) ---------------------------------------------------------
 * Each build: load → govern → plan (pure: is a fold due, over which messages) → fold (sync,
 * queued or none) → layout (pure) → report. */
struct mn_summarizer;

typedef struct mn_strategy_cfg {
    const char *strategy;     /* window, summary, chunked, hybrid */
    int64_t max_tokens;       /* the whole context's budget */
    int64_t model_window;     /* 0: unknown */
    int fold_mode;            /* MN_CONTEXT_FOLD_BACKGROUND, _SYNC or _OFF (mnemo.h) */
    int64_t fold_deadline_ms; /* absolute (mn__clock_now_ms), 0: none; a sync fold past it times out */
    const char *instructions; /* mn_compact: what the summary must keep; NULL: none */
    int64_t max_messages;     /* summary/hybrid message trigger; 0 disables */
    int64_t trigger_percent;  /* summary/hybrid token trigger, % of the model window (else of max_tokens); 0 off */
    int64_t tail_turns;       /* chunked K, and what mn_compact keeps */
    int64_t chunk_threshold;  /* chunked: summary + unsummarised tokens that trigger a fold */
    int64_t prompt_budget;    /* chunked: tokens for summary + raw turns */
    int64_t summary_cap;      /* tokens of a summary */
    int64_t hybrid_recent;    /* hybrid: recent messages kept verbatim after a fold */
    int64_t reserve_tokens;   /* pre-flight: response tokens reserved (0: mn_budget_split's) */
    int64_t safety_margin;
    int64_t claim_ms;         /* how long a fold may hold the session claim */
    int64_t retry_gap;        /* messages to wait after a failed or rolled-back fold */
    struct mn_gov gov;        /* governance settings (state zeroed) */
} mn_strategy_cfg;

typedef struct mn_strategy_env {
    mn_store *st;
    const mn_tokenizer *tk;
    struct mn_summarizer *sum; /* NULL: sum_err says why summarising is unavailable */
    const char *sum_err;
    /* Queues a due fold on a worker (0: queued); NULL: no worker, a background fold runs here
     * within cfg->fold_deadline_ms. */
    int (*queue)(void *user, const mn_strategy_cfg *cfg, const char *session_id);
    void *queue_user;
} mn_strategy_env;

/* What a strategy loaded and governed; the plan's and the layout's input. */
struct mn_loaded {
    mn_summary *sum;           /* the stored summary or NULL */
    mn_messages *buf;          /* messages after the summary, oldest first */
    mn_messages *head;         /* summary strategy: the session's first messages */
    mn_messages *pinned;       /* hybrid: pinned units the summary covers */
    mn_messages *covered;      /* the newest messages the summary covers: verbatim in spare room */
};

/* The plan (plan.c, pure): whether a fold is due and over which buffer messages. */
struct mn_fold_plan {
    const char *trigger;       /* NULL: no fold due */
    size_t from, to;           /* the fold range in the buffer */
    size_t head_end;           /* summary strategy: buffer messages that belong to the head */
};
/* scratch: the buffer governed (costs for the triggers); fixed: system + framing tokens. */
void mn__fold_plan_make(const mn_strategy_cfg *cfg, const struct mn_loaded *ld, const struct mn_window *scratch,
                       int64_t head_end_seq, int64_t fixed, struct mn_fold_plan *p);

/* A built context: w is rendered; its items point into parts[] and w's arena. */
struct mn_built {
    struct mn_window w;
    struct mn_window parts[3];
    json_t *extra; /* report members */
};

/* Builds the context of session s. b must be zeroed; release it with mn__built_release. */
mn_status mn__context_assemble(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                              struct mn_built *b);
void mn__built_release(struct mn_built *b);
/* Folds this process has run, by outcome (for mn_compaction_counts). */
void mn__context_fold_counts(int64_t *ok, int64_t *failed, int64_t *rolled_back);

struct mn_fold_req {
    const char *trigger;
    int forced;
    const mn_summary *old;
    const mn_message *msgs;
    size_t n;
    int64_t last_seq; /* newest message of the session at fold time */
};
/* The session's latest summary in *out, or NULL when it has none yet (fold.c). */
mn_status mn__context_summary_latest(const mn_strategy_env *env, const char *session_id, mn_summary **out);
/* Runs one fold under the session claim (fold.c). *outcome says what happened; *made gets the
 * stored summary. Errors only for the store (the summariser's failure is an outcome, with an
 * event in the store and in *event when not NULL). */
mn_status mn__context_fold(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                          const struct mn_fold_req *fr, enum mn_fold_outcome *outcome, mn_summary **made,
                          json_t **event);
/* Folds every message but the last cfg->tail_turns turns now (mn_compact). *event gets the event
 * data written (caller decrefs). MN_BUSY when another fold holds the claim. */
mn_status mn__context_compact(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                             json_t **event);
/* response = min(window/4, 16000), history = min(rest/3, 50000), files = rest. */
void mn__context_budget_split(int64_t window, int64_t *response, int64_t *history, int64_t *files);
/* Moves a cut back so the part after it does not start on a tool result. */
size_t mn__context_unit_start(const mn_message *m, size_t i);
/* The index of the first message of the newest k turns (0 when there are not more than k). */
size_t mn__context_keep_turns_from(const mn_message *m, size_t n, int64_t k);

/* ---- long-term memories in the context (memblock.c) ------------------------------------------
 * One system message right after the system prompt: a header, the memory blocks (pinned, each
 * cut to its token_cap), then the relevant memories best first, one "[id] kind: text" line
 * each. */
typedef struct mn_memblock_item {
    const mn_memory *m;    /* borrowed */
    char *text;            /* as shown: whole, or cut with "…" */
    int64_t tokens;        /* tokens of text alone */
    int in, cut;           /* in the block; text cut (to the cap or for the budget) */
    const char *left_out;  /* why not in: "budget", "token_cap"; NULL when in */
} mn_memblock_item;

typedef struct mn_memblock {
    mn_memblock_item *items; /* the memory blocks first (in the order given), then the relevant ones */
    size_t n;
    char *text;              /* the block's content, NULL when no item is in */
    int64_t tokens;          /* tokens of text, counted whole */
} mn_memblock;

/* Items for pinned[0..np) and rel[0..nr) (borrowed; they must outlive b), blocks cut to their
 * token_cap. Release b even on failure. */
mn_status mn__memblock_init(mn_memblock *b, const mn_tokenizer *tk, const mn_memory *pinned, size_t np,
                           const mn_memory *rel, size_t nr);
/* Renders the block within room tokens (its cost: tokens + the framing of one message):
 * relevant memories leave lowest score first, then blocks are cut, the last first. */
mn_status mn__memblock_fit(mn_memblock *b, const mn_tokenizer *tk, int64_t room);
/* tokens + framing, 0 when empty. */
int64_t mn__memblock_cost(const mn_memblock *b);
void mn__memblock_release(mn_memblock *b);
/* Puts a system message with text (copied into w's arena) before w's items, counted as
 * synthetic, and adds its tokens and framing to w. */
mn_status mn__window_put_first(struct mn_window *w, const char *session_id, const char *text, int64_t tokens);
/* The same with a role, before item `at` (at <= w->count). */
mn_status mn__window_insert(struct mn_window *w, size_t at, mn_role role, const char *session_id, const char *text,
                           int64_t tokens);

#endif
