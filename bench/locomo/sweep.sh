#!/bin/sh
# sweep.sh — the tuning sweep of memory.rag.share_percent x memory.rag.top_k on the TUNING half of
# LoCoMo only (--half tune: no held-out question is ever asked), keyword retrieval (no embedder),
# strategy window (window/keyword and the plain default call, config/default), budget 4000.
# Prints one line per setting: tuning-half rate of each row, mean tokens, RAG injections.
#
#   sh bench/locomo/sweep.sh [DATA_DIR] [BUILD_DIR] [OUT_DIR]
#
# SHARES, TOPKS, BUDGETS override the grid (default 20..70, 10 20 40, 4000). Raw TSVs go to
# OUT_DIR/sweep/ (default bench/locomo/results/sweep/), the table to stdout. DBTMP: where the
# databases go (default /tmp; /dev/shm spares the disk).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DATA=${1:-/tmp/locomo/data/multimodal_dialog/locomo10_v2}
BUILD=${2:-/tmp/build-loco}
OUT=${3:-$ROOT/bench/locomo/results}
SHARES=${SHARES:-20 30 40 50 60 70}
TOPKS=${TOPKS:-10 20 40}
BUDGETS=${BUDGETS:-4000}
TOKENIZER=${TOKENIZER:-cl100k_base}
TOKDIR=${TOKDIR:-$ROOT/build/share/mnemo}
if [ "$TOKENIZER" = heuristic ]; then TOK="--tokenizer heuristic"; else TOK="--tokenizer $TOKENIZER --token-data $TOKDIR"; fi
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON -DMNEMO_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j2 --target locomo-bench >/dev/null
mkdir -p "$OUT/sweep"
echo "| budget | share_percent | top_k | window/keyword (tuning) | config/default (tuning) | mean tokens | RAG injected | RAG msgs, tokens | no room |"
echo "|---|---|---|---|---|---|---|---|---|"
for b in $BUDGETS; do
    for s in $SHARES; do
        for k in $TOPKS; do
            f="$OUT/sweep/b$b-s$s-k$k.tsv"
            # shellcheck disable=SC2086 # TOK is a list of options
            "$BUILD/locomo-bench" $TOK --data "$DATA" --tmp "${DBTMP:-/tmp}" --half tune --budgets "$b" --strategies window,config \
                --modes keyword,default --set memory.rag.share_percent="$s" --set memory.rag.top_k="$k" \
                --out "$f" >/dev/null 2>&1
            awk -F'\t' -v b="$b" -v s="$s" -v k="$k" '
                $4 == "tune" && $1 == "window" && $2 == "keyword" { wk = sprintf("%.1f%% (%d/%d)", 100*$7, $5, $6); tok = $8; inj = $10 "/" $9; rt = sprintf("%.1f, %.0f", $19, $20); nr = $11 }
                $4 == "tune" && $1 == "config" && $2 == "default" { cd = sprintf("%.1f%% (%d/%d)", 100*$7, $5, $6) }
                END { printf "| %s | %s | %s | %s | %s | %.0f | %s | %s | %s |\n", b, s, k, wk, cd, tok, inj, rt, nr }' "$f"
        done
    done
done
