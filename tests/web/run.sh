#!/bin/sh
# run.sh — the web page tests (ctest web/browser): Debian's chromium, headless, driven by
# playwright-core, and axe-core for the accessibility audit, both pinned in package.json and
# package-lock.json, against the built `mnemo`. Installs them with `npm ci` into $BUILD_DIR/web
# (npm cache there too; playwright-core downloads no browser), runs `node --test`, and leaves
# screenshots in $BUILD_DIR/tests/web-shots. Skips nothing: without node, npm, chromium or the
# registry, it fails and says why.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${BUILD_DIR:?BUILD_DIR must name the build directory}"
: "${MNEMO:?MNEMO must name the mnemo binary}"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
command -v node >/dev/null 2>&1 || { echo "web: node is not installed (scripts/install-deps installs nodejs and npm)"; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "web: npm is not installed (scripts/install-deps installs it)"; exit 1; }
[ -x "$CHROMIUM" ] || { echo "web: $CHROMIUM is missing (scripts/install-deps installs chromium)"; exit 1; }
work=$BUILD_DIR/web
mkdir -p "$work" "${MNEMO_TEST_TMP:-/tmp}" "$BUILD_DIR/tests/web-shots"
cp "$here/package.json" "$here/package-lock.json" "$here"/*.test.mjs "$work/"
cd "$work"
if ! cmp -s package-lock.json node_modules/.mnemo-lock 2>/dev/null; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --cache "$work/.npm-cache" --no-audit --no-fund --loglevel=error >npm.log 2>&1 || {
        cat npm.log
        echo "web: npm ci failed (is the npm registry reachable?)"
        exit 1
    }
    cp package-lock.json node_modules/.mnemo-lock
fi
export CHROMIUM SHOTS="$BUILD_DIR/tests/web-shots"
exec node --test --test-concurrency=1 ./*.test.mjs
