#!/bin/sh
# t0320-text-output.sh — text for people, JSON with --json: `mnemo compact`, `mnemo events` and
# `mnemo context --report` print readable text by default and the JSON they always printed with
# --json; `mnemo context` warns on standard error when the context is over its budget or does not
# fit the model window (issue #42).
# pg variant: none — how the CLI prints what the library returns.
. "$TESTS_DIR/cli/lib.sh"

is_json() { printf '%s' "$1" | python3 -c 'import json, sys; json.load(sys.stdin)' 2>/dev/null; }
has_line() { printf '%s\n' "$1" | grep -Eq -- "$2"; }

ok mn session new --system-prompt "You are a build assistant."
S=$OUT
i=1
while [ $i -le 5 ]; do
    ok mn add "$S" user "Question $i: how do we make the nightly build reproducible, part $i of the plan?"
    ok mn add "$S" assistant "Answer $i: pin the compiler image by digest and sort the tarball entries, part $i."
    i=$((i + 1))
done

# --- compact: a sentence; --json the event object ----------------------------------------------------
ok mn compact "$S"
check "compact: text, not JSON" test "${OUT#\{}" = "$OUT"
check "compact: what was folded, up to which position, the tokens before and after ($OUT)" \
    has_line "$OUT" '^folded 4 messages \(2 turns, up to #4\) into summary 1: [0-9]+ tokens -> [0-9]+ \(extractive, [0-9]+ ms\)$'
ok mn compact "$S"
eq "$OUT" "nothing to fold: no more than the kept turns (3)" "compact with nothing to fold: text"
ok mn compact "$S" --json
eq "$OUT" '{"kind":"compaction","outcome":"nothing_to_fold","reason":"no more than the kept turns","kept_turns":3}' \
    "compact --json: the event object, as before"

# --- events: a line an event; --json the array ------------------------------------------------------
ok mn events "$S" --json
EV=$OUT
eq "$(jget "$EV" '[len(j), j[0]["kind"], j[0]["data"]["outcome"], j[0]["data"]["covers_upto"]]')" \
    '[1, "compaction", "ok", 4]' "events --json: the array of events, as before"
ok mn events "$S"
check "events: not JSON" test "${OUT#\[}" = "$OUT"
check "events: one line with the time, the kind and what happened ($OUT)" \
    has_line "$OUT" '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}  compaction \(forced\): folded 4 messages \(2 turns, up to #4\) into summary 1: [0-9]+ tokens -> [0-9]+'
eq "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 1 "events: one line for one event"
ok mn message edit "$S" 7 "Question 4, edited: is the tarball reproducible now?"
ok mn events "$S"
check "events: a message_edited event names the position ($OUT)" has_line "$OUT" 'message_edited: #7, [0-9]+ -> [0-9]+ tokens$'
ok mn session new
E=$OUT
ok mn events "$E"
eq "$OUT" "no events" "events of a session without any"
ok mn events "$E" --json
eq "$OUT" "[]" "events --json of a session without any: []"

# --- context --report: the report in text; --json the object ------------------------------------------
ok mn context "$S" --max-tokens 120 --no-rag
PLAIN=$OUT
ok mn context "$S" --max-tokens 120 --no-rag --report
check "context --report: the context, then the report in text ($OUT)" sh -c '
    printf "%s\n" "$1" | head -1 | grep -qxF -- "$2" && printf "%s\n" "$1" | sed -n 2p | grep -qx -- "--- report"' - "$OUT" "$PLAIN"
check "context --report: tokens of the budget" has_line "$OUT" '^tokens: [0-9]+ of 120 \(system [0-9]+, messages [0-9]+, framing [0-9]+\)$'
check "context --report: what was kept, by position" has_line "$OUT" '^messages: [0-9]+ of 10 kept \(#[0-9]+ to #10\), [0-9]+ dropped'
check "context --report: the strategy line" has_line "$OUT" '^strategy window, format openai, tokenizer '
check "context --report: no JSON report" sh -c '! printf "%s" "$1" | grep -q "\"over_budget\""' - "$OUT"
ok mn context "$S" --max-tokens 120 --no-rag --report --json
eq "$(jget "$OUT" 'sorted(j)')" '["messages", "report"]' "context --report --json: {messages, report}, as before"
eq "$(jget "$OUT" 'j["messages"]')" "$(jget "$PLAIN" 'j')" "context --report --json: the same messages"
ok mn context "$S" --max-tokens 120 --no-rag --report --json --format text
check "context --report --json --format text: the text, --- report, the JSON line, as before" sh -c '
    printf "%s\n" "$1" | grep -qx -- "--- report" && printf "%s\n" "$1" | tail -1 | python3 -c "import json, sys; assert \"strategy\" in json.load(sys.stdin)"' - "$OUT"
ok mn context "$S" --strategy summary --max-tokens 400 --report --detail
check "context --report --strategy summary: the summary line ($OUT)" \
    has_line "$OUT" '^summary 1: covers up to #4 \(4 messages\), [0-9]+ tokens, extractive'
check "context --report --detail: each message's fate by position" has_line "$OUT" '^  #10 +kept +[0-9]+ tokens$'
fails 2 "--json is the form of the report" mn context "$S" --json

# --- over budget: a warning on stderr with the figures and what to do ---------------------------------
ok mn context "$S" --max-tokens 300 --no-rag
eq "$ERR" "" "within the budget: no warning"
ok mn context "$S" --max-tokens 10 --no-rag
check "over budget: the context is printed all the same" is_json "$OUT"
check "over budget: a warning naming the figures and what to do ($ERR)" \
    has_line "$ERR" '^mnemo: warning: the context is over its budget: [0-9]+ tokens for --max-tokens 10 \([0-9]+ over\).*raise --max-tokens'
ok mn context "$S" --max-tokens 10 --no-rag --report --json
eq "$(jget "$OUT" '[j["report"]["over_budget"], j["report"]["shortfall"] > 0]')" "[true, true]" \
    "the report agrees: over_budget and its shortfall"
check "over budget: the warning with --report --json too" has_line "$ERR" 'warning: the context is over its budget'
run env MNEMO_MAX_HISTORY_TOKENS=10 "$MNEMO" --db "$DB" context "$S" --no-rag
check "over the configured budget: the warning names the setting ($ERR)" has_line "$ERR" 'tokens for memory.max_history_tokens 10 '
ok mn context "$S" --max-tokens 300 --model-window 400 --no-rag
check "a context that does not fit the model window: a warning ($ERR)" \
    has_line "$ERR" '^mnemo: warning: the context does not fit the model window of 400 tokens: [0-9]+ needed \([0-9]+ of context, [0-9]+ reserved for the reply, [0-9]+ of safety margin\)'
finish
