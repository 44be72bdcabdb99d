#!/bin/sh
# t0340-search-limit-backfill.sh — `mnemo search --limit N` as every listing command takes it
# (--top-k, the API's name, kept as another spelling; both at once is a usage error), and the hint
# on standard error when a semantic or hybrid search runs while stored messages have no vector
# and are not queued: those stored before the embedder was turned on (issue #42).
. "$TESTS_DIR/cli/lib.sh"

ok mn session new
S=$OUT
for w in "the zebra crossing is on Main Street" "a zebra at the zoo" "zebra stripes confuse flies" "horses are not zebras"; do
    ok mn add "$S" user "$w"
done

# --- --limit, --top-k -------------------------------------------------------------------------------------
ok mn search zebra --limit 2 --json
eq "$(jget "$OUT" 'len(j)')" 2 "search --limit 2: two hits"
ok mn search zebra --limit=1 --json
eq "$(jget "$OUT" 'len(j)')" 1 "search --limit=1"
ok mn search zebra --top-k 2 --json
eq "$(jget "$OUT" 'len(j)')" 2 "search --top-k 2: the other spelling"
fails 2 "search: --limit and --top-k are one option; give it once" mn search zebra --limit 1 --top-k 2
fails 2 "--limit: '0' is not a whole number from 1 to 1000" mn search zebra --limit 0
fails 2 "--top-k: '1001' is not a whole number from 1 to 1000" mn search zebra --top-k 1001
ok mn search --help
check "search --help names --limit" sh -c 'printf "%s" "$1" | grep -q -- "--limit N"' - "$OUT"

# --- the embedder turned on after messages were stored ------------------------------------------------------
export MNEMO_EMBEDDER=hash
ok mn search "zebra crossing" --mode semantic
eq "$OUT" "no matches (semantic search)" "nothing has a vector yet"
eq "$ERR" "4 messages have no vector and are not queued for embedding (stored before the embedder was turned on): run \`mnemo embed --backfill\`" \
    "a semantic search says the stored messages need a backfill"
ok mn search "zebra crossing"
check "so does a hybrid search (the default with an embedder)" sh -c 'printf "%s" "$1" | grep -q "mnemo embed --backfill"' - "$ERR"
ok mn search "zebra crossing" --json
check "with --json too, on stderr" sh -c 'printf "%s" "$1" | grep -q "mnemo embed --backfill"' - "$ERR"
ok mn search "zebra crossing" --mode keyword
eq "$ERR" "" "a keyword search sees every message: no hint"
ok mn add "$S" user "zebra crossings at night"
ok mn search "zebra crossing" --mode semantic
check "a queued message: the pending hint ($ERR)" sh -c 'printf "%s" "$1" | grep -q "1 message is not embedded yet"' - "$ERR"
check "and the backfill hint for the older ones" sh -c 'printf "%s" "$1" | grep -q "^4 messages have no vector"' - "$ERR"
ok mn embed --backfill
ok mn search "zebra crossing" --mode semantic
check "after the backfill: hits" sh -c 'printf "%s" "$1" | grep -q "zebra crossing"' - "$OUT"
eq "$ERR" "" "after the backfill: no hint"
ok mn add "$S" assistant --tool-calls '[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]'
ok mn search "zebra crossing" --mode semantic
eq "$ERR" "" "a message without text (it never gets a vector) beside embedded ones: no hint"
finish
