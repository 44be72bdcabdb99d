#!/bin/sh
# t1282-serve-limit-parity.sh — every range the operation table declares is kept alike by the CLI, REST,
# MCP and the Python package (tests/cli/serve/limits.py: min-1 and max+1 refused, min and max
# accepted, for each integer or number parameter of each operation bound to a command; the cases
# come from `mnemo api --json`). Fails too when a case has no Python call.
# pg variant: none — the ranges are checked before any store is reached; the store under the
# accepted values is the same code either way (t1297's results cover the operations themselves).
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

: "${BUILD_DIR:?BUILD_DIR must name the build folder (libmnemo.so for the Python part)}"
LIB=$BUILD_DIR/libmnemo.so
# An AddressSanitizer libmnemo loads into python only after the runtime (python/tests/setup.sh)
PRELOAD=
if nm -D "$LIB" 2>/dev/null | grep -q ' U __asan_init'; then
    PRELOAD=$("${CC:-clang}" -print-file-name=libclang_rt.asan-x86_64.so)
    [ -f "$PRELOAD" ] || PRELOAD=$("${CC:-clang}" -print-file-name=libasan.so)
fi

serve_start
run python3 "$TESTS_DIR/cli/serve/limits.py" "$MNEMO" "$DB" "$URL" "$LIB" "$PRELOAD"
printf '%s\n' "$OUT" | grep -v '^limits:' | head -60 >&2
eq "$RC" 0 "the CLI, REST, MCP and Python keep every declared range ($(printf '%s\n' "$OUT" | tail -n1))"
serve_stop
finish
