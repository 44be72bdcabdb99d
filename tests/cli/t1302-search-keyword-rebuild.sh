#!/bin/sh
# t1302-search-keyword-rebuild.sh — a database copied without its keyword index file
# (DB.keywords) answers `mnemo search` and `GET /v1/search` at once, from a scan of the newest
# messages the index does not hold, and each surface says so (docs/search.md, "A missing or
# stale keyword index"): `--json --report` and REST give keyword_unindexed and keyword_scanned,
# the text output a line. MNEMO_TEST_KEYWORD_HOLD holds the background rebuild, so the counts do
# not depend on the thread's pace; `mnemo search` after the hold is lifted and the index drained
# reports nothing. On PostgreSQL each insert indexes its message: the report is 0.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

N=2500
python3 -c "import json; print(json.dumps([{'role': 'user', 'content': 'line %d about fig%d' % (i, i)} for i in range($N)]))" >"$T/batch.json"
ok mn session new
S=$OUT
ok mn append "$S" --messages "$T/batch.json"

if [ "$(backend)" = sqlite ]; then
    rm -f "$DB.keywords" "$DB.keywords-wal" "$DB.keywords-shm"
    export MNEMO_TEST_KEYWORD_HOLD=1
    WANT=$N
else
    WANT=0
fi

ok mn search fig2499 --mode keyword --json --report
eq "$(jget "$OUT" 'j["keyword_unindexed"]')" "$WANT" "--report: the messages the index does not hold"
eq "$(jget "$OUT" 'j["keyword_scanned"]')" "$WANT" "--report: all of them scanned (fewer than 5,000)"
eq "$(jget "$OUT" 'len(j["hits"])')" 1 "the newest message is found"
ok mn search fig7 --mode keyword
if [ "$(backend)" = sqlite ]; then
    check "the text output says the index is behind" grep -q "^(keyword index: $N messages not indexed yet, the newest $N of them scanned)$" "$T/.out"
else
    check "no line about the keyword index" sh -c '! grep -q "keyword index" "$1"' sh "$T/.out"
fi

serve_start
req GET "/v1/search?q=fig2498&mode=keyword"
eq "$CODE" 200 "REST search"
eq "$(jget "$OUT" 'j["keyword_unindexed"]')" "$WANT" "REST: keyword_unindexed"
eq "$(jget "$OUT" 'j["keyword_scanned"]')" "$WANT" "REST: keyword_scanned"
eq "$(jget "$OUT" 'len(j["hits"])')" 1 "REST: the message is found"
serve_stop

unset MNEMO_TEST_KEYWORD_HOLD
ok mn search fig3 --mode keyword --json --report
if [ "$(backend)" = sqlite ]; then
    # the index catches up in the background (or this search's own drain): within the deadline
    wait_until 60 "the keyword index to catch up" sh -c '"$1" --db "$2" search fig3 --mode keyword --json --report | grep -q "\"keyword_unindexed\":0"' \
        sh "$MNEMO" "$DB"
fi
ok mn search fig3 --mode keyword --json --report
eq "$(jget "$OUT" 'j["keyword_unindexed"]')" 0 "once rebuilt: nothing to report"
eq "$(jget "$OUT" 'len(j["hits"])')" 1 "the oldest message is found"
finish
