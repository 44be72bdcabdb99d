#!/bin/sh
# run.sh — the fault suite's long runs: each scenario of tests/cli/faults.py (the checker and the
# scenarios t1550-nodes-faults.sh runs for a few seconds each) repeated for SECONDS against
# `mnemo serve` nodes on a throwaway PostgreSQL (tests/pg/pgctl.sh, in /tmp), then the table of
# docs/scale-out.md: scenario, appends sent, acknowledged, lost, duplicated, seq gaps, real-time
# order violations, the longest recovery after a fault and the slowest acknowledged append.
# usage: sh bench/faults/run.sh [SECONDS [SCENARIO...]]
#   SECONDS: per scenario (default 30); SCENARIO: any of faults.py's (default: all of them)
#   env: MNEMO (default build/rel/mnemo). Each scenario's report (JSON) is kept in $OUT
#   (default /tmp/mnemo-faults.jsonl); the table goes to standard output.
# needs: postgresql (server), psql, python3.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MNEMO=${MNEMO:-$ROOT/build/rel/mnemo}
OUT=${OUT:-/tmp/mnemo-faults.jsonl}
SECONDS_EACH=${1:-30}
[ $# -gt 0 ] && shift
SCENARIOS=${*:-terminate commit-lost sigstop busy sigkill sigterm pg-fast pg-immediate}
[ -x "$MNEMO" ] || { echo "bench/faults: $MNEMO not found (make, or MNEMO=path)" >&2; exit 1; }
W=$(mktemp -d /tmp/mnemo-faults.XXXXXX)
chmod 755 "$W" # the server runs as postgres under root: it must reach $W/pg
PGDIR=$W/pg
cleanup() {
    (cd / && sh "$ROOT/tests/pg/pgctl.sh" stop "$PGDIR") || true
    rm -rf "$W"
}
trap cleanup EXIT INT TERM
BASE=$(cd / && sh "$ROOT/tests/pg/pgctl.sh" start "$PGDIR")
: >"$OUT"
for s in $SCENARIOS; do
    echo "bench/faults: $s, $SECONDS_EACH s" >&2
    python3 "$ROOT/tests/cli/faults.py" "$s" --long --seconds "$SECONDS_EACH" --mnemo "$MNEMO" --base "$BASE" \
        --pgdir "$PGDIR" --work "$W/$s" >>"$OUT" 2>"$W/$s.err" ||
        { echo "bench/faults: $s failed:" >&2; tail -5 "$W/$s.err" >&2; }
done
python3 - "$OUT" <<'EOF'
import json, sys
print("| scenario | s | sent | acknowledged | lost | duplicated | gaps | order violations | error but stored"
      " | recovery | slowest ack |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for line in open(sys.argv[1]):
    j = json.loads(line)
    ms = lambda v: "-" if v is None else ("%d ms" % v if v < 10000 else "%.1f s" % (v / 1000))
    print("| %s | %.0f | %d | %d | %d | %d | %d | %d | %d | %s | %s |" % (
        j["scenario"], j["seconds"], j["sent"], j["acknowledged"], j["lost"], j["duplicated"], j["gaps"],
        j["order_violations"], j["error_but_stored"], ms(j["recovery_ms"]), ms(j["max_latency_ms"])))
EOF
