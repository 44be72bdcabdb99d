#!/bin/sh
# run.sh — builds and runs the fact-retention benchmark (retention.c) in a Release build and
# prints its tables, tuned set then held-out set. One command: sh bench/retention/run.sh
# [BUILD_DIR] (default build/rel). RETENTION_SET, RETENTION_MISSES, RETENTION_SHOW pass through
# (README.md).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build/rel}
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON >/dev/null
cmake --build "$BUILD" -j2 --target retention-bench >/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BUILD/retention-bench" "$TMP"
