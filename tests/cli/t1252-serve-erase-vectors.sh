#!/bin/sh
# t1252-serve-erase-vectors.sh — erasure reaches the vector indexes of a running server
# (docs/erasure.md): a message, a session and a memory are deleted while `mnemo serve` runs with
# an embedder; the server keeps writing (its worker catches up and saves the indexes again past
# the 30 s save interval) and then shuts down (a last save). The erased vectors' exact bytes
# (read from the database before the deletes) are in no file beside the database. SQLite only:
# on PostgreSQL the indexes are in memory (tests/api/test_erasure_vectors covers both).
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
[ "$(backend)" = sqlite ] || { finish; exit 0; }

export MNEMO_EMBEDDER=hash
serve_start
req POST /v1/sessions '{}'
S=$(jget "$OUT" 'j["session"]["id"]')
req POST /v1/sessions '{}'
GONE=$(jget "$OUT" 'j["session"]["id"]')
for i in 1 2 3 4 5 6 7 8; do
    req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"the wombat number $i digs tunnel$i\"}"
    req POST "/v1/sessions/$GONE/messages" "{\"role\":\"user\",\"content\":\"the echidna number $i eats ant$i\"}"
done
req POST "/v1/sessions/$S/messages" '{"role":"user","content":"my bank pin is quokka7731 please forget it"}'
eq "$CODE" 201 "append the message to erase"
VICTIM=$(jget "$OUT" 'j["messages"][0]["id"]')
req POST /v1/memory '{"text":"the vault combination is numbat5518"}'
eq "$CODE" 200 "remember the memory to erase"
MEM=$(jget "$OUT" 'j["memory"]["id"]')
for i in 1 2 3 4 5 6; do req POST /v1/memory "{\"text\":\"the user likes bilby$i\"}"; done

indexed() {
    [ -f "$DB.hnsw.state" ] && [ -f "$DB.memories.hnsw.state" ] &&
        [ "$(sql "$DB" "SELECT count(*) FROM embeddings")" = 17 ] &&
        [ "$(sql "$DB" "SELECT count(*) FROM memory_vectors")" = 7 ]
}
wait_until 120 "the worker to embed, index and save both indexes" indexed
sql "$DB" "SELECT hex(vector) FROM embeddings WHERE message_id = $VICTIM" >"$T/vec.msg"
sql "$DB" "SELECT hex(e.vector) FROM embeddings e JOIN messages m ON m.id = e.message_id
           JOIN sessions s ON s.sid = m.session_sid WHERE s.id = '$GONE' LIMIT 1" >"$T/vec.session"
sql "$DB" "SELECT hex(v.vector) FROM memory_vectors v JOIN memories m ON m.vid = v.vid WHERE m.id = '$MEM'" >"$T/vec.memory"

# holds KIND: the erased vector of KIND is in some file beside the database
holds() {
    python3 - "$T/vec.$1" "$(dirname "$DB")" <<'PY'
import os, sys
needle = bytes.fromhex(open(sys.argv[1]).read().strip())
assert len(needle) >= 64, "no vector read"
d = sys.argv[2]
hit = [n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n)) and needle in open(os.path.join(d, n), "rb").read()]
print(" ".join(hit))
sys.exit(0 if hit else 1)
PY
}
check "the probe finds the message's vector in the saved index" holds msg
check "the probe finds the session's vector in the saved index" holds session
check "the probe finds the memory's vector in the saved index" holds memory

req DELETE "/v1/sessions/$S/messages/$VICTIM"
eq "$CODE" 200 "delete the message"
req DELETE "/v1/sessions/$GONE"
eq "$CODE" 200 "delete the session"
req POST "/v1/memory/$MEM/forget" '{}'
eq "$CODE" 200 "forget the memory"

# the server goes on writing (a message and a memory a second); its worker catches up and, past
# the save interval, saves both indexes again
LATER=0
saved_again() {
    [ -f "$DB.hnsw.state" ] && [ -f "$DB.memories.hnsw.state" ] && return 0
    LATER=$((LATER + 1))
    req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"later note $LATER about platypus$LATER\"}"
    req POST /v1/memory "{\"text\":\"later the user adopted koala$LATER\"}"
    sleep 1
    return 1
}
wait_until 180 "the server to save both indexes again after the erasure" saved_again
fails_now() { ! holds "$1"; }
check "no file holds the deleted message's vector after the periodic save" fails_now msg
check "no file holds the deleted session's vector after the periodic save" fails_now session
check "no file holds the forgotten memory's vector after the periodic save" fails_now memory
serve_stop
check "no file holds the deleted message's vector after shutdown" fails_now msg
check "no file holds the deleted session's vector after shutdown" fails_now session
check "no file holds the forgotten memory's vector after shutdown" fails_now memory
finish
