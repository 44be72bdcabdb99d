#!/bin/sh
# fold-latency.sh — context latency through `mnemo serve` while a fold is due on every request:
# with a summariser that hangs (tests/fake_llm/fake_llm.js model "hang", 30 s) against no
# summariser (summarizer.name none). Folds run in the background (seed 004 §9.2), so the two
# should be alike. Prints p50 and p99 of N sequential POST …/context (curl's time_total).
#   usage: bench/fold-latency.sh [MNEMO_BINARY] [N]     (needs node, curl, python3)
#   e.g. cmake -S . -B build/rel -DCMAKE_BUILD_TYPE=Release && cmake --build build/rel --target mnemo_cli
#        bench/fold-latency.sh build/rel/mnemo 200
set -eu
MNEMO=${1:-build/mnemo}
N=${2:-200}
D=$(mktemp -d)
trap 'kill $LLM $SRV 2>/dev/null || true; rm -rf "$D"' EXIT
node "$(dirname "$0")/../tests/fake_llm/fake_llm.js" >"$D/llm" &
LLM=$!
while [ ! -s "$D/llm" ]; do sleep 0.1; done
LPORT=$(sed -n 's/^PORT //p' "$D/llm")
export MNEMO_TOKENIZER=heuristic MNEMO_MAX_HISTORY_MESSAGES=8 MNEMO_SUMMARIZER_RETRIES=0
run() { # NAME SUMMARIZER MODEL
    rm -f "$D/db.sqlite"* "$D/url"
    MNEMO_SUMMARIZER=$2 MNEMO_SUMMARIZER_MODEL=$3 MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:$LPORT \
        "$MNEMO" --db "$D/db.sqlite" serve --listen 127.0.0.1:0 >"$D/url" 2>"$D/err" &
    SRV=$!
    while [ ! -s "$D/url" ]; do
        kill -0 $SRV 2>/dev/null || { cat "$D/err" >&2; exit 1; }
        sleep 0.1
    done
    URL=$(head -n1 "$D/url")
    S=$(curl -s -H "Content-Type: application/json" -X POST "$URL/v1/sessions" -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"]["id"])')
    i=0
    while [ $i -lt 40 ]; do
        curl -s -o /dev/null -H "Content-Type: application/json" -X POST "$URL/v1/sessions/$S/messages" -d "{\"role\":\"user\",\"content\":\"question $i about src/mod$i.c and its tests\"}"
        curl -s -o /dev/null -H "Content-Type: application/json" -X POST "$URL/v1/sessions/$S/messages" -d "{\"role\":\"assistant\",\"content\":\"answer $i: changed it, tests pass\"}"
        i=$((i + 1))
    done
    : >"$D/times"
    i=0
    while [ $i -lt "$N" ]; do
        curl -s -o /dev/null -H "Content-Type: application/json" -w '%{time_total}\n' -X POST "$URL/v1/sessions/$S/context" \
            -d '{"strategy":"summary","max_tokens":2000}' >>"$D/times"
        i=$((i + 1))
    done
    python3 - "$1" "$D/times" <<'PY'
import sys
t = sorted(float(x) * 1000 for x in open(sys.argv[2]))
q = lambda p: t[min(len(t) - 1, int(p * len(t)))]
print(f"{sys.argv[1]:<28} n={len(t)}  p50 {q(0.5):.2f} ms  p99 {q(0.99):.2f} ms")
PY
    kill -TERM $SRV
    wait $SRV || true
}
run "no summariser (none)" none x
run "hanging summariser (30 s)" llm hang
