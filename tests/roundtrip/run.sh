#!/bin/sh
# run.sh — the cross-language round trip (ctest interop/roundtrip; pg/interop/roundtrip with
# MNEMO_TEST_PG_URL set): python/tests/setup.sh installs the Python package into the build's
# venv, js/test/build.sh builds @mnemo/client in $BUILD_DIR/js, then roundtrip.mjs runs Python,
# the CLI, `mnemo serve` and the TypeScript client on one database and compares what they read.
#
# Environment: MNEMO (the built `mnemo`), MNEMO_BUILT_LIBRARY (the built libmnemo.so), BUILD_DIR,
# MNEMO_SOURCE_DIR, MNEMO_TEST_TMP; CC (to find the ASan runtime python needs with an ASan build).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${MNEMO:?}" "${MNEMO_SOURCE_DIR:?}"
. "$MNEMO_SOURCE_DIR/python/tests/setup.sh"
sh "$MNEMO_SOURCE_DIR/js/test/build.sh"
export MNEMO_VENV_PYTHON MNEMO_PY_PRELOAD MNEMO_PY_ASAN_OPTIONS MNEMO_JS_DIR="$BUILD_DIR/js"
exec node --test "$here/roundtrip.mjs"
