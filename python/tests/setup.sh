# setup.sh — sourced by python/tests/run.sh (python/pytest) and tests/interop/roundtrip/run.sh:
# installs the package the way python/README.md says, by running its install block as written
# (the first ```sh block after `<!-- example: run -->`: a venv made from Debian's python3 with
# --system-site-packages, whose setuptools, wheel and pytest are Debian's, and pip with no package
# index) in $BUILD_DIR/python/tree, a copy laid out as the repository: python/ and
# build/libmnemo.so, the fresh build, which the install bundles. No index is reachable meanwhile.
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
_tree="$BUILD_DIR/python/tree"
# A copy, so that the source tree gets no build/ or egg-info litter.
rm -rf "$_tree/python"
mkdir -p "$_tree/python" "$_tree/build"
(cd "$MNEMO_SOURCE_DIR/python" && tar cf - --exclude=build --exclude='*.egg-info' --exclude=__pycache__ \
    --exclude='libmnemo.so*' --exclude=.venv .) | (cd "$_tree/python" && tar xf -)
ln -sf "$MNEMO_BUILT_LIBRARY" "$_tree/build/libmnemo.so"
_install=$(awk '/^<!-- example: run -->$/ { m = 1; next }
    m && /^```sh$/ { b = 1; m = 0; next }
    b && /^```/ { exit }
    b { print }
    m && !/^$/ { m = 0 }' "$_tree/python/README.md")
[ -n "$_install" ] || { echo "python: python/README.md has no install block marked <!-- example: run -->" >&2; exit 1; }
(cd "$_tree" && env -u MNEMO_BUILD_LIBRARY PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_DISABLE_PIP_VERSION_CHECK=1 \
    sh -eu -c "$_install") >"$BUILD_DIR/python/install.log" 2>&1 || {
    cat "$BUILD_DIR/python/install.log" >&2
    echo "python: python/README.md's install block failed (scripts/install-deps test installs" \
        "python3-venv, python3-pip and python3-setuptools)" >&2
    exit 1
}

MNEMO_VENV_PYTHON="$_tree/.venv/bin/python"
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
