#!/bin/sh
# t1300-search.sh — `mnemo search` (keyword without an embedder, hybrid/semantic with hash,
# filters, --json, hostile query text), `mnemo embed --backfill` (plain progress lines when not
# on a terminal, resumable), `mnemo context --rag`, `mnemo reindex --embeddings`, and the
# index file rebuilt after it is deleted.
. "$TESTS_DIR/cli/lib.sh"

ok mn session new --namespace team-a
A=$OUT
ok mn session new --namespace team-b
B=$OUT
ok mn add "$A" user "How do I configure the postgres connection pool?"
ok mn add "$A" assistant "Use pgbouncer in transaction mode for postgres connection pooling."
ok mn add "$A" user "The weather in Paris is sunny today."
ok mn add "$B" user "postgres replication lag keeps growing"

# keyword search works without an embedder
ok mn search "postgres pooling" --json
eq "$(jget "$OUT" '[len(j), j[0]["message"]["id"], j[0]["keyword_rank"], j[0]["semantic_rank"]]')" "[3, 1, 1, 0]" \
    "keyword search: BM25 ranks the shorter message with both stems first"
ok mn search 'AND OR NEAR( "unbalanced * ^col:umn'
pass "FTS syntax in the query is searched for, never an error"
ok mn search postgres --namespace team-b --json
eq "$(jget "$OUT" '[h["message"]["session_id"] for h in j]')" "[\"$B\"]" "namespace filter"
ok mn search postgres --session "$A" --role assistant --json
eq "$(jget "$OUT" '[h["message"]["id"] for h in j]')" "[2]" "session and role filters"
fails 1 "no embedder is configured" mn search postgres --mode semantic
fails 2 "mode" mn search postgres --mode fuzzy
fails 2 "top-k" mn search postgres --top-k 0

# the hash embedder: backfill with plain progress lines, then semantic and hybrid
export MNEMO_EMBEDDER=hash
ok mn embed --backfill
check "backfill prints plain progress lines off a terminal" grep -q "^embedded 4/4" "$T/.err"
check "backfill reports the counts" grep -q "4 with a vector, 0 queued" "$T/.out"
ok mn embed --backfill --json
eq "$(jget "$OUT" '[j["done"], j["embedded"]]')" "[0, 4]" "a second backfill has nothing left (resumable)"
ok mn search "postgres connection pool" --mode semantic --top-k 2 --json
eq "$(jget "$OUT" '[len(j), j[0]["message"]["id"], j[0]["similarity"] > j[1]["similarity"]]')" "[2, 1, true]" \
    "semantic search, best first"
ok mn search "pgbouncer pooling" --json
eq "$(jget "$OUT" '[j[0]["message"]["id"], j[0]["semantic_rank"], j[0]["keyword_rank"]]')" "[2, 1, 1]" \
    "hybrid (the default with an embedder) fuses both lists"
if [ "$(backend)" = sqlite ]; then
    check "the index file sits next to the database" test -f "$DB.hnsw"
else # each process keeps its index in memory, built from the stored vectors (docs/scale-out.md)
    ok mn search "postgres connection pool" --mode semantic --top-k 1 --json
    eq "$(jget "$OUT" 'j[0]["message"]["id"]')" 1 "a new process builds its in-memory index from the stored vectors"
fi

# appends are queued, not embedded, by default; embed --pending drains the queue
ok mn add "$B" user "where do we keep the deploy key for postgres?"
ok mn embed --pending --json
eq "$(jget "$OUT" '[j["done"], j["queued"]]')" "[1, 0]" "the new message was queued and then embedded"

# a semantic or hybrid search says how many messages passing its filters wait to be embedded
# (on stderr: stdout stays the hits); --embed-first embeds them first with the local embedder
ok mn add "$B" user "the zebra migration ran at midnight"
ok mn search "zebra migration" --mode semantic --min-similarity 0.5
check "nothing found by meaning yet" grep -q "^no matches (semantic search)" "$T/.out"
check "the hint says how many wait and what to run" grep -qx \
    "1 message is not embedded yet; run \`mnemo embed --pending\` or pass --embed-first" "$T/.err"
