#!/bin/sh
# t0410-import-limits.sh — what an import file cannot make mnemo believe (issue 13, items 8 and
# 12): token counts are recounted with the database's tokenizer, every integer is bounded, and a
# bad header (a second one, an unknown version) is bad input naming the line, not corruption.
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
ok mn context "$SID" --max-tokens 1000 --report
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
finish
