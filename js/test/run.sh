#!/bin/sh
# run.sh — the @mnemo/client tests (ctest js/node): build.sh installs and builds the package in
# $BUILD_DIR/js, then `node --test` runs against real `mnemo serve`s. Skips nothing.
set -eu
sh "$(dirname "$0")/build.sh"
cd "$BUILD_DIR/js"
# the tests import the package by its name ("@mnemo/client": Node resolves a package's own name)
exec node --test --test-concurrency=1 test/*.test.mjs
