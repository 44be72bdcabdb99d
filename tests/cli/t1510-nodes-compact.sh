#!/bin/sh
# t1510-nodes-compact.sh — chunked summarisation asked for by two nodes at the same moment
# (pg/ variant only): several context builds on each node, all at once, over a history past the
# fold threshold. The fold runs once: one compaction event with outcome ok, one summary; every
# build answers 200 with a context within its budget. docs/context.md ("One at a time").
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
[ "$(backend)" = postgres ] || { fail "t15xx tests need PostgreSQL (MNEMO_TEST_PG_URL)"; finish; }
export MNEMO_TOKENIZER=heuristic

node_start A
node_start B
at A req POST /v1/sessions '{"system_prompt":"You are a careful coding agent."}'
S=$(jget "$OUT" 'j["session"]["id"]')
# 40 turns of ~1000 characters each way: ~20000 tokens, far past the 6000-token fold threshold
python3 - "$T/batch" <<'PY'
import json, sys
for b in range(4):
    msgs = []
    for t in range(b * 10, b * 10 + 10):
        msgs.append({"role": "user", "content": f"Please fix issue {t} in src/mod{t}.c. " + "detail " * 140})
        msgs.append({"role": "assistant", "content": f"Fixed issue {t} in src/mod{t}.c; tests pass. " + "note " * 170})
    open(f"{sys.argv[1]}.{b}", "w").write(json.dumps({"messages": msgs}))
PY
for b in 0 1 2 3; do
    at A req POST "/v1/sessions/$S/messages" "$(cat "$T/batch.$b")"
    eq "$CODE" 201 "append batch $b"
done
at B req GET "/v1/sessions/$S"
eq "$(jget "$OUT" 'j["session"]["message_count"]')" 80 "node B sees all 80 messages"

# three builds per node, all started together
build() { # build N NODE_URL
    curl -s -o "$T/ctx.$1" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data-binary '{"strategy":"chunked","max_tokens":3000}' "$2/v1/sessions/$S/context" >"$T/code.$1"
}
pids=
for n in 1 2 3; do
    build a$n "$A_URL" &
    pids="$pids $!"
    build b$n "$B_URL" &
    pids="$pids $!"
done
wait $pids
for n in a1 a2 a3 b1 b2 b3; do
    eq "$(cat "$T/code.$n")" 200 "build $n answered 200"
    eq "$(jget "$(cat "$T/ctx.$n")" 'j["tokens"] <= 3000')" true "build $n: within the budget"
done
ok mn events "$S" --limit 100 --json
eq "$(jget "$OUT" 'len([e for e in j if e["kind"] == "compaction" and e["data"]["outcome"] == "ok"])')" 1 \
    "the fold ran once: one compaction event with outcome ok"
ok mn summary show "$S" --json
check "one summary, covering the folded turns" test "$(jget "$OUT" 'j["covers_upto"] > 0')" = true
echo "outcomes: $(for n in a1 a2 a3 b1 b2 b3; do jget "$(cat "$T/ctx.$n")" 'j["report"]["fold"]["outcome"]'; done | tr '\n' ' ')"
# a later build on either node uses that summary and folds nothing
at B req POST "/v1/sessions/$S/context" '{"strategy":"chunked","max_tokens":3000}'
eq "$(jget "$OUT" 'j["report"]["fold"]["outcome"]')" none "a later build on node B folds nothing more"
ok mn events "$S" --limit 100 --json
eq "$(jget "$OUT" 'len([e for e in j if e["kind"] == "compaction" and e["data"]["outcome"] == "ok"])')" 1 \
    "still one fold"

node_stop A
node_stop B
finish
