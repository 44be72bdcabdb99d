#!/bin/sh
# t1715-serve-mem0-erase.sh — the Mem0 routes' delete and delete-all erase the raw messages `add`
# kept in the scope's hidden session once no live memory names them (mn_memory_erase_sources):
# a delete erases the messages the memory came from (not one another live memory still names),
# a delete-all the whole scope session (messages that never became a memory too); afterwards the
# text is in no keyword search, no hidden session, and no row of the database (sqlite3 / psql).
# Also as pg/cli/t1715-serve-mem0-erase.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

serve_start
add() { req POST /v3/memories/add "$1"; eq "$CODE" 200 "add: 200 ($OUT)"; }
# found WORD...: for each word, the keyword search hits and the hidden sessions' messages holding it
found() {
    python3 - "$URL" "$@" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
get = lambda path: json.load(urllib.request.urlopen(url + path))
hidden = [s["id"] for s in get("/v1/sessions?limit=100")["sessions"] if s["metadata"].get("source") == "mem0"]
texts = [(m["content"] or "").lower() for s in hidden for m in get(f"/v1/sessions/{s}/messages?all=true")["messages"]]
print(" ".join(f'{len(get(f"/v1/search?q={w}&mode=keyword")["hits"])} {sum(w in t for t in texts)}' for w in sys.argv[2:]))
PY
}
# rows WORD...: the rows of every table (messages, keyword index, memories, events, …) holding
# each word (SQLite: a dump of the database and of its keyword index, blobs in hex too)
rows() {
    if [ "$(backend)" = postgres ]; then
        for _w in "$@"; do
            sql "$DB" "SELECT count(*) FROM messages WHERE content ILIKE '%$_w%'"
        done | tr '\n' ' ' | sed 's/ $//'
        return
    fi
    for _f in "$DB" "$DB.keywords"; do
        [ -f "$_f" ] && sqlite3 "$_f" .dump </dev/null
    done | python3 -c '
import sys
dump = sys.stdin.read().lower()
print(" ".join(str(dump.count(w) + dump.count(w.encode().hex())) for w in sys.argv[1:]))' "$@"
}

# one message, two memories: deleting one keeps the message, deleting the other erases it
add '{"messages":[{"role":"user","content":"Greetings quokka. My city is Lisbon. I prefer green tea."}],"user_id":"kim"}'
CITY=$(jget "$OUT" '[m["id"] for m in j if "Lisbon" in m["memory"]][0]')
TEA=$(jget "$OUT" '[m["id"] for m in j if "tea" in m["memory"]][0]')
eq "$(found quokka)" "1 1" "the raw message is kept in the scope's session, and searchable"
check "the database holds it (what the checks below look for)" test "$(rows quokka)" -gt 0
req DELETE "/v1/memories/$CITY/"
eq "$CODE" 200 "delete the city"
eq "$(found quokka)" "1 1" "the message stays while the tea memory still names it"
req DELETE "/v1/memories/$TEA/"
eq "$CODE" 200 "delete the tea"
eq "$(found quokka)" "0 0" "then it is erased: no keyword hit, not in the hidden session"
eq "$(rows quokka)" 0 "no row of the database holds it"
req GET "/v1/memories/$TEA/history/"
eq "$(jget "$OUT" '[h["event"] for h in j]')" '["ADD", "DELETE"]' "the memory's history stays (Mem0's delete)"

# infer false: the message is the memory; deleting it erases the message
add '{"messages":[{"role":"user","content":"The numbat door code is 7"}],"user_id":"kim","infer":false}'
NUMBAT=$(jget "$OUT" 'j[0]["id"]')
add '{"messages":[{"role":"user","content":"My dog is called kiwi."}],"user_id":"kim"}'
req DELETE "/v1/memories/$NUMBAT/"
eq "$(found numbat)" "0 0" "infer false: the raw message is erased with the memory"
eq "$(found kiwi)" "1 1" "another memory's message stays"

# delete-all: the scope's whole session, the message that became no memory too; other scopes keep theirs
add '{"messages":[{"role":"user","content":"Hi, platypus here. My city is Oslo."},{"role":"assistant","content":"Noted, axolotl."}],"user_id":"ada"}'
add '{"messages":[{"role":"user","content":"Wombat reporting. My team is infra."}],"user_id":"ada","agent_id":"ops"}'
eq "$(found platypus axolotl wombat)" "1 1 1 1 1 1" "ada's messages are kept"
req DELETE "/v1/memories/?user_id=ada"
eq "$CODE $(jget "$OUT" 'j["deleted"]')" "200 2" "delete-all closes ada's memories"
eq "$(found platypus axolotl wombat)" "0 0 0 0 0 0" "delete-all erases the scope sessions whole"
eq "$(rows platypus axolotl wombat)" "0 0 0" "no row holds them"
eq "$(found kiwi)" "1 1" "kim's scope keeps its message"
req POST /v3/memories '{"filters":{"user_id":"kim"}}'
eq "$(jget "$OUT" '[m["memory"] for m in j["results"]]')" '["User'"'"'s dog is called kiwi"]' "and its memory"
add '{"messages":[{"role":"user","content":"My city is Bergen."}],"user_id":"ada"}'
eq "$(jget "$OUT" '[m["memory"] for m in j]')" '["User'"'"'s city is Bergen"]' "a later add makes the scope's session again"

serve_stop
eq "$(integrity "$DB")" ok "the database passes its integrity check"
finish
