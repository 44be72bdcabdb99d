# setup.sh — sourced by python/tests/run.sh (python/pytest) and tests/interop/roundtrip/run.sh:
# a virtual environment in the build directory made from Debian's python3 (--system-site-packages:
# pytest and setuptools come from python3-pytest and python3-setuptools), the package installed
# into it with pip, offline, with the freshly built libmnemo bundled.
#
# Environment: MNEMO_BUILT_LIBRARY (the built libmnemo.so), BUILD_DIR, MNEMO_SOURCE_DIR; CC (the
# compiler, to find the ASan runtime: clang's or GCC's). Sets:
#   MNEMO_VENV_PYTHON  the venv's python
#   MNEMO_PY_PRELOAD   what python needs in LD_PRELOAD: empty, or the ASan runtime when libmnemo is
#                      an AddressSanitizer build (it cannot be loaded into an uninstrumented python
#                      unless the runtime comes first); then MNEMO_PY_ASAN_OPTIONS turns leak
#                      detection off for the interpreter (Python's own allocations at exit are not
#                      leaks of ours). Only python gets them: `mnemo` and node link or need no
#                      runtime of their own.
# and exports MNEMO_LIBRARY, the library the package loads.
: "${MNEMO_BUILT_LIBRARY:?}" "${BUILD_DIR:?}" "${MNEMO_SOURCE_DIR:?}"
_py=/usr/bin/python3  # Debian's, never a pyenv shim that may come first on PATH
_work="$BUILD_DIR/python"
_venv="$_work/venv"
mkdir -p "$_work"
if [ ! -x "$_venv/bin/python" ]; then
    "$_py" -m venv --system-site-packages "$_venv" || {
        echo "python: cannot create a venv: install python3-venv (scripts/install-deps)" >&2; exit 1; }
fi
# Build from a copy so that the source tree gets no build/ or egg-info litter.
rm -rf "$_work/src"
mkdir -p "$_work/src"
(cd "$MNEMO_SOURCE_DIR/python" && tar cf - --exclude=build --exclude='*.egg-info' --exclude=__pycache__ \
    --exclude='libmnemo.so*' .) | (cd "$_work/src" && tar xf -)
MNEMO_BUILD_LIBRARY="$MNEMO_BUILT_LIBRARY" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$_venv/bin/python" -m pip install -q --no-build-isolation --no-index --no-deps --force-reinstall "$_work/src"

MNEMO_VENV_PYTHON="$_venv/bin/python"
MNEMO_PY_PRELOAD=
MNEMO_PY_ASAN_OPTIONS=
export MNEMO_LIBRARY="$MNEMO_BUILT_LIBRARY"
if nm -D "$MNEMO_BUILT_LIBRARY" 2>/dev/null | grep -q ' U __asan_init'; then
    MNEMO_PY_PRELOAD=$("${CC:-clang}" -print-file-name=libclang_rt.asan-x86_64.so)
    # a GCC build links GCC's runtime (libasan.so), which clang's name does not find
    [ -f "$MNEMO_PY_PRELOAD" ] || MNEMO_PY_PRELOAD=$("${CC:-clang}" -print-file-name=libasan.so)
    [ -f "$MNEMO_PY_PRELOAD" ] || { echo "python: ASan build but no ASan runtime at '$MNEMO_PY_PRELOAD'" >&2; exit 1; }
    MNEMO_PY_ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
fi
