#!/bin/sh
# The Python package's test, as ctest runs it (python/pytest): a virtual environment in the build
# directory made from Debian's python3 (--system-site-packages: pytest and setuptools come from
# python3-pytest and python3-setuptools), the package installed into it with pip, offline, with
# the freshly built libmnemo bundled, then pytest over python/tests.
#
# Environment: MNEMO_BUILT_LIBRARY (the built libmnemo.so), MNEMO_CLI (the built `mnemo`),
# BUILD_DIR, MNEMO_SOURCE_DIR; CC (the compiler, to find the ASan runtime). Extra arguments go to
# pytest. An AddressSanitizer build of libmnemo cannot be loaded into an uninstrumented python
# unless the ASan runtime comes first: it is preloaded then, with leak detection off for the
# interpreter (Python's own allocations at exit are not leaks of ours).
set -eu
: "${MNEMO_BUILT_LIBRARY:?}" "${MNEMO_CLI:?}" "${BUILD_DIR:?}" "${MNEMO_SOURCE_DIR:?}"
PY=/usr/bin/python3  # Debian's, never a pyenv shim that may come first on PATH
work="$BUILD_DIR/python"
venv="$work/venv"
mkdir -p "$work"
if [ ! -x "$venv/bin/python" ]; then
    "$PY" -m venv --system-site-packages "$venv" || {
        echo "python/pytest: cannot create a venv: install python3-venv (scripts/install-deps)" >&2; exit 1; }
fi
# Build from a copy so that the source tree gets no build/ or egg-info litter.
rm -rf "$work/src"
mkdir -p "$work/src"
(cd "$MNEMO_SOURCE_DIR/python" && tar cf - --exclude=build --exclude='*.egg-info' --exclude=__pycache__ \
    --exclude='libmnemo.so*' .) | (cd "$work/src" && tar xf -)
MNEMO_BUILD_LIBRARY="$MNEMO_BUILT_LIBRARY" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/python" -m pip install -q --no-build-isolation --no-index --no-deps --force-reinstall "$work/src"

export MNEMO_LIBRARY="$MNEMO_BUILT_LIBRARY" MNEMO_CLI
if nm -D "$MNEMO_BUILT_LIBRARY" 2>/dev/null | grep -q ' U __asan_init'; then
    rt=$("${CC:-clang}" -print-file-name=libclang_rt.asan-x86_64.so)
    [ -f "$rt" ] || { echo "python/pytest: ASan build but no ASan runtime at '$rt'" >&2; exit 1; }
    export LD_PRELOAD="$rt" ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
fi
cd "$work"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$work/src/tests" "$@"
