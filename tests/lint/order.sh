#!/bin/sh
# The order of the src/ modules (docs/ARCHITECTURE.md "Layers"): a file may include a module of
# its own tier or a lower one, never a higher one; no #include circle between files; and no
# call upwards or sideways at the top: nothing below the API layer calls a function defined in
# src/mnemo*.c, and the public files do not call each other (what they share is in src/engine/);
# and no tier is skipped at the top: the API layer reaches the store only through the engine.
#
#   tier 0  util
#   tier 1  token config http
#   tier 2  store
#   tier 3  index embed search context summarize memory chat
#   tier 4  engine
#   tier 5  the API layer: src/mnemo*.c, src/mnemo_int.h
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$1" && pwd)
src=$root/src
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. includes point down (or stay within their tier); the edges for 2.
cd "$src"
find . -name '*.[ch]' | sed 's|^\./||' | sort | xargs awk -v edges="$tmp/edges" '
    BEGIN {
        split("util:0 token:1 config:1 http:1 store:2 index:3 embed:3 search:3 context:3 summarize:3 " \
              "memory:3 chat:3 engine:4 api:5", kv, " ")
        for (i in kv) { split(kv[i], p, ":"); tier[p[1]] = p[2] }
        # Known exception, to remove: the store'"'"'s memory tables use the sources codec of
        # memory/fact.h (mn__fact_sources_json/_parse, which depend on util only).
        allowed["store/sqlite/memories.c memory/fact.h"] = 1
        allowed["store/postgres/memories.c memory/fact.h"] = 1
    }
    FNR == 1 {
        mod = FILENAME ~ /\// ? substr(FILENAME, 1, index(FILENAME, "/") - 1) : "api"
        dir = FILENAME; sub(/\/[^\/]*$/, "", dir)
        if (!(mod in tier)) {
            print FILENAME ": module " mod " has no place in the order (tests/lint/order.sh, docs/ARCHITECTURE.md)"
            bad = 1
        }
    }
    /^#include "/ {
        inc = $2; gsub(/"/, "", inc)
        if (inc ~ /\//) { to = substr(inc, 1, index(inc, "/") - 1); target = inc }
        else if (inc == "mnemo_int.h") { to = "api"; target = inc }
        else { to = mod; target = dir "/" inc }
        if (!(to in tier)) next # mnemo.h, generated headers
        print FILENAME " " target > edges
        if (tier[to] > tier[mod] && !((FILENAME " " inc) in allowed)) {
            print FILENAME " (tier " tier[mod] ", " mod ") includes " inc " (tier " tier[to] ", " to "): includes point down"
            bad = 1
        }
    }
    END { exit bad }' || fail=1

# 2. no #include circle between files (tsort reports a loop)
if [ -s "$tmp/edges" ] && ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
    cat "$tmp/loop"
    echo "an #include circle between src/ files"
    fail=1
fi

# 3. calls: the functions the public files define, called from another src/ file
# (a definition: a line at column 0 naming mn_x( that does not end a declaration)
find . -name '*.c' | sed 's|^\./||' | sort | xargs awk '
    FNR == 1 { comment = 0 }
    /^[ \t]*(\/\*|\*|\/\/)/ { next }
    FILENAME ~ /^mnemo[^\/]*\.c$/ && /^[a-z]/ && !/;$/ && match($0, /^[^(]*[^a-z0-9_]mn__?[a-z0-9_]+\(/) {
        name = substr($0, 1, RLENGTH - 1); sub(/.*[^a-z0-9_]/, "", name)
        if (!(name in def)) def[name] = FILENAME
    }
    {
        line = $0
        while (match(line, /(^|[^a-z0-9_])mn__?[a-z0-9_]+\(/)) {
            m = substr(line, RSTART, RLENGTH - 1); sub(/^[^m]*/, "", m)
            if (!((FILENAME SUBSEP m) in seen)) { seen[FILENAME SUBSEP m] = 1; calls[++n] = FILENAME " " m }
            line = substr(line, RSTART + RLENGTH)
        }
    }
    END {
        for (i = 1; i <= n; i++) {
            split(calls[i], p, " ")
            if ((p[2] in def) && def[p[2]] != p[1]) print p[1] " -> " def[p[2]] ": " p[2]
        }
    }' | sort >"$tmp/calls"
if grep . "$tmp/calls"; then
    echo "calls into the public files from src/ (move what they share into src/engine/)"
    fail=1
fi

# 4. the API layer (src/mnemo*.c, src/mnemo_int.h) talks to the engine, never to the store: no
# store operation (->ops->, ->store->), no store/ header, no call of an mn__ function of src/store/
api=$(ls mnemo*.c mnemo_int.h)
if grep -nE -e '->(ops|store)->' -e '#include "store/' $api; then
    echo "the API layer talks to the store (move it into src/engine/)"
    fail=1
fi
awk '
    FNR == 1 && FILENAME ~ /^store\// { store = 1 }
    FNR == 1 && FILENAME !~ /^store\// { store = 0 }
    /^[ \t]*(\/\*|\*([ \/]|$)|\/\/)/ { next } # comment lines (not "*out = ...")
    store && /^[a-z]/ && !/;$/ && match($0, /^[^(]*[^a-z0-9_]mn__[a-z0-9_]+\(/) {
        name = substr($0, 1, RLENGTH - 1); sub(/.*[^a-z0-9_]/, "", name); def[name] = FILENAME
    }
    !store {
        line = $0
        while (match(line, /(^|[^a-z0-9_])mn__[a-z0-9_]+\(/)) {
            m = substr(line, RSTART, RLENGTH - 1); sub(/^[^m]*/, "", m)
            if (m in def) print FILENAME ":" FNR ": " m " (" def[m] ")"
            line = substr(line, RSTART + RLENGTH)
        }
    }' $(find store -name '*.c' | sort) $api >"$tmp/store_calls"
if grep . "$tmp/store_calls"; then
    echo "the API layer calls functions of src/store/ (move the use into src/engine/)"
    fail=1
fi

[ $fail -eq 0 ] && echo "1 passed, 0 failed"
exit $fail
