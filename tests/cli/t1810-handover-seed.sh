#!/bin/sh
# t1810-handover-seed.sh — `mnemo handover`, `mnemo files` and `mnemo files check` as seed 002
# has them (issue #42): no "Tools Used" line for a single tool; files newest message first, each
# message's in the order it lists them; distinct path strings are distinct files; content is
# skipped only under the path it was first seen with.
. "$TESTS_DIR/cli/lib.sh"

# --- Tools Used: only for more than one tool --------------------------------------------------------
ok mn session new --tool chat --json
S=$(jget "$OUT" 'j["id"]')
ok mn add "$S" user "first" --tool chat
ok mn add "$S" assistant "second" --tool chat
ok mn handover "$S"
check "one tool: no Tools Used line" sh -c '! printf "%s" "$1" | grep -q "Tools Used"' - "$OUT"
eq "$(printf '%s\n' "$OUT" | tail -1)" "**Turns:** 1" "one tool: the block ends with the turns"
ok mn handover "$S" --json
eq "$(jget "$OUT" 'j["tools_used"]')" '["chat"]' "handover --json still names the one tool"
ok mn add "$S" user "third" --tool debug
ok mn handover "$S"
eq "$(printf '%s\n' "$OUT" | tail -1)" "**Tools Used:** chat, debug" "two tools: the line"

# --- files: newest message first, each message's in the order given ---------------------------------
ok mn session new --json
F=$(jget "$OUT" 'j["id"]')
ok mn add "$F" user "old" --files '["z.c","a.c","/abs/src/a.c"]'
ok mn add "$F" user "new" --files '["b.c","a.c","./a.c","src/a.c"]'
ok mn files "$F"
eq "$OUT" "b.c
a.c
./a.c
src/a.c
z.c
/abs/src/a.c" "files: newest message first, in the order given, distinct paths distinct"
ok mn files "$F" --limit 2 --json
eq "$OUT" '["b.c","a.c"]' "files --limit: the first N of that walk"
ok mn handover "$F" --files 3
eq "$(printf '%s\n' "$OUT" | tail -1)" "**Files:** b.c, a.c, ./a.c" "handover: the same order"

# --- files check: another path is included every time ----------------------------------------------
printf 'int x;\n' >x.c
ok mn files check "$F" x.c
eq "$OUT" include "files check: first time"
ok mn files check "$F" x.c
eq "$OUT" skip "files check: the same path again"
ok mn files check "$F" ./x.c x.c
eq "$OUT" include "files check: another path"
ok mn files check "$F" ./x.c x.c
eq "$OUT" include "files check: that other path again is still included (seed 002)"
ok mn files check "$F" x.c
eq "$OUT" skip "files check: the first path stays skipped"

finish
