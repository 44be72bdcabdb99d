#!/bin/sh
# Layer rules (docs/ARCHITECTURE.md): only src/store/ includes sqlite3.h or libpq-fe.h, only
# src/http/ includes curl, and app/ includes nothing of src/ — the public header only.
set -eu
root=$1
fail=0
if grep -rln '#include <sqlite3.h>\|#include <libpq-fe.h>' "$root/src" "$root/app" | grep -v "^$root/src/store/"; then
    echo "database headers outside src/store/"; fail=1
fi
if grep -rln '#include <curl/' "$root/src" "$root/app" | grep -v "^$root/src/http/"; then
    echo "curl outside src/http/"; fail=1
fi
if grep -rnE '#include "(util|store|token|memory|context|config|search|index|embed|summarize|http)/' "$root/app"; then
    echo "front end includes library internals"; fail=1
fi
[ $fail -eq 0 ] && echo "1 passed, 0 failed"
exit $fail
