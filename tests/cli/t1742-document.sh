#!/bin/sh
# t1742-document.sh — `mnemo document put|get|delete|search|paths`, JSON documents at a path and a
# key (LangGraph's store; docs/documents.md): put replaces, get prints the value and --json the
# operation's document object; search scopes by path prefix, filters values, pages and ranks by
# meaning; paths lists, matches and cuts them; a time to live ends a document (reads restart it
# unless told not to, gc removes the row); export and import carry them; bad input names the field.
. "$TESTS_DIR/cli/lib.sh"

keys() { jget "$1" '[d["path"] + "/" + d["key"] for d in j]'; }
# at MS ARGS...: mnemo on the test's database with the library's clock at MS (the order of
# "newest updated first" and times to live decided by the test, not by how fast it runs)
at() {
    _ms=$1
    shift
    env MNEMO_TEST_NOW_MS="$_ms" "$MNEMO" --db "$DB" "$@"
}

# ---- put and get
ok at 1700000001000 document put users.alice prefs --value '{"theme":"dark","age":31}'
eq "$OUT" "saved document prefs at path users.alice" "put prints what it saved"
ok mn document get users.alice prefs
eq "$OUT" '{"theme":"dark","age":31}' "get prints the value"
ok mn document get users.alice prefs --json
eq "$(jget "$OUT" 'list(j)')" '["namespace", "path", "key", "value", "created_at", "updated_at", "expires_at", "score"]' \
    "get --json: the operation's document object"
eq "$(jget "$OUT" '[j["namespace"], j["path"], j["key"], j["value"], j["created_at"], j["updated_at"], j["expires_at"], j["score"]]')" \
    '["default", "users.alice", "prefs", {"theme": "dark", "age": 31}, 1700000001000, 1700000001000, null, null]' "its members"
printf '%s' '{"theme":"light","age":12,"tags":["kid"]}' >bob.json
ok at 1700000002000 document put users.bob prefs --value - --json <bob.json
eq "$(jget "$OUT" '[j["path"], j["key"], j["value"], j["expires_at"]]')" \
    '["users.bob", "prefs", {"theme": "light", "age": 12, "tags": ["kid"]}, null]' \
    "put --json: the stored document, its value read from standard input"
ok at 1700000003000 document put users.alice prefs --value '{"theme":"dark","age":32}'
ok mn document get users.alice prefs
eq "$OUT" '{"theme":"dark","age":32}' "a put replaces the document there"
ok at 1700000004000 document put usersx.carol prefs --value '{"theme":"dark","age":40}'
ok at 1700000005000 document put teams.core members --value '{"size":3}'
ok mn document put users.alice prefs --namespace team-a --value '{"theme":"team"}'
ok mn document get users.alice prefs --namespace team-a
eq "$OUT" '{"theme":"team"}' "another namespace has its own document at the same path and key"

# ---- search: a prefix is that path and the paths below it, newest updated first
ok mn document search users --json
eq "$(keys "$OUT")" '["users.alice/prefs", "users.bob/prefs"]' "search PREFIX: whole labels (usersx is not below users)"
ok mn document search --json
eq "$(keys "$OUT")" '["teams.core/members", "usersx.carol/prefs", "users.alice/prefs", "users.bob/prefs"]' \
    "search without a prefix: every path of the namespace, newest updated first"