ok mn search "zebra migration" --json
eq "$(jget "$OUT" '[[h["keyword_rank"], h["semantic_rank"]] for h in j if "zebra" in h["message"]["content"]]')" \
    "[[1, 0]]" "hybrid --json: stdout is still the array of hits (the new one found by keyword only)"
check "hybrid --json: the hint on stderr" grep -q "^1 message is not embedded yet" "$T/.err"
ok mn search "zebra migration" --mode semantic --session "$A"
check "the count follows the filters (none queued in that session)" sh -c "! grep -q 'not embedded' '$T/.err'"
ok mn search "zebra migration" --mode keyword
check "keyword search sees every message: no hint" sh -c "! grep -q 'not embedded' '$T/.err'"
fails 2 'local hash embedder .embedder.name is openai.: run `mnemo embed --pending`' \
    env MNEMO_EMBEDDER=openai "$MNEMO" --db "$DB" search "zebra" --embed-first
ok mn search "zebra migration" --mode semantic
check "--embed-first with a remote embedder embedded nothing" grep -q "^1 message is not embedded yet" "$T/.err"
ok mn search "zebra migration" --mode semantic --min-similarity 0.5 --embed-first --json
eq "$(jget "$OUT" '[len(j), j[0]["message"]["content"]]')" '[1, "the zebra migration ran at midnight"]' \
    "--embed-first: the message is found by meaning"
check "--embed-first says what it embedded" grep -qx "embedded 1 message first" "$T/.err"
check "--embed-first: no hint left" sh -c "! grep -q 'not embedded' '$T/.err'"

# RAG: the retrieved block comes right before the current turn's user message (other sessions of
# the namespace with --rag-scope all; nothing already in the context); the question as it was said
ok mn session new --namespace team-a
C=$OUT
ok mn add "$C" user "which pooler should postgres use?"
ok mn context "$C" --rag --rag-scope all --rag-min-similarity -1 --format text --report
check "RAG block injected" grep -q "RELEVANT CONTEXT FROM PAST CONVERSATIONS:" "$T/.out"
check "question kept as it was said, after the block" sh -c "grep -qx 'user: which pooler should postgres use?' '$T/.out' && ! grep -q 'USER QUESTION' '$T/.out'"
check "only team-a messages injected" sh -c "! grep -q 'replication lag' '$T/.out'"
ok mn context "$C" --rag --format text
check "scope session: nothing else in this session" sh -c "! grep -q 'RELEVANT CONTEXT' '$T/.out'"
ok mn history "$C" --json
eq "$(jget "$OUT" 'j[-1]["content"]')" "which pooler should postgres use?" "stored message unchanged"

# the index file deleted: rebuilt from the stored vectors (PostgreSQL: there is none to delete)
[ "$(backend)" = sqlite ] && rm -f "$DB.hnsw"
ok mn search "postgres connection pool" --mode semantic --top-k 1 --json
eq "$(jget "$OUT" 'j[0]["message"]["id"]')" 1 "search after the index file was deleted"

# another embedder dimension is refused until reindex
export MNEMO_EMBEDDER_DIM=64
fails 1 "reindex --embeddings" mn search postgres --mode semantic
ok mn reindex --embeddings --json
eq "$(jget "$OUT" '[j["done"], j["embedded"]]')" "[7, 7]" "reindex re-embeds every message"
ok mn search "postgres connection pool" --mode semantic --top-k 1 --json
eq "$(jget "$OUT" 'len(j)')" 1 "search with the new vectors"

# deleting a session removes its messages from both indexes
ok mn session delete "$A"
ok mn search pgbouncer --mode keyword --json
eq "$(jget "$OUT" 'len(j)')" 0 "keyword index follows deletes"
finish
