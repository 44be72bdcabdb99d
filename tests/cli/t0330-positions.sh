#!/bin/sh
# t0330-positions.sh — one numbering (issue #42): a message of a session is named by its position
# #N, what `history` and the web page show (N or #N on the command line), in every command that
# takes one (pin, unpin, message pin|edit|delete); --message-id takes the database-wide id, which
# only JSON shows. Text output shows positions: add, pin, search.
. "$TESTS_DIR/cli/lib.sh"

ok mn session new
S=$OUT
ok mn session new
S2=$OUT
ok mn add "$S" user "alpha question"
eq "$OUT" "#1" "add prints the position"
ok mn add "$S" assistant "alpha answer"
eq "$OUT" "#2" "add prints the position of the next message"
ok mn add "$S2" user "beta question about zebras"
eq "$OUT" "#1" "add: positions are per session"
printf '[{"role":"assistant","content":"beta answer"},{"role":"user","content":"beta follow-up"}]' >batch.json
ok mn add "$S2" --messages batch.json
eq "$OUT" "$(printf '#2\n#3')" "add --messages: a position a line"
ok mn add "$S2" assistant "beta last" --json
eq "$(jget "$OUT" '[j["id"], j["seq"]]')" "[6, 4]" "add --json: the id and the seq"
ok mn history "$S2" --json
S2_ID1=$(jget "$OUT" 'j[0]["id"]')
S2_ID3=$(jget "$OUT" 'j[2]["id"]')
ok mn history "$S" --json
S_ID1=$(jget "$OUT" 'j[0]["id"]')
S_ID2=$(jget "$OUT" 'j[1]["id"]')
pinned() { mn history "$1" --json --all | jget "$(cat)" "[m['seq'] for m in j if m['pinned']]"; }

# --- pin and unpin: SESSION N or #N --------------------------------------------------------------------
ok mn pin "$S2" 2
eq "$OUT" "pinned #2" "pin SESSION N: text names the position"
eq "$(pinned "$S2")" "[2]" "pin SESSION 2 pins position 2 of that session"
eq "$(pinned "$S")" "[]" "and not message id 2 (another session's)"
ok mn unpin "$S2" '#2'
eq "$OUT" "unpinned #2" "unpin SESSION #N"
eq "$(pinned "$S2")" "[]" "unpinned"
ok mn pin "$S" 1 --json
eq "$OUT" "{\"id\":$S_ID1,\"pinned\":true}" "pin --json: the id, as before"
ok mn unpin --message-id "$S_ID1"
eq "$OUT" "unpinned message id $S_ID1" "unpin --message-id: by the database-wide id"
eq "$(pinned "$S")" "[]" "unpin --message-id unpinned it"
ok mn pin --message-id "$S2_ID3" --json
eq "$OUT" "{\"id\":$S2_ID3,\"pinned\":true}" "pin --message-id --json"
ok mn pin "$S" --message-id "$S_ID2"
eq "$(pinned "$S")" "[2]" "pin SESSION --message-id: an id of that session"
fails 1 "not found" mn pin "$S" --message-id "$S2_ID1"
fails 2 "give the session and the position" mn pin 3
fails 2 "the position or --message-id, not both" mn pin "$S" 1 --message-id "$S_ID1"
fails 2 "'abc' is not a position" mn pin "$S" abc
fails 2 "'#0' is not a position" mn unpin "$S" '#0'
fails 1 "session $S has no message #9" mn pin "$S" 9
fails 2 "--message-id: 'x' is not a message id" mn pin --message-id x

# --- message pin | edit | delete: SESSION N or #N, or --message-id ----------------------------------------
ok mn message pin "$S2" '#1'
eq "$(pinned "$S2")" "[1, 3]" "message pin SESSION #1"
ok mn message pin "$S2" 1 --unpin
eq "$OUT" "unpinned #1" "message pin --unpin: text names the position"
ok mn message edit "$S2" 1 "beta question, edited"
ok mn message edit "$S2" '#2' "beta answer, edited" --json
eq "$(jget "$OUT" '[j["seq"], j["content"]]')" '[2, "beta answer, edited"]' "message edit SESSION #2 --json"
ok mn message edit "$S2" --message-id "$S2_ID3" "beta follow-up, edited"
ok mn history "$S2" --json
eq "$(jget "$OUT" '[m["content"] for m in j]')" \
    '["beta question, edited", "beta answer, edited", "beta follow-up, edited", "beta last"]' "message edit by position and by id"
eq "$(mn history "$S" --json | jget "$(cat)" '[m["content"] for m in j]')" '["alpha question", "alpha answer"]' \
    "the other session is untouched"
fails 1 "session $S2 has no message #9" mn message edit "$S2" 9 text
fails 2 "usage: mnemo message edit" mn message edit "$S2" 1
fails 2 "the position or --message-id, not both" mn message edit "$S2" 1 --message-id "$S2_ID1" text
ok mn message delete "$S2" 4 --json
eq "$(jget "$OUT" 'j["deleted"]')" 6 "message delete SESSION 4 --json: the id, as before"
ok mn message delete "$S2" --message-id "$S2_ID1"
ok mn history "$S2" --json
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[2, 3]" "message delete by position and by id"
fails 1 "session $S2 has no message #1" mn message delete "$S2" 1
fails 2 "usage: mnemo message delete" mn message delete "$S2"

# --- text output shows positions ------------------------------------------------------------------------
ok mn search "alpha answer" --mode keyword
check "search: session and position, no id ($OUT)" sh -c 'printf "%s\n" "$1" | grep -Eq "^ 1\. [0-9.]+  $2 #2 \(assistant\)$"' - "$OUT" "$S"
finish
