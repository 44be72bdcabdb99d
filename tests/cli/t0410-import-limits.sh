#!/bin/sh
# t0410-import-limits.sh — what an import file cannot make mnemo believe (issue 13, items 8 and
# 12): token counts are recounted with the database's tokenizer, every integer is bounded, and a
# bad header (a second one, an unknown version) is bad input naming the line, not corruption.
# Seqs, ids and memory versions leave room for the appends and updates after them, on the CLI
# and the REST route, and a session already full is refused in words, never in SQL.
. "$TESTS_DIR/cli/lib.sh"

SID=0190f0f0-0000-7000-8000-0000000000aa
HEADER='{"format":"mnemo-export","version":1}'
session() { printf '{"type":"session","id":"%s","namespace":"default","title":"t","created_at":1000,"updated_at":1000,"expires_at":0}\n' "$SID"; }
# message SEQ TOKENS CONTENT
message() { printf '{"type":"message","session_id":"%s","id":%s,"seq":%s,"role":"user","content":"%s","tokens":%s,"created_at":1000}\n' "$SID" "$1" "$1" "$3" "$2"; }

# A 500 KB message that claims 0 tokens: stored with its real count, and a 1,000-token
# budget leaves it out.
BIG=$(python3 -c "print('word ' * 100000)")
{ echo "$HEADER"; session; message 1 0 "$BIG"; message 2 0 "short question"; } >"$T/zero.jsonl"
ok mn import "$T/zero.jsonl"
ok mn history "$SID" --json
eq "$(jget "$OUT" 'j[0]["tokens"] > 50000')" true "import: the claimed 0 tokens were recounted"
ok mn context "$SID" --max-tokens 1000 --report --json
eq "$(jget "$OUT" 'j["report"]["tokens"] <= 1000')" true "context: the big message does not pass a 1,000-token budget"
eq "$(jget "$OUT" 'j["report"]["messages"]["kept"]')" 1 "context: only the short message is kept"
ok mn session show "$SID" --json
eq "$(jget "$OUT" 'j["token_count"] > 50000 and isinstance(j["token_count"], int)')" true "session count: the recounted sum, an integer"

# Counts and other integers past their bounds are refused, naming the field and the line.
fresh() { DB=$(new_db "$1"); }
fresh huge
{ echo "$HEADER"; session; message 1 9223372036854775807 "hi"; } >"$T/huge.jsonl"
fails 1 "line 3.*tokens" mn import "$T/huge.jsonl"
{ echo "$HEADER"; session; message 9223372036854775807 1 "hi"; } >"$T/seq.jsonl"
fails 1 "line 3.*(id|seq)" mn import "$T/seq.jsonl"
{ echo "$HEADER"; session | sed 's/"created_at":1000/"created_at":9223372036854775807/'; } >"$T/time.jsonl"
fails 1 "line 2.*created_at" mn import "$T/time.jsonl"
eq "$(mn session list --json)" "[]" "refused imports wrote nothing"

# Session metadata nests at most 64 levels, as message metadata and `session new --metadata`.
deep() { python3 -c "import sys; n = int(sys.argv[1]); print('{\"a\":' * n + '1' + '}' * n)" "$1"; }
{ echo "$HEADER"; session | sed "s/\"title\":\"t\"/\"title\":\"t\",\"metadata\":$(deep 201)/"; } >"$T/deep201.jsonl"
fails 1 "line 2.*metadata: nested deeper than 64 levels" mn import "$T/deep201.jsonl"
{ echo "$HEADER"; session | sed "s/\"title\":\"t\"/\"title\":\"t\",\"metadata\":$(deep 65)/"; } >"$T/deep65.jsonl"
fails 1 "line 2.*metadata: nested deeper than 64 levels" mn import "$T/deep65.jsonl"
eq "$(mn session list --json)" "[]" "refused deep metadata wrote nothing"
{ echo "$HEADER"; session | sed "s/\"title\":\"t\"/\"title\":\"t\",\"metadata\":$(deep 64)/"; } >"$T/deep64.jsonl"
ok mn import "$T/deep64.jsonl"
ok mn session show "$SID" --json
eq "$(jget "$OUT" 'j["metadata"] is not None')" true "64 levels of session metadata import"
fresh headers

# Headers: a second one, an unknown version.
{ echo "$HEADER"; session; echo "$HEADER"; } >"$T/second.jsonl"
fails 1 "line 3.*header" mn import "$T/second.jsonl"
echo '{"format":"mnemo-export","version":999}' >"$T/v999.jsonl"
fails 1 "line 1.*version" mn import "$T/v999.jsonl"

