#!/bin/sh
# run_cli_tokens.sh — `mnemo tokens` as a whole process (exec, load the ranks, read the file,
# count, print) on the shared corpus, beside the npm peers' whole-corpus encode in the same run.
# usage (from the repository root):
#   sh bench/tok/run_cli_tokens.sh [RUNS] [DATADIR] [MNEMO...]
#     RUNS     rounds, default 3 (medians reported)
#     DATADIR  corpus folder (corpus.txt), default /tmp/peers-data (../shared/bench/tok/build_corpus.sh)
#     MNEMO    one or more mnemo binaries to time (e.g. a build before and after a change),
#              default build/rel/mnemo
# Environment: ENCODINGS (default "cl100k_base o200k_base"), PEER_REPS (passes per peer process,
# default 3; 1 on a busy machine), MNEMO_REPS (mnemo processes per binary and encoding in each
# round, default 5: a process takes ~0.1 s, so more samples cost little and steady the median),
# MNEMO_ARGS (extra options for every mnemo run, e.g. "--threads 1").
# Writes bench/tok/results/cli_tokens.txt. Peers: node ../shared/bench/tok/bench_tok.cjs (their
# whole-corpus encode, in process: the figure the issue compares against), packages in
# $TOK_NODE_MODULES_DIR (default /tmp/npm-tok; installed like run_tokbench.sh does).
set -eu
RUNS=${1:-3}
DATA=${2:-/tmp/peers-data}
[ $# -gt 2 ] && shift 2 || set --
[ $# -gt 0 ] || set -- build/rel/mnemo
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=$ROOT/../shared/bench/tok
[ -d "$SHARED" ] || SHARED=/work/shared/bench/tok
OUT=$ROOT/bench/tok/results/cli_tokens.txt
export MNEMO_DATA_DIR=${MNEMO_DATA_DIR:-$ROOT/build/share/mnemo}
export TOK_NODE_MODULES_DIR=${TOK_NODE_MODULES_DIR:-/tmp/npm-tok}
BYTES=$(stat -c %s "$DATA/corpus.txt")
ENCODINGS=${ENCODINGS:-"cl100k_base o200k_base"}
PEER_REPS=${PEER_REPS:-3}
MNEMO_REPS=${MNEMO_REPS:-5}
MNEMO_ARGS=${MNEMO_ARGS:-}
mkdir -p "$(dirname "$OUT")"
: > "$OUT.raw"
for r in $(seq 1 "$RUNS"); do
    for m in "$@"; do
        for e in $ENCODINGS; do
            for k in $(seq 1 "$MNEMO_REPS"); do
                s=$(date +%s%N)
                n=$("$m" tokens --encoding $e $MNEMO_ARGS "$DATA/corpus.txt")
                t=$(date +%s%N)
                echo "mnemo-cli bin=$m enc=$e tokens=$n mbs=$(python3 -c "print(round($BYTES/(($t-$s)/1e9)/1e6,2))")" >> "$OUT.raw"
            done
        done
    done
    for p in gpt-tokenizer tiktoken; do
        for e in $ENCODINGS; do
            echo "peer=$p enc=$e $(node "$SHARED/bench_tok.cjs" $p $e "$DATA" "$PEER_REPS")" >> "$OUT.raw"
        done
    done
    echo "run_cli_tokens: round $r of $RUNS done (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done
python3 - "$OUT.raw" <<'PY' | tee "$OUT"
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kv = dict(re.findall(r'(\S+?)=(\S+)', line))
    if line.startswith('mnemo-cli'):
        key, v = ('mnemo tokens (whole process) ' + kv['bin'], kv['enc']), float(kv['mbs'])
    else:
        key, v = (kv['peer'] + ' (in process, whole corpus)', kv['enc']), float(kv['full_mbs_median'])
    rows.setdefault(key, []).append(v)
best = {}
for (name, enc), v in rows.items():
    if not name.startswith('mnemo'):
        best[enc] = max(best.get(enc, 0), statistics.median(v))
print('| implementation | encoding | MB/s median (min-max) | x fastest peer |')
print('| --- | --- | --- | --- |')
for (name, enc), v in sorted(rows.items(), key=lambda x: (x[0][1], x[0][0])):
    m = statistics.median(v)
    print(f'| {name} | {enc} | {m:.1f} ({min(v):.1f}-{max(v):.1f}) | {m / best[enc]:.2f} |')
PY
