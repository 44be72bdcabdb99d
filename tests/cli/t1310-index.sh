#!/bin/sh
# t1310-index.sh — the vector index is built by writers, never by a search (docs/search.md): a
# second process searches the saved index without rewriting it, a search reports what the index
# answered and what it scanned exactly beside it, a FIFO in place of the index file is refused
# without blocking, and --threads is checked.
. "$TESTS_DIR/cli/lib.sh"

export MNEMO_EMBEDDER=hash
ok mn session new
A=$OUT
for i in 1 2 3 4 5 6; do
    ok mn add "$A" user "postgres pooling note $i about topic$i"
done
fails 2 "threads" mn embed --backfill --threads many
fails 2 "threads" mn embed --backfill --threads 5000
ok mn embed --backfill --threads 2 --json
eq "$(jget "$OUT" '[j["done"], j["embedded"]]')" "[6, 6]" "backfill embeds every message"

N=6
if [ "$(backend)" = sqlite ]; then
    N=8
    check "the writer saved the index beside the database" test -f "$DB.hnsw"
    before=$(stat -c %Y.%s "$DB.hnsw")
    ok mn search "postgres pooling topic3" --mode semantic --json --report
    eq "$(jget "$OUT" '[j["index"]["indexed"], j["index"]["scanned"], j["index"]["truncated"]]')" "[6, 0, false]" \
        "a second process searches the saved index as it is"
    eq "$(jget "$OUT" 'j["hits"][0]["message"]["content"]')" "postgres pooling note 3 about topic3" "its best hit"
    eq "$(stat -c %Y.%s "$DB.hnsw")" "$before" "the search did not rebuild or rewrite the index"

    # the index behind: a saved copy from before two more vectors were stored
    cp "$DB.hnsw" "$T/old.hnsw"
    cp "$DB.hnsw.state" "$T/old.state"
    ok mn add "$A" user "a later message about topic3 pooling"
    ok mn add "$A" user "another later one"
    ok mn embed --pending
    cp "$T/old.hnsw" "$DB.hnsw"
    cp "$T/old.state" "$DB.hnsw.state"
    ok mn search "later message about topic3 pooling" --mode semantic --json --report
    eq "$(jget "$OUT" '[j["index"]["indexed"], j["index"]["scanned"]]')" "[6, 2]" \
        "behind the stored vectors: what is indexed plus an exact scan of the rest"
    eq "$(jget "$OUT" 'j["hits"][0]["message"]["content"]')" "a later message about topic3 pooling" \
        "the scanned rest is found"
    ok mn search "later message about topic3 pooling" --mode semantic
    check "the text output says the index is behind" grep -q "2 stored since scanned exactly" "$T/.out"

    # a FIFO in place of the index file: refused at once (a reader would block forever)
    rm -f "$DB.hnsw"
    mkfifo "$DB.hnsw"
    ok timeout 60 "$MNEMO" --db "$DB" search "postgres pooling topic3" --mode semantic --json --report
    eq "$(jget "$OUT" '[j["index"]["indexed"], j["index"]["scanned"]]')" "[0, 8]" \
        "with no usable index file every stored vector is scanned exactly"
    rm -f "$DB.hnsw"
    ok mn embed --pending
    check "the next writer builds the index again" test -f "$DB.hnsw"
    ok mn search "postgres pooling topic3" --mode semantic --json --report
    eq "$(jget "$OUT" '[j["index"]["indexed"], j["index"]["scanned"]]')" "[8, 0]" "and searches use it"
fi

ok mn reindex --embeddings --threads 1 --json
eq "$(jget "$OUT" '[j["done"], j["embedded"]]')" "[$N, $N]" "reindex re-embeds and rebuilds with the threads asked"
ok mn search "postgres pooling topic3" --mode semantic --json
eq "$(jget "$OUT" 'j[0]["message"]["content"]')" "postgres pooling note 3 about topic3" "search after reindex"
finish
