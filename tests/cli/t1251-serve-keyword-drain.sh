#!/bin/sh
# t1251-serve-keyword-drain.sh — `mnemo serve` keeps the keyword index current as messages
# arrive (docs/search.md, "Keeping the keyword index current"): the group committer drains the
# backlog after it has answered each group, so with search.fts_drain = 5 it never holds a
# chunk's worth once an append has been answered, and keyword search finds every message. On
# PostgreSQL the insert indexes each message itself (no log): only the search is checked.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

export MNEMO_SEARCH_FTS_DRAIN=5
# what waits for the keyword index: the log, and the messages past its watermark (in the index's
# own file, attached)
WAITING="ATTACH '$DB.keywords' AS kw; SELECT (SELECT count(*) FROM msg_log WHERE message_id <= w) +
  (SELECT count(*) FROM messages WHERE content IS NOT NULL AND id > w) FROM (SELECT coalesce((SELECT
  CAST(value AS INTEGER) FROM fts_meta WHERE key = 'fts.indexed_upto'), 0) AS w)"
serve_start
req POST /v1/sessions '{}'
eq "$CODE" 201 "create a session"
S=$(jget "$OUT" 'j["session"]["id"]')
max=0
i=1
while [ "$i" -le 40 ]; do
    req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"drainword$i shared keyword text\"}"
    [ "$CODE" = 201 ] || fail "append $i answered $CODE"
    if [ "$(backend)" = sqlite ]; then
        n=$(sql "$DB" "$WAITING")
        [ "$n" -gt "$max" ] && max=$n
    fi
    i=$((i + 1))
done
pass "40 appends answered"
if [ "$(backend)" = sqlite ]; then
    # the drain runs after the answer: a read right after it may still see the 5th row
    check "the log stays under two chunks while serving (max $max rows)" test "$max" -le 9
fi
req GET "/v1/search?q=drainword17&mode=keyword"
eq "$CODE" 200 "keyword search"
check "keyword search finds the 17th message" python3 -c '
import json, sys
j = json.loads(sys.argv[1])
hits = j.get("hits", j) if isinstance(j, dict) else j
assert any("drainword17 " in h["message"]["content"] for h in hits), hits' "$OUT"
serve_stop
if [ "$(backend)" = sqlite ]; then
    eq "$(sql "$DB" "$WAITING")" 0 "the search applied the remainder"
    eq "$(integrity "$DB")" ok "the database passes its integrity check"
fi
finish
