#!/bin/sh
# bench/memory.sh [RUNS] [DATADIR] — the long-term memory benchmark (bench/README.md "Long-term
# memory"): recall with the offline extractor (keyword, semantic and hybrid with the hash
# embedder) and with the llm extractor against the scripted fake LLM (tests/fake_llm, model
# "update"); memory search/list latency on MEMORIES memories (default 100,000) RUNS times
# (default 3); append throughput with memory.extract off and offline, alternating, RUNS times.
# Raw output: bench/results/memory_{recall,latency,append}.txt. Needs node for the llm run.
# Builds memory-bench in $BUILD (default build/rel, Release, MNEMO_BENCH=ON).
set -eu
RUNS=${1:-3}
DATA=${2:-/tmp/mnemo-memory-bench}
BUILD=${BUILD:-build/rel}
USERS=${USERS:-100}
MEMORIES=${MEMORIES:-100000}
APPENDS=${APPENDS:-20000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT="$ROOT/bench/results"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON -DMNEMO_TESTS=OFF >/dev/null
cmake --build "$BUILD" --target memory-bench -j2 >/dev/null
MB="$BUILD/memory-bench"
mkdir -p "$DATA" "$OUT"
note() { echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD) $1; uptime:$(uptime | sed 's/.*load/ load/')"; }

# 1-2. recall
{
  note "recall offline: $MB recall --db $DATA/recall_offline.db --users $USERS --embedder hash"
  "$MB" recall --db "$DATA/recall_offline.db" --users "$USERS" --embedder hash --truth "$DATA/truth.jsonl"
  : >"$DATA/fake.out"
  node "$ROOT/tests/fake_llm/fake_memory_llm.js" >"$DATA/fake.out" &
  FAKE=$!
  trap 'kill $FAKE 2>/dev/null || true' EXIT
  i=0
  while ! grep -q PORT "$DATA/fake.out" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  PORT=$(sed -n 's/^PORT //p' "$DATA/fake.out")
  note "recall llm: $MB recall --db $DATA/recall_llm.db --users $USERS --extractor llm --llm-url http://127.0.0.1:PORT --llm-model update"
  "$MB" recall --db "$DATA/recall_llm.db" --users "$USERS" --extractor llm --llm-url "http://127.0.0.1:$PORT" --llm-model update
  kill $FAKE 2>/dev/null || true
  trap - EXIT
} | tee "$OUT/memory_recall.txt"

# 3. latency on a large store (built once per invocation)
{
  note "build: $MB build --db $DATA/mem_$MEMORIES.db --n $MEMORIES --users 1000"
  "$MB" build --db "$DATA/mem_$MEMORIES.db" --n "$MEMORIES" --users 1000
  r=1
  while [ $r -le "$RUNS" ]; do
    note "run=$r latency: $MB latency --db $DATA/mem_$MEMORIES.db --users 1000 --queries 200"
    "$MB" latency --db "$DATA/mem_$MEMORIES.db" --users 1000 --queries 200
    r=$((r + 1))
  done
} | tee "$OUT/memory_latency.txt"

# 4. the cost of background extraction
{
  r=1
  while [ $r -le "$RUNS" ]; do
    for x in off offline; do
      note "run=$r append: $MB append --db $DATA/append.db --n $APPENDS --sessions 50 --extract $x"
      "$MB" append --db "$DATA/append.db" --n "$APPENDS" --sessions 50 --extract $x
    done
    r=$((r + 1))
  done
} | tee "$OUT/memory_append.txt"
