#!/bin/sh
# t0300-context.sh — `mnemo context`: budgets, the three formats, --report, tool calls never
# separated from their results at any budget, determinism, unanswered calls, bad options.
. "$TESTS_DIR/cli/lib.sh"

call() { # call ID NAME ARGS-JSON-STRING → one OpenAI tool call object
    printf '{"id":"%s","type":"function","function":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"
}

ok mn session new --system "You are a careful coding agent." --title context
S=$OUT
add() { "$MNEMO" --db "$DB" add "$S" "$@" >/dev/null || fail "add $*"; }

add user "Please fix the failing test."
add assistant "Sure. Running the tests first."
add assistant --tool-calls "[$(call c1 run_tests '"{\"path\":\"tests/\"}"')]"
add tool "FAILED test_empty: expected [] got None" --tool-call-id c1 --name run_tests
add assistant "test_empty fails. Reading the parser and the test."
add assistant --tool-calls "[$(call c2 read_file '"{\"path\":\"src/parse.py\"}"'),$(call c3 read_file '"{\"path\":\"tests/test_parse.py\"}"')]"
add tool "def test_empty():\n    assert parse('') == []" --tool-call-id c3 --name read_file
add tool "$(printf 'def parse(text):\n    if not text:\n        return None')" --tool-call-id c2 --name read_file
add user "Also keep the old behaviour for None input, please."
add assistant "Understood."
add assistant "I will apply the change now." --tool-calls "[$(call c4 edit_file '"{\"path\":\"src/parse.py\",\"line\":3}"')]"
add tool "edited src/parse.py (1 change)" --tool-call-id c4 --name edit_file
add assistant --tool-calls "[$(call c5 run_tests '"{\"path\":\"tests/\"}"')]"
add tool "42 passed" --tool-call-id c5 --name run_tests
add assistant "All 42 tests pass now."
add user "Great, thanks! Summarise the change?"

ok mn history "$S" --json
HIST=$OUT
NHIST=$(jget "$HIST" 'len(j)')
eq "$NHIST" 16 "the conversation has 16 messages"

# --- formats with a large budget: everything is there ------------------------------------------
ok mn context "$S" --max-tokens 100000
O=$OUT
check "openai: a JSON array" python3 -c 'import json,sys; assert isinstance(json.loads(sys.argv[1]), list)' "$O"
eq "$(jget "$O" 'j[0]')" '{"role": "system", "content": "You are a careful coding agent."}' "openai: the first element is the system prompt"
eq "$(jget "$O" 'len(j)')" 17 "openai: system prompt + 16 messages"
eq "$(jget "$O" '[m["role"] for m in j[1:]]')" "$(jget "$HIST" '[m["role"] for m in j]')" "openai: the roles of the history, in order"
eq "$(jget "$O" 'j[3]["tool_calls"][0]["id"]')" c1 "openai: tool_calls on the assistant message"
eq "$(jget "$O" 'j[4]["tool_call_id"]')" c1 "openai: tool_call_id on the tool message"
eq "$(jget "$O" 'j[-1]')" '{"role": "user", "content": "Great, thanks! Summarise the change?"}' \
    "openai: the last element is the newest message"

ok mn context "$S" --max-tokens 100000 --format anthropic
A=$OUT
eq "$(jget "$A" 'sorted(j.keys())')" '["messages", "system"]' "anthropic: {system, messages}"
eq "$(jget "$A" 'j["system"]')" "You are a careful coding agent." "anthropic: system apart"
eq "$(jget "$A" 'all(m["role"] in ("user", "assistant") for m in j["messages"])')" true "anthropic: only user/assistant turns"
eq "$(jget "$A" 'all(j["messages"][i]["role"] != j["messages"][i+1]["role"] for i in range(len(j["messages"])-1))')" true \
    "anthropic: roles alternate"
eq "$(jget "$A" 'j["messages"][0]["role"]')" user "anthropic: starts with a user turn"
eq "$(jget "$A" '[b for m in j["messages"] for b in m["content"] if b["type"] == "tool_use"][0]')" \
    '{"type": "tool_use", "id": "c1", "name": "run_tests", "input": {"path": "tests/"}}' "anthropic: tool_use block with parsed input"
eq "$(jget "$A" '[b["tool_use_id"] for m in j["messages"] for b in m["content"] if b["type"] == "tool_result"]')" \
    '["c1", "c3", "c2", "c4", "c5"]' "anthropic: tool_result blocks for every result, in order"
eq "$(jget "$A" '[m["role"] for m in j["messages"] for b in m["content"] if b["type"] == "tool_result"]')" \
    '["user", "user", "user", "user", "user"]' "anthropic: tool results travel in user turns"
eq "$(jget "$A" '[b for m in j["messages"] for b in m["content"] if b["type"] == "tool_result"][0]["content"]')" \
    "FAILED test_empty: expected [] got None" "anthropic: tool_result content"
eq "$(jget "$A" '[[b.get("text", b.get("id")) for b in m["content"]] for m in j["messages"] if any(b.get("id") == "c4" for b in m["content"])][0][-2:]')" \
    '["I will apply the change now.", "c4"]' "anthropic: the text and the tool_use of one assistant message in one turn"

ok mn context "$S" --max-tokens 100000 --format text
X=$OUT
check "text: starts with the system prompt" sh -c 'printf "%s\n" "$1" | head -1 | grep -q "^system: You are a careful coding agent\.$"' - "$X"
check "text: shows the tool call" sh -c 'printf "%s\n" "$1" | grep -q "\[call c1\] run_tests("' - "$X"
check "text: shows the tool result with its call id" sh -c 'printf "%s\n" "$1" | grep -q "^tool (c5): 42 passed$"' - "$X"
check "text: ends with the newest message" sh -c 'printf "%s\n" "$1" | grep -v "^$" | tail -1 | grep -q "^user: Great, thanks!"' - "$X"
check "text: not JSON" sh -c '! printf "%s" "$1" | python3 -c "import json,sys; json.load(sys.stdin)" 2>/dev/null' - "$X"

# --- --report ---------------------------------------------------------------------------------
ok mn context "$S" --max-tokens 150 --report --json
R=$OUT
eq "$(jget "$R" 'sorted(j.keys())')" '["messages", "report"]' "--report: {messages, report}"
eq "$(jget "$R" 'isinstance(j["messages"], list) and j["messages"][0]["role"] == "system"')" true "--report: messages is the openai array"
eq "$(jget "$R" 'j["report"]["tokens"] <= 150')" true "--report: report.tokens <= max-tokens"
eq "$(jget "$R" 'j["report"]["max_tokens"]')" 150 "--report: report.max_tokens"
eq "$(jget "$R" 'j["report"]["messages"]["kept"] == len(j["messages"]) - 1 - ("tokens_added" in j["report"]["rag"])')" \
    true "--report: kept = messages sent (minus system and the retrieved block)"
eq "$(jget "$R" 'j["report"]["messages"]["kept"] + j["report"]["messages"]["dropped"] == 16')" true "--report: kept + dropped = history"
eq "$(jget "$R" 'j["report"]["messages"]["dropped"] > 0')" true "--report: 150 tokens drops something"
eq "$(jget "$R" 'j["report"]["strategy"]')" window "--report: strategy"
ok mn context "$S" --max-tokens 150
eq "$(jget "$R" 'j["messages"]')" "$(jget "$OUT" 'j')" "--report: the same messages as without --report"
ok mn context "$S" --max-tokens 150 --report --json --format anthropic
eq "$(jget "$OUT" 'sorted(j["messages"].keys()) + [j["report"]["format"]]')" '["messages", "system", "anthropic"]' \
    "--report --format anthropic: the anthropic object and its report"
ok mn context "$S" --max-tokens 150 --report --format text
check "--report --format text: the report follows the text" sh -c 'printf "%s\n" "$1" | grep -q "^--- report$"' - "$OUT"

# the default budget is memory.max_history_tokens
ok mn context "$S" --report --json
eq "$(jget "$OUT" 'j["report"]["max_tokens"]')" 4096 "default budget: memory.max_history_tokens (4096)"
run env MNEMO_MAX_HISTORY_TOKENS=60 "$MNEMO" --db "$DB" context "$S" --report --json
eq "$RC/$(jget "$OUT" 'j["report"]["max_tokens"]')" 0/60 "MNEMO_MAX_HISTORY_TOKENS sets the default budget"

# --- tool calls and results are never split, at any budget --------------------------------------
"$MNEMO" --db "$DB" context "$S" --max-tokens 100000 --report --json >"$T/full.json"
b=20
while [ $b -le 400 ]; do
    "$MNEMO" --db "$DB" context "$S" --max-tokens $b --no-rag --report --json >"$T/ctx.$b.json" 2>"$T/ctx.$b.err" ||
        fail "context --max-tokens $b exited $?"
    "$MNEMO" --db "$DB" context "$S" --max-tokens $b --no-rag --format anthropic >"$T/ant.$b.json" 2>>"$T/ctx.$b.err" ||
        fail "context --max-tokens $b --format anthropic exited $?"
    b=$((b + 7))
done
cat >"$T/pairs.py" <<'EOF'
import json, sys
tmp, hist = sys.argv[1], json.load(open(sys.argv[2]))
problems, prev_kept, kept_seen = [], -1, []
by_seq = {m["seq"]: m for m in hist}
for b in range(20, 401, 7):
    doc = json.load(open(f"{tmp}/ctx.{b}.json"))
    msgs, rep = doc["messages"], doc["report"]
    if not msgs or msgs[0]["role"] != "system":
        problems.append(f"{b}: first element is not the system prompt")
    body = msgs[1:]
    if rep["tokens"] > b and (not rep["over_budget"] or rep["shortfall"] != rep["tokens"] - b):
        problems.append(f"{b}: report.tokens {rep['tokens']} > budget without over_budget and the shortfall")
    if body and body[-1]["content"] != hist[-1]["content"]:
        problems.append(f"{b}: the newest message is not last")
    if body and body[0]["role"] == "tool":
        problems.append(f"{b}: the first non-system message is a tool result")
    calls_seen = set()
    for i, m in enumerate(body):
        if m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            answered = {x.get("tool_call_id") for x in body[i + 1:] if x["role"] == "tool"}
            missing = [c for c in ids if c not in answered]
            if missing:
                problems.append(f"{b}: call(s) {missing} sent without their result")
            calls_seen.update(ids)
        if m["role"] == "tool" and m["tool_call_id"] not in calls_seen:
            problems.append(f"{b}: result {m['tool_call_id']} sent without its call")
    kept = rep["messages"]["kept"]
    if kept != len(body):
        problems.append(f"{b}: report kept {kept} but {len(body)} sent")
    if kept < prev_kept:
        problems.append(f"{b}: a larger budget kept fewer messages ({kept} < {prev_kept})")
    prev_kept = kept
    kept_seen.append(kept)
    # what is kept is the recent end of the conversation, in order; when the current turn's older
    # steps left, its user message (the newest one) stands first
    if kept:
        first = rep["messages"]["first_kept_seq"]
        got = [m["content"] for m in body]
        task = max(s for s in by_seq if by_seq[s]["role"] == "user")
        want = [by_seq[s]["content"] for s in range(first, len(hist) + 1)]
        later = [by_seq[s]["content"] for s in range(len(hist) - len(got) + 2, len(hist) + 1)]
        if got != want and (first != task or got != [by_seq[task]["content"]] + later):
            problems.append(f"{b}: kept messages are not the newest ones in order")
    ant = json.load(open(f"{tmp}/ant.{b}.json"))
    uses = set()
    am = ant["messages"]
    if am and any(bl["type"] == "tool_result" for bl in am[0]["content"]):
        problems.append(f"{b}: anthropic starts with a tool_result")
    for t, m in enumerate(am):
        for bl in m["content"]:
            if bl["type"] == "tool_use":
                uses.add(bl["id"])
                nxt = am[t + 1]["content"] if t + 1 < len(am) else []
                if not any(x["type"] == "tool_result" and x["tool_use_id"] == bl["id"] for x in nxt):
                    problems.append(f"{b}: anthropic tool_use {bl['id']} not answered in the next turn")
            if bl["type"] == "tool_result" and bl["tool_use_id"] not in uses:
                problems.append(f"{b}: anthropic tool_result {bl['tool_use_id']} without its tool_use")
# the sweep must cover the whole conversation: from (almost) nothing to (almost) everything
full = json.load(open(f"{tmp}/full.json"))["report"]["tokens"]
if min(kept_seen) > 1 or (full <= 398 and max(kept_seen) != len(hist)) or max(kept_seen) < len(hist) - 3:
    problems.append(f"budgets 20..400 do not sweep the conversation ({full} tokens): kept {sorted(set(kept_seen))}")
print("\n".join(problems) if problems else "ok")
EOF
printf '%s' "$HIST" >"$T/hist.json"
run python3 "$T/pairs.py" "$T" "$T/hist.json"
eq "$OUT" ok "tool calls and results never split at budgets 20..400 (step 7)"
# stderr: nothing but the over-budget warning, from both runs of a budget exactly when the report says so
check "the budget loop: stderr is the over-budget warning, exactly when over_budget" python3 -c '
import json, sys
for b in range(20, 401, 7):
    err = open(f"{sys.argv[1]}/ctx.{b}.err").read().splitlines()
    warn = [l for l in err if l.startswith("mnemo: warning: the context is over its budget: ")]
    assert warn == err, (b, err)
    over = json.load(open(f"{sys.argv[1]}/ctx.{b}.json"))["report"]["over_budget"]
    assert len(warn) == (2 if over else 0), (b, over, err)
' "$T"

# --- determinism -------------------------------------------------------------------------------
for fmt in openai anthropic text; do
    "$MNEMO" --db "$DB" context "$S" --max-tokens 173 --format $fmt --report >"$T/d1" 2>&1
    "$MNEMO" --db "$DB" context "$S" --max-tokens 173 --format $fmt --report >"$T/d2" 2>&1
    check "context --format $fmt twice gives byte-identical output" cmp -s "$T/d1" "$T/d2"
done

# --- an unanswered tool call is not sent --------------------------------------------------------
ok mn session new --system "sys"
U=$OUT
"$MNEMO" --db "$DB" add "$U" user "What time is it?" >/dev/null
"$MNEMO" --db "$DB" add "$U" assistant --tool-calls "[$(call u1 get_time '"{}"')]" >/dev/null
ok mn context "$U" --max-tokens 1000 --report --json
J=$OUT
eq "$(jget "$J" '[m["role"] for m in j["messages"]]')" '["system", "user"]' "an unanswered tool call is not sent"
eq "$(jget "$J" 'j["report"]["dropped"]["unmatched_tool_call"]')" 1 "report counts the unanswered call"
ok mn context "$U" --max-tokens 1000 --format anthropic
eq "$(jget "$OUT" '[b["type"] for m in j["messages"] for b in m["content"]]')" '["text"]' "anthropic: no dangling tool_use"
"$MNEMO" --db "$DB" add "$U" tool "12:00" --tool-call-id u1 >/dev/null
ok mn context "$U" --max-tokens 1000
eq "$(jget "$OUT" '[m["role"] for m in j]')" '["system", "user", "assistant", "tool"]' "once answered, call and result are sent"
# a call with two ids and only one result so far: neither is sent
"$MNEMO" --db "$DB" add "$U" assistant --tool-calls "[$(call u2 get_time '"{}"'),$(call u3 get_date '"{}"')]" >/dev/null
"$MNEMO" --db "$DB" add "$U" tool "12:01" --tool-call-id u2 >/dev/null
ok mn context "$U" --max-tokens 1000
eq "$(jget "$OUT" '[m["role"] for m in j]')" '["system", "user", "assistant", "tool"]' "a partly answered call is not sent, nor its result"
eq "$(jget "$OUT" '[m.get("tool_call_id") for m in j]')" '[null, null, null, "u1"]' "only the complete pair u1 is sent"

# a session without a system prompt: openai has no system element, anthropic no system member
ok mn session new
N=$OUT
"$MNEMO" --db "$DB" add "$N" user "hi" >/dev/null
ok mn context "$N"
eq "$OUT" '[{"role":"user","content":"hi"}]' "no system prompt: no system element"
ok mn context "$N" --format anthropic
eq "$(jget "$OUT" '"system" in j')" false "anthropic without a system prompt: no system member"
ok mn session new
ok mn context "$OUT"
eq "$OUT" "[]" "an empty session gives []"

# --- bad options -------------------------------------------------------------------------------
fails 1 "strategy" mn context "$S" --strategy nonsense
fails 2 "openai|anthropic|text|format" mn context "$S" --format xml
fails 2 "max-tokens" mn context "$S" --max-tokens -1
fails 2 "max-tokens" mn context "$S" --max-tokens lots
fails 2 "max-tokens" mn context "$S" --max-tokens 100000001
fails 1 "not found" mn context 0190abcd-0000-7000-8000-00000000dead
fails 1 "'not-a-session' not found" mn context not-a-session
fails 2 "unknown option" mn context "$S" --budget 10
eq "$OUT" "" "a refused context prints nothing on stdout"

finish
