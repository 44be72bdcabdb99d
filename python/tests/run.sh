#!/bin/sh
# The Python package's test, as ctest runs it (python/pytest, and pg/python/pytest with
# MNEMO_TEST_PG_URL set: conftest.py then opens a fresh PostgreSQL database per test): setup.sh
# makes the venv and installs the package with the freshly built libmnemo bundled (by
# python/README.md's install block, as written), then pytest runs over python/tests.
#
# Environment: MNEMO_BUILT_LIBRARY (the built libmnemo.so), MNEMO_CLI (the built `mnemo`),
# BUILD_DIR, MNEMO_SOURCE_DIR; CC (the compiler, to find the ASan runtime). Extra arguments go to
# pytest.
set -eu
: "${MNEMO_CLI:?}" "${MNEMO_SOURCE_DIR:?}"
export MNEMO_CLI MNEMO_SOURCE_DIR  # the tests read fixtures under tests/data
. "$(dirname "$0")/setup.sh"
if [ -n "$MNEMO_PY_PRELOAD" ]; then
    export LD_PRELOAD="$MNEMO_PY_PRELOAD" ASAN_OPTIONS="$MNEMO_PY_ASAN_OPTIONS"
fi
cd "$BUILD_DIR/python"
exec "$MNEMO_VENV_PYTHON" -m pytest -q -p no:cacheprovider "$BUILD_DIR/python/tree/python/tests" "$@"
