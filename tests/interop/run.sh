#!/bin/sh
# run.sh [SUITE] — the interop tests (ctest interop/node; interop/mem0 with SUITE mem0): real
# clients from npm, pinned in package.json and package-lock.json (of tests/interop, or of its
# SUITE folder, with that folder's .npmrc), against the built `mnemo`. Installs them with `npm ci`
# into $BUILD_DIR/interop[-SUITE] (npm cache there too), then runs `node --test`. Skips nothing:
# without node/npm or the registry, it fails and says why.
set -eu
here=$(cd "$(dirname "$0")${1:+/$1}" && pwd)
: "${BUILD_DIR:?BUILD_DIR must name the build directory}"
: "${MNEMO:?MNEMO must name the mnemo binary}"
command -v node >/dev/null 2>&1 || { echo "interop: node is not installed (scripts/install-deps installs nodejs and npm)"; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "interop: npm is not installed (scripts/install-deps installs it)"; exit 1; }
work=$BUILD_DIR/interop${1:+-$1}
mkdir -p "$work" "${MNEMO_TEST_TMP:-/tmp}"
cp "$here/package.json" "$here/package-lock.json" "$here"/*.test.mjs "$work/"
[ ! -f "$here/.npmrc" ] || cp "$here/.npmrc" "$work/"
cp "$(dirname "$0")/server.mjs" "$work/" # what the suites share
cd "$work"
if ! cmp -s package-lock.json node_modules/.mnemo-lock 2>/dev/null; then
    npm ci --cache "$work/.npm-cache" --no-audit --no-fund --loglevel=error >npm.log 2>&1 || {
        cat npm.log
        echo "interop: npm ci failed (is the npm registry reachable?)"
        exit 1
    }
    cp package-lock.json node_modules/.mnemo-lock
fi
exec node --test --test-concurrency=1 ./*.test.mjs
