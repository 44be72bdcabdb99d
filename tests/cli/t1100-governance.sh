#!/bin/sh
# t1100-governance.sh — context governance from the command line: --strategy summary|chunked|
# hybrid, pin/unpin, compact, summary show, events, budget, --model-window, tool-output trimming,
# and the llm summariser against the local fake server (tests/fake_llm/fake_llm.js).
. "$TESTS_DIR/cli/lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER

ok mn session new --system "You are a careful coding agent."
S=$OUT
add() { "$MNEMO" --db "$DB" add "$S" "$@" >/dev/null || fail "add $*"; }
BIG=$(python3 -c "print('E: boom in src/app.c\n' + 'x' * 4000)")
i=0
while [ $i -lt 12 ]; do
    add user "Please fix issue $i in src/mod$i.c"
    add assistant --tool-calls "[{\"id\":\"c$i\",\"type\":\"function\",\"function\":{\"name\":\"run_tests\",\"arguments\":\"{}\"}}]"
    add tool "$BIG" --tool-call-id c$i --name run_tests
    add assistant "Fixed issue $i; tests pass."
    i=$((i + 1))
done

# before any fold (afterwards window sends the stored summary and fewer messages)
ok mn context "$S" --strategy window --max-tokens 3000
check "trim marker keeps the size" sh -c 'printf "%s" "$1" | grep -q "truncated, 4021 chars total"' - "$OUT"
for st in window summary chunked hybrid; do
    ok mn context "$S" --strategy $st --max-tokens 3000 --report --json
    eq "$(jget "$OUT" 'j["report"]["strategy"]')" $st "$st: strategy in the report"
    eq "$(jget "$OUT" 'j["report"]["tokens"] <= 3000')" true "$st: within the budget"
    eq "$(jget "$OUT" 'j["messages"][0]["role"]')" system "$st: system prompt first"
    eq "$(jget "$OUT" 'j["messages"][1]["role"] != "tool"')" true "$st: never starts on a tool result"
    case $st in window | summary)
        eq "$(jget "$OUT" 'j["report"]["governance"]["tool_outputs"]["trimmed"] > 0')" true "$st: old tool output trimmed" ;;
    esac
done
ok mn context "$S" --strategy chunked --max-tokens 3000
A=$OUT
ok mn context "$S" --strategy chunked --max-tokens 3000
eq "$OUT" "$A" "chunked: same data, same bytes"

ok mn summary show "$S" --json
eq "$(jget "$OUT" 'j["summarizer"]')" extractive "summary show: extractive by default"
check "summary keeps file paths" sh -c 'printf "%s" "$1" | grep -q "src/mod"' - "$OUT"
ok mn events "$S" --json
eq "$(jget "$OUT" 'j[0]["kind"]')" compaction "events: a compaction event"
eq "$(jget "$OUT" 'sorted(k for k in j[0]["data"] if k.startswith("tokens_"))')" '["tokens_after", "tokens_before"]' "events: tokens before/after"

# pin / unpin / compact
ok mn history "$S" --json
FIRST=$(jget "$OUT" 'j[0]["id"]')
ok mn pin "$S" 1
eq "$OUT" "pinned #1" "pin SESSION N: the first message"
i=0
while [ $i -lt 4 ]; do
    add user "Please also check module $i"
    add assistant "Checked module $i: fine."
    i=$((i + 1))
done
ok mn compact "$S" --json
eq "$(jget "$OUT" 'j["outcome"]')" ok "compact: folded"
ok mn context "$S" --strategy hybrid --max-tokens 3000
eq "$(jget "$OUT" 'j[1]["content"]')" "Please fix issue 0 in src/mod0.c" "hybrid: the pinned message stays"
ok mn unpin --message-id "$FIRST" --json
eq "$(jget "$OUT" '[j["id"], j["pinned"]]')" "[$FIRST, false]" "unpin --message-id --json"
fails 1 "not found" mn pin --message-id 99999
fails 1 "has no message #999" mn pin "$S" 999
fails 2 "'abc' is not a position" mn pin "$S" abc
fails 1 "'nope' not found" mn compact nope
ok mn session new
fails 1 "no summary" mn summary show "$OUT"

# budget split and the pre-flight check
ok mn budget 128000 --json
eq "$OUT" '{"model_window":128000,"response":16000,"history":37333,"files":74667}' "budget split"
ok mn context "$S" --model-window 8000 --report --json
eq "$(jget "$OUT" 'j["report"]["max_tokens"]')" 2000 "--model-window: the history share is the budget"
eq "$(jget "$OUT" 'j["report"]["preflight"]["fits"]')" true "pre-flight fits"
fails 1 "strategy" mn context "$S" --strategy magic

# the llm summariser against the fake server
if command -v node >/dev/null 2>&1; then
    node "$TESTS_DIR/fake_llm/fake_llm.js" >"$T/port" &
    SERVER=$!
    port_printed() { grep -q '^PORT [0-9]' "$T/port"; }
    wait_until 120 "the fake LLM server to print its port" port_printed
    PORT=$(sed -n 's/^PORT //p' "$T/port")
    ok mn session new
    L=$OUT
    j=0
    while [ $j -lt 6 ]; do
        "$MNEMO" --db "$DB" add "$L" user "question $j" >/dev/null
        "$MNEMO" --db "$DB" add "$L" assistant "answer $j" >/dev/null
        j=$((j + 1))
    done
    MNEMO_SUMMARIZER=llm MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:$PORT MNEMO_SUMMARIZER_MODEL=ok ok mn compact "$L" --json
    eq "$(jget "$OUT" 'j["prompt_tokens"]')" 111 "llm: usage recorded in the event"
    eq "$(jget "$OUT" 'j["model"]')" ok "llm: model recorded"
    j=0
    while [ $j -lt 3 ]; do
        "$MNEMO" --db "$DB" add "$L" user "more $j" >/dev/null
        j=$((j + 1))
    done
    MNEMO_SUMMARIZER=llm MNEMO_SUMMARIZER_PROTOCOL=ollama MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:$PORT \
        MNEMO_SUMMARIZER_MODEL=length fails 1 "length" mn compact "$L"
    ok mn events "$L" --json
    eq "$(jget "$OUT" 'j[0]["data"]["outcome"]')" failed "llm: the failure is an event"
    ok mn history "$L" --json
    eq "$(jget "$OUT" 'len(j)')" 15 "llm: a failed summary loses nothing"
    kill "$SERVER" 2>/dev/null
    wait "$SERVER" 2>/dev/null
fi
finish