# --- room to append after an import (security finding: a message imported with seq 4294967295,
# the store's last, made every later append fail, with the SQLite CHECK text and so the schema).
# A seq (and cleared_seq, cleared_from) is at most 2^31 - 1 and an id at most 2^52, so an
# imported session takes two billion appends more, and new ids stay exact in a JSON double.
fresh room
# msg ID SEQ: a one-token user message of $SID
msg() { printf '{"type":"message","session_id":"%s","id":%s,"seq":%s,"role":"user","content":"hi","tokens":1,"created_at":1000}\n' "$SID" "$1" "$2"; }
{ echo "$HEADER"; session; msg 1 4294967295; } >"$T/seq-last.jsonl"
fails 1 "^mnemo: import line 3: seq: must be an integer from 1 to 2147483647$" mn import "$T/seq-last.jsonl"
{ echo "$HEADER"; session; msg 1 2147483648; } >"$T/seq-over.jsonl"
fails 1 "import line 3: seq: .* 2147483647" mn import "$T/seq-over.jsonl"
{ echo "$HEADER"; session | sed 's/"expires_at":0/"expires_at":0,"cleared_seq":2147483648/'; } >"$T/cleared.jsonl"
fails 1 "import line 2: cleared_seq: .* 2147483647" mn import "$T/cleared.jsonl"
{ echo "$HEADER"; session | sed 's/"expires_at":0/"expires_at":0,"cleared_from":4294967295/'; } >"$T/from.jsonl"
fails 1 "import line 2: cleared_from: .* 2147483647" mn import "$T/from.jsonl"
{ echo "$HEADER"; session; msg 4503599627370497 1; } >"$T/id-over.jsonl"
fails 1 "import line 3: id: must be an integer from 1 to 4503599627370496" mn import "$T/id-over.jsonl"
eq "$(mn session list --json)" "[]" "refused imports wrote nothing"
{ echo "$HEADER"; session; msg 4503599627370496 2147483647; } >"$T/at-bounds.jsonl"
ok mn import "$T/at-bounds.jsonl"
ok mn add "$SID" user "after the import" --json
eq "$(jget "$OUT" '[j["seq"], j["id"]]')" "[2147483648, 4503599627370497]" "an append after a session imported at the bounds"
# A session already at the store's last seq (an import before these bounds): an append is
# refused with a message naming the limit, and no database text (CHECK, the table's columns).
sql "$DB" "UPDATE sessions SET last_seq = 4294967295 WHERE id = '$SID'" >/dev/null
fails 1 "^mnemo: session $SID is full: .*4294967295" mn add "$SID" user "one more"
check "no SQL in the message" sh -c '! printf "%s\n" "$1" | grep -Eqi "check|constraint|pos|session_sid"' - "$ERR"
ok mn history "$SID" --json
eq "$(jget "$OUT" 'len(j)')" 2 "the refused append wrote nothing"

# Memory lines: a version leaves room for updates (9223372036854775807 overflowed the next one),
# token_cap and times are bounded as the API bounds them.
fresh memroom
MID=0190f0f0-0000-7000-8000-0000000000bb
# mem VERSION TOKEN_CAP VALID_FROM
mem() { printf '{"type":"memory","id":"%s","version":%s,"text":"likes tea","kind":"fact","namespace":"default","metadata":{},"sources":[],"pinned":false,"token_cap":%s,"valid_from":%s,"valid_to":null,"recorded_at":1000,"superseded_at":null,"change":"add","actor":"cli","reason":null}\n' "$MID" "$1" "$2" "$3"; }
{ echo "$HEADER"; mem 9223372036854775807 0 1000; } >"$T/mem-version.jsonl"
fails 1 "import line 2: memory: version: must be an integer from 1 to 2147483647" mn import "$T/mem-version.jsonl"
{ echo "$HEADER"; mem 1 9223372036854775807 1000; } >"$T/mem-cap.jsonl"
fails 1 "import line 2: memory: token_cap: must be an integer from 0 to 100000" mn import "$T/mem-cap.jsonl"
{ echo "$HEADER"; mem 1 0 9223372036854775807; } >"$T/mem-time.jsonl"
fails 1 "import line 2: memory: valid_from: must be an integer from 0 to 253402300799999" mn import "$T/mem-time.jsonl"
{ echo "$HEADER"; mem 1 0 1000 | sed 's/"sources":\[\]/"sources":[4503599627370497]/'; } >"$T/mem-src.jsonl"
fails 1 "import line 2: memory: sources: .*4503599627370496" mn import "$T/mem-src.jsonl"
{ echo "$HEADER"; mem 2147483647 100000 1000; } >"$T/mem-ok.jsonl"
ok mn import "$T/mem-ok.jsonl"
ok mn memory update "$MID" --text "likes coffee" --json
eq "$(jget "$OUT" 'j["version"]')" 2147483648 "a memory imported at the last version takes an update"

# The same through the REST route, which calls the same import: the line and field named, 400;
# and an append to a full session is the same clear refusal, 413.
fresh rest
. "$TESTS_DIR/cli/serve.sh"
FULL=0190f0f0-0000-7000-8000-0000000000cc
{ echo "$HEADER"; session | sed "s/$SID/$FULL/"; } >"$T/full.jsonl"
ok mn import "$T/full.jsonl"
sql "$DB" "UPDATE sessions SET last_seq = 4294967295 WHERE id = '$FULL'" >/dev/null
serve_start
post_import() {
    CODE=$(curl -s -o "$T/.body" -w '%{http_code}' -X POST -H 'Content-Type: application/x-ndjson' \
        --data-binary @"$1" "$URL/v1/import")
    OUT=$(cat "$T/.body")
}
post_import "$T/seq-last.jsonl"
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 invalid" "REST import of seq 4294967295: 400"
check "REST: the error names the line and the field" sh -c 'printf "%s\n" "$1" | grep -q "import line 3: seq: must be an integer from 1 to 2147483647"' - "$OUT"
post_import "$T/at-bounds.jsonl"
eq "$CODE $(jget "$OUT" 'j["messages_added"]')" "200 1" "REST import at the bounds"
req POST "/v1/sessions/$SID/messages" '{"role":"user","content":"after"}'
eq "$CODE $(jget "$OUT" 'j["messages"][0]["seq"]')" "201 2147483648" "REST append after the import"
req POST "/v1/sessions/$FULL/messages" '{"role":"user","content":"one more"}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "413 too_big" "REST append to a full session: 413"
check "REST: the session is named full" sh -c 'printf "%s\n" "$1" | grep -q "is full"' - "$OUT"
check "REST: no SQL in the error" sh -c '! printf "%s\n" "$1" | grep -Eqi "check|constraint|session_sid"' - "$OUT"
serve_stop
finish
