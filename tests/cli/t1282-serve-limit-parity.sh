#!/bin/sh
# t1282-serve-limit-parity.sh — every range the operation table declares is kept alike by the CLI, REST,
# MCP, the Python package and the TypeScript client (tests/cli/serve/limits.py: min-1 and max+1
# refused, min and max accepted, for each integer or number parameter of each operation bound to
# a command; the cases come from `mnemo api --json`). Fails too when a case has no Python call.
# A limit changed in ops.c changes all five: the CLI, REST and MCP read the table; the Python
# package's python/mnemo/_limits.py is generated from it and lint/generated-limits fails when it is
# stale; the TypeScript client's src/generated.ts is generated again on every build
# (js/test/build.sh: `npm run build` runs scripts/generate.mjs on this build's /openapi.json), and
# limits.py checks that the built client's RANGES are the table's. Without node or npm, or when
# the client does not build, this fails (scripts/install-deps installs them), never skips.
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

# the built @mnemo/client in $BUILD_DIR/js, as js/node builds it (the same folder, the same lock)
run sh "$TESTS_DIR/../js/test/build.sh"
[ "$RC" -eq 0 ] || printf '%s\n' "$OUT" "$ERR" | tail -n 20 >&2
eq "$RC" 0 "js/test/build.sh builds the TypeScript client"

serve_start
run python3 "$TESTS_DIR/cli/serve/limits.py" "$MNEMO" "$DB" "$URL" "$LIB" "$PRELOAD" "$BUILD_DIR/js"
printf '%s\n' "$OUT" | grep -v '^limits:' | head -60 >&2
eq "$RC" 0 "the CLI, REST, MCP, Python and TypeScript keep every declared range ($(printf '%s\n' "$OUT" | tail -n1))"
serve_stop
finish
