#!/bin/sh
# run_tokbench.sh — mnemo's BPE tokenizers beside the npm peers, in one run, on the shared corpus.
# usage (from the repository root):
#   sh bench/tok/run_tokbench.sh [RUNS] [DATADIR] [TOKBENCH] [PEERS]
#     RUNS      processes per (package, encoding), default 3
#     DATADIR   corpus folder (corpus.txt, corpus_docs.tsv), default /tmp/peers-data; built with
#               ../shared/bench/tok/build_corpus.sh when missing
#     TOKBENCH  the mnemo-tokbench binary, default build/tok/mnemo-tokbench
#     PEERS     1 (default) to run the npm peers too (installed into /tmp/npm-tok), 0 to skip
# Writes bench/tok/results/{bench.txt,load.txt,verify.txt,summary.txt}.
set -eu
RUNS=${1:-3}
DATA=${2:-/tmp/peers-data}
TOKBENCH=${3:-build/tok/mnemo-tokbench}
PEERS=${4:-1}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=$ROOT/../shared/bench/tok
OUT=$ROOT/bench/tok/results
RANKS=$ROOT/build/share/mnemo
mkdir -p "$OUT"
[ -x "$TOKBENCH" ] || { echo "run_tokbench: $TOKBENCH not built (cmake --build ... --target mnemo-tokbench)" >&2; exit 1; }
"$ROOT/scripts/fetch-ranks" >/dev/null
[ -f "$DATA/corpus.txt" ] || bash "$SHARED/build_corpus.sh" "$DATA"
export TOK_NODE_MODULES_DIR=${TOK_NODE_MODULES_DIR:-/tmp/npm-tok}
if [ "$PEERS" = 1 ] && [ ! -d "$TOK_NODE_MODULES_DIR/node_modules/gpt-tokenizer" ]; then
    mkdir -p "$TOK_NODE_MODULES_DIR" && (cd "$TOK_NODE_MODULES_DIR" && npm init -y >/dev/null &&
        npm install tiktoken@1.0.22 js-tiktoken@1.0.21 gpt-tokenizer@4.0.0)
fi

"$TOKBENCH" -d "$RANKS" verify "$ROOT/../shared/bench/results/tok/token_counts.tsv" "$DATA/corpus.txt" | tee "$OUT/verify.txt"
: > "$OUT/load.txt"
for e in cl100k_base o200k_base; do
    "$TOKBENCH" -d "$RANKS" -r 11 load $e | tee -a "$OUT/load.txt"
done
: > "$OUT/bench.txt"
for i in $(seq 1 "$RUNS"); do
    for e in cl100k_base o200k_base; do
        "$TOKBENCH" -d "$RANKS" -r 3 count $e "$DATA/corpus.txt" >> "$OUT/bench.txt"
        "$TOKBENCH" -d "$RANKS" -r 3 encode $e "$DATA/corpus.txt" >> "$OUT/bench.txt"
        if [ "$PEERS" = 1 ]; then
            for p in gpt-tokenizer tiktoken js-tiktoken; do
                node "$SHARED/bench_tok.cjs" $p $e "$DATA" 3 >> "$OUT/bench.txt"
            done
        fi
    done
    echo "run_tokbench: run $i of $RUNS done"
done
python3 "$SHARED/summarize_tok.py" "$OUT/bench.txt" | tee "$OUT/summary.txt"
