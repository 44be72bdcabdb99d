#!/bin/sh
# Layer rules (docs/ARCHITECTURE.md): only src/store/ includes sqlite3.h or libpq-fe.h, only
# src/http/ includes curl, app/ includes nothing of src/ — the public header only — and only
# src/store/ reads database targets as text (src/store/target.h; src/util/url.c parses the HTTP
# URLs of remote embedders and summarisers).
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
if grep -rnE '"://"|"postgres(ql)?:|"sqlite:' "$root/src" --include='*.[ch]' | grep -v "^$root/src/store/" |
    grep -v "^$root/src/util/url.c:"; then
    echo "database target syntax above src/store/ (ask src/store/target.h)"; fail=1
fi
[ $fail -eq 0 ] && echo "1 passed, 0 failed"
exit $fail