ok mn document search users.alice --namespace team-a --json
eq "$(jget "$OUT" '[(d["namespace"], d["value"]) for d in j]')" '[["team-a", {"theme": "team"}]]' "search --namespace"
ok mn document search --filter '{"theme":"dark"}' --json
eq "$(keys "$OUT")" '["usersx.carol/prefs", "users.alice/prefs"]' "search --filter: values equal"
ok mn document search --filter '{"age":{"$gte":18,"$lt":40}}' --json
eq "$(keys "$OUT")" '["users.alice/prefs"]' "search --filter: operators"
ok mn document search users --filter '{"theme":{"$ne":"dark"}}' --json
eq "$(keys "$OUT")" '["users.bob/prefs"]' "search --filter within a prefix"
ok mn document search --limit 2 --offset 1 --json
eq "$(keys "$OUT")" '["usersx.carol/prefs", "users.alice/prefs"]' "search --limit --offset: a page"
ok mn document search users
eq "$OUT" "$(printf 'users.alice\tprefs\t{"theme":"dark","age":32}\nusers.bob\tprefs\t{"theme":"light","age":12,"tags":["kid"]}')" \
    "search prints a line a document: path, key, value"
ok mn document search nobody.here --json
eq "$OUT" "[]" "a prefix holding nothing finds nothing"
fails 1 "^mnemo: query: ranking by meaning needs an embedder" mn document search --query "dark theme"

# ranked by meaning: the indexed fields' vectors (the hash embedder), a document without any last
ok env MNEMO_EMBEDDER=hash "$MNEMO" --db "$DB" document put notes n1 --value '{"text":"the cat sat on the mat"}' \
    --index '["text"]'
ok env MNEMO_EMBEDDER=hash "$MNEMO" --db "$DB" document put notes n2 --value '{"text":"quarterly revenue report"}'
ok env MNEMO_EMBEDDER=hash "$MNEMO" --db "$DB" document search notes --query "a cat on a mat" --json
eq "$(jget "$OUT" '[d["key"] for d in j] + [j[0]["score"] > j[1]["score"], all(isinstance(d["score"], float) for d in j)]')" \
    '["n1", "n2", true, true]' "search --query: best first, with scores"
ok mn document put notes n3 --value '{"text":"cat mat"}'
ok env MNEMO_EMBEDDER=hash "$MNEMO" --db "$DB" document search notes --query "a cat on a mat"
check "search --query prints a score column, - for a document without a vector" sh -c '
    printf "%s\n" "$1" | sed -n 1p | grep -Eq "^notes	n1	0\.[0-9]{4}	\{\"text\":\"the cat sat on the mat\"\}$" &&
    printf "%s\n" "$1" | sed -n 3p | grep -Fxq "notes	n3	-	{\"text\":\"cat mat\"}"' - "$OUT"

# ---- paths
for p in a.b.c a.b.d a.e x.b.c; do
    ok mn document put "$p" k --namespace tree --value '{}'
done
ok mn document paths --namespace tree
eq "$OUT" "$(printf 'a.b.c\na.b.d\na.e\nx.b.c')" "paths prints a path a line, in byte order"
ok mn document paths --namespace tree --prefix a --json
eq "$OUT" '["a.b.c","a.b.d","a.e"]' "paths --prefix"
ok mn document paths --namespace tree --prefix '*.b' --json
eq "$OUT" '["a.b.c","a.b.d","x.b.c"]' "paths --prefix: * matches any label"
ok mn document paths --namespace tree --suffix c --json
eq "$OUT" '["a.b.c","x.b.c"]' "paths --suffix"
ok mn document paths --namespace tree --max-depth 2 --json
eq "$OUT" '["a.b","a.e","x.b"]' "paths --max-depth: cut and merged"
ok mn document paths --namespace tree --limit 2 --offset 1 --json
eq "$OUT" '["a.b.d","a.e"]' "paths --limit --offset"

# ---- delete
ok mn document delete users.bob prefs
eq "$OUT" "deleted document prefs at path users.bob" "delete prints what it deleted"
fails 1 "^mnemo: document 'prefs' at path 'users.bob' not found" mn document get users.bob prefs
ok mn document delete users.bob prefs --json
eq "$OUT" '{"deleted":0}' "deleting again deletes nothing, and is no error"
ok mn document delete users.bob prefs
eq "$OUT" "no document prefs at path users.bob" "delete says when there was none"

