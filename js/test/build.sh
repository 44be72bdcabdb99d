#!/bin/sh
# build.sh — the built @mnemo/client in $BUILD_DIR/js, for js/test/run.sh (js/node) and
# tests/interop/roundtrip/run.sh: copies js/ (without node_modules and dist) there, installs the
# pinned devDependencies with `npm ci` (package-lock.json; the npm cache there too; skipped when
# the lockfile has not changed) and builds the package with `npm run build` (types generated from
# the /openapi.json of the built `mnemo`, $MNEMO). Without node/npm or the registry, it fails and
# says why.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
: "${BUILD_DIR:?BUILD_DIR must name the build directory}"
: "${MNEMO:?MNEMO must name the mnemo binary}"
command -v node >/dev/null 2>&1 || { echo "js: node is not installed (scripts/install-deps installs nodejs and npm)"; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "js: npm is not installed (scripts/install-deps installs it)"; exit 1; }
work=$BUILD_DIR/js
mkdir -p "$work" "${MNEMO_TEST_TMP:-/tmp}"
rm -rf "$work/src" "$work/test" "$work/scripts" "$work/dist" "$work/node_modules/@mnemo"
cp -R "$here/src" "$here/test" "$here/scripts" "$here/package.json" "$here/package-lock.json" "$here/tsconfig.json" "$work/"
cd "$work"
if ! cmp -s package-lock.json node_modules/.mnemo-lock 2>/dev/null; then
    npm ci --cache "$work/.npm-cache" --no-audit --no-fund --loglevel=error >npm.log 2>&1 || {
        cat npm.log
        echo "js: npm ci failed (is the npm registry reachable?)"
        exit 1
    }
    cp package-lock.json node_modules/.mnemo-lock
fi
npm run build --silent
