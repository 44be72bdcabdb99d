#!/bin/sh
# run.sh — builds locomo-bench (Release) and runs the LoCoMo answer-in-context benchmark: the main
# table (every strategy x retrieval mode x budget, tuning and held-out halves), the hash embedder
# without its similarity threshold, the plain default call with the built-in configuration, and
# the build latency at 100k messages (and 1M without the hash rows).
#
#   sh bench/locomo/run.sh [DATA_DIR] [BUILD_DIR] [OUT_DIR]
#
# DATA_DIR: LoCoMo's conversation files (default /tmp/locomo/data/multimodal_dialog/locomo10_v2).
# The data is not in this repository (its licence): get it with
#   git clone https://github.com/snap-research/locomo /tmp/locomo-repo
#   unzip /tmp/locomo-repo/data/locomo10.zip -d /tmp/locomo
# BUILD_DIR: default /tmp/build-loco. OUT_DIR: default bench/locomo/results (main.txt/.tsv,
# hash-nothreshold.txt/.tsv, builtin-defaults.txt/.tsv, latency.txt, latency-builtin.txt,
# latency-1m.txt).
# PICK: the configuration the tables use, as --set options (default: the tuning sweep's pick,
# sweep.sh, "--set memory.rag.share_percent=30 --set memory.rag.top_k=40"; PICK= for none).
# DBTMP: where the per-cell databases go (default /dev/shm when writable, else /tmp: on disk the
# rate tables take ten times longer); the latency corpus always goes to /tmp (LATTMP).
# LATENCY_1M=0 skips the 1M-message latency run (about 6 minutes).
# Tokens are counted with cl100k_base from TOKDIR (default build/share/mnemo of this tree, where
# scripts/fetch-ranks puts the rank file); TOKENIZER=heuristic counts without it.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DATA=${1:-/tmp/locomo/data/multimodal_dialog/locomo10_v2}
BUILD=${2:-/tmp/build-loco}
OUT=${3:-$ROOT/bench/locomo/results}
PICK=${PICK---set memory.rag.share_percent=30 --set memory.rag.top_k=40}
if [ -z "${DBTMP:-}" ]; then
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then DBTMP=/dev/shm; else DBTMP=/tmp; fi
fi
LATTMP=${LATTMP:-/tmp}
if ! ls "$DATA"/*.json >/dev/null 2>&1; then
    echo "run.sh: no LoCoMo *.json files in $DATA" >&2
    echo "  git clone https://github.com/snap-research/locomo /tmp/locomo-repo && unzip /tmp/locomo-repo/data/locomo10.zip -d /tmp/locomo" >&2
    exit 1
fi
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON -DMNEMO_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j2 --target locomo-bench >/dev/null
TOKENIZER=${TOKENIZER:-cl100k_base}
TOKDIR=${TOKDIR:-$ROOT/build/share/mnemo}
if [ "$TOKENIZER" = heuristic ]; then
    TOK="--tokenizer heuristic"
elif [ -f "$TOKDIR/$TOKENIZER.tiktoken" ]; then
    TOK="--tokenizer $TOKENIZER --token-data $TOKDIR"
else
    echo "run.sh: no $TOKDIR/$TOKENIZER.tiktoken: run scripts/fetch-ranks, or set TOKDIR, or TOKENIZER=heuristic" >&2
    exit 1
fi
mkdir -p "$OUT"
B="$BUILD/locomo-bench $TOK --data $DATA"
# shellcheck disable=SC2086 # PICK is a list of options
$B --tmp "$DBTMP" --split $PICK --out "$OUT/main.tsv" | tee "$OUT/main.txt"
# shellcheck disable=SC2086
$B --tmp "$DBTMP" --split $PICK --modes hash --rag-min-sim -1 --strategies window,summary,chunked,hybrid \
    --out "$OUT/hash-nothreshold.tsv" | tee "$OUT/hash-nothreshold.txt"
$B --tmp "$DBTMP" --split --modes default --strategies window,summary,chunked,hybrid,config \
    --out "$OUT/builtin-defaults.tsv" | tee "$OUT/builtin-defaults.txt"
# shellcheck disable=SC2086
$B --tmp "$LATTMP" --latency $PICK | tee "$OUT/latency.txt"
$B --tmp "$LATTMP" --latency --modes off,keyword,default | tee "$OUT/latency-builtin.txt"
if [ "${LATENCY_1M:-1}" != 0 ]; then
    # shellcheck disable=SC2086
    $B --tmp "$LATTMP" --latency $PICK --modes off,keyword,default --latency-messages 1000000 \
        | tee "$OUT/latency-1m.txt"
fi
