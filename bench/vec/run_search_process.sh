#!/bin/sh
# run_search_process.sh — what one `mnemo search --mode semantic` process costs on a large store:
# embeds a copy of STORE through the fake embeddings server (tests/fake_llm/fake_embed.js, 8
# dimensions, the vector index kept as the vectors are stored), then times fresh processes.
#   STORE=DIR/g1000.db [BIN=build/rel/mnemo] [DROP=1] sh bench/vec/run_search_process.sh
#     STORE  a mnemo database to copy (bench/growth.sh's g1000: 1M messages), with its .keywords
#     DROP   non-empty: drop the kernel's page cache before the first process (root)
#     W      work directory (default /tmp/mnemo-search-process); the embedded copy is kept there
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/build/rel/mnemo}
W=${W:-/tmp/mnemo-search-process}; mkdir -p "$W"
if [ ! -f "$W/s.db" ]; then
    cp "$STORE" "$W/s.db"
    if [ -f "$STORE.keywords" ]; then cp "$STORE.keywords" "$W/s.db.keywords"; fi
fi
node "$ROOT/tests/fake_llm/fake_embed.js" >"$W/port.txt" 2>&1 &
NP=$!
trap 'kill $NP' EXIT
for _ in $(seq 1 50); do grep -q PORT "$W/port.txt" && break; sleep 0.1; done
PORT=$(awk '/PORT/{print $2}' "$W/port.txt")
export MNEMO_EMBEDDER=openai MNEMO_EMBEDDER_MODEL=ok MNEMO_EMBEDDER_BASE_URL=http://127.0.0.1:$PORT/v1 \
    OPENAI_API_KEY=unused MNEMO_TOKENIZER=heuristic
if [ ! -f "$W/embedded" ]; then
    /usr/bin/time -f "embed wall_s=%e cpu_s=%U+%S maxrss_kb=%M" "$BIN" --db "$W/s.db" embed --backfill >/dev/null 2>"$W/embed.err"
    tail -n 1 "$W/embed.err"
    touch "$W/embedded"
fi
if [ -n "${DROP:-}" ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi
for q in "aistelson is" "the plan for tomorrow" "kadinmemwe kapro" "deconsh alorrure" "what did we decide"; do
    /usr/bin/time -f "process_s=%e cpu_s=%U+%S maxrss_kb=%M" "$BIN" --db "$W/s.db" search "$q" --mode semantic \
        --top-k 10 --json --report >"$W/q.out" 2>"$W/q.err"
    echo "query='$q' $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("hits=%d index=%s" % (len(d["hits"]), json.dumps(d["index"])))' "$W/q.out") $(tail -n 1 "$W/q.err")"
done