# ---- time to live: a read restarts it unless --no-refresh-ttl (the clock fixed by the test)
ok at 1000000 document put cache.r k --value '{}' --ttl-ms 5000 --json
eq "$(jget "$OUT" 'j["expires_at"]')" 1005000 "put --ttl-ms: expires that long after the write"
ok at 1003000 document get cache.r k --no-refresh-ttl --json
eq "$(jget "$OUT" 'j["expires_at"]')" 1005000 "get --no-refresh-ttl leaves the time running"
ok at 1003000 document get cache.r k --json
eq "$(jget "$OUT" 'j["expires_at"]')" 1008000 "get restarts it"
ok at 1007000 document search cache --json
eq "$(jget "$OUT" '[d["expires_at"] for d in j]')" "[1012000]" "search restarts it for what it returns"
ok at 1011000 document search cache --no-refresh-ttl --json
eq "$(jget "$OUT" '[d["expires_at"] for d in j]')" "[1012000]" "search --no-refresh-ttl leaves it"
fails 1 "not found" at 1012001 document get cache.r k
# and on the real clock: 50 ms, then gone
ok mn document put cache.short k --value '{"v":1}' --ttl-ms 50 --json
eq "$(jget "$OUT" 'j["expires_at"] - j["updated_at"]')" 50 "expires_at is 50 ms after the write"
sleep 0.2
fails 1 "^mnemo: document 'k' at path 'cache.short' not found" mn document get cache.short k
ok mn document search cache --json
eq "$OUT" "[]" "search does not see expired documents"
ok mn document paths --prefix cache --json
eq "$OUT" "[]" "nor does paths"
ok mn gc --json
eq "$(sql "$DB" "SELECT count(*) FROM documents WHERE path LIKE 'cache.%'")" 0 "gc removes the rows of expired documents"

# ---- export and import
ok mn document search --limit 1000 --no-refresh-ttl --json
BEFORE=$OUT
ok mn export --out export.jsonl
eq "$(grep -c '^{"type":"document"' export.jsonl)" 11 "the export has a document line for each, every namespace's"
FRESH=$(new_db fresh)
ok "$MNEMO" --db "$FRESH" import export.jsonl --json
ok "$MNEMO" --db "$FRESH" document search --limit 1000 --no-refresh-ttl --json
eq "$OUT" "$BEFORE" "import into a fresh database restores them as they were"
ok "$MNEMO" --db "$FRESH" document paths --namespace tree --json
eq "$OUT" '["a.b.c","a.b.d","a.e","x.b.c"]' "other namespaces' too"

# ---- errors: the field named, nothing written
fails 1 "^mnemo: path: 'a\.\.b' has an empty label" mn document put a..b k --value '{}'
fails 1 "^mnemo: path: 'a\.\.b' has an empty label" mn document get a..b k
fails 1 "^mnemo: filter\.age: unknown operator '\\\$foo'" mn document search --filter '{"age":{"$foo":1}}'
fails 1 "^mnemo: filter: must be an object" mn document search --filter '[1]'
fails 1 "^mnemo: value: malformed JSON: .* at line 1 column" mn document put a k --value '{"a":'
fails 1 "^mnemo: value: must be an object" mn document put a k --value '[1]'
fails 1 "^mnemo: index: must be an array" mn document put a k --value '{}' --index '"title"'
fails 2 "^mnemo: document put: --value is required" mn document put a k
fails 2 "^mnemo: --ttl-ms: '-1' is not a whole number from 0 to" mn document put a k --value '{}' --ttl-ms -1
fails 2 "^mnemo: --limit: '0' is not a whole number from 1 to 1000" mn document search --limit 0
fails 2 "^mnemo: --max-depth: '0' is not a whole number from 1 to" mn document paths --max-depth 0
fails 2 "^mnemo: document get: unknown option --refresh-ttl" mn document get a k --refresh-ttl
fails 2 "^mnemo: usage: mnemo document get PATH KEY" mn document get a
fails 1 "not found" mn document get a k
finish
