#!/bin/sh
# t1740-checkpoint.sh — `mnemo checkpoint put|writes|show|list|delete`, a thread's graph
# checkpoints (LangGraph; docs/checkpoints.md): the thread a framework names becomes a session with
# that key; show gives the newest or the one named; list orders newest first and narrows by
# subgraph, before, limit and metadata; pending writes are kept (idx >= 0) or replaced (idx < 0);
# delete leaves the session; export/import and migrate carry them; bad input names what is wrong.
. "$TESTS_DIR/cli/lib.sh"

ids() { jget "$1" '[c["checkpoint_id"] for c in j]'; }

# ---- put: the first checkpoint makes the thread's session, with the thread's name as its key
ok mn checkpoint put user-42-chat --checkpoint-id 1ef4-0001 --type json --checkpoint eyJ2IjoxfQ== \
    --metadata '{"source":"input","step":-1}' --json
eq "$OUT" '{"thread_id":"user-42-chat","checkpoint_ns":"","checkpoint_id":"1ef4-0001"}' "put --json: REST's answer"
ok mn session show user-42-chat --json
eq "$(jget "$OUT" '[j["key"], j["namespace"], j["message_count"]]')" '["user-42-chat", "default", 0]' \
    "a non-UUID thread is a session with that key"
SID=$(jget "$OUT" 'j["id"]')
ok mn checkpoint put user-42-chat --checkpoint-id 1ef4-0002 --parent-checkpoint-id 1ef4-0001 --type json \
    --checkpoint eyJ2IjoyfQ== --metadata '{"source":"loop","step":0}'
eq "$OUT" "saved checkpoint 1ef4-0002 of thread user-42-chat" "put prints what it saved"
printf 'eyJ2IjozfQ==' >three.txt
ok mn checkpoint put user-42-chat --checkpoint-id 1ef4-0003 --parent-checkpoint-id 1ef4-0002 --type json \
    --checkpoint - --metadata '{"source":"loop","step":1}' <three.txt
ok mn checkpoint put user-42-chat --checkpoint-ns sub --checkpoint-id 1ef4-0004 --type json --checkpoint e30=
eq "$OUT" "saved checkpoint 1ef4-0004 of thread user-42-chat (checkpoint_ns sub)" "a subgraph's checkpoint"
ok mn checkpoint put other-thread --checkpoint-id 1ef4-0000 --type json --checkpoint e30=
ok mn checkpoint put user-42-chat --namespace team-a --checkpoint-id 1ef4-0009 --type json --checkpoint e30=

# ---- show: the newest of the root graph, or the one named
ok mn checkpoint show user-42-chat --json
eq "$(jget "$OUT" '[j["thread_id"], j["session_id"], j["checkpoint_ns"], j["checkpoint_id"], j["parent_checkpoint_id"], j["type"], j["checkpoint"], j["metadata"], j["pending_writes"]]')" \
    "[\"user-42-chat\", \"$SID\", \"\", \"1ef4-0003\", \"1ef4-0002\", \"json\", \"eyJ2IjozfQ==\", {\"source\": \"loop\", \"step\": 1}, []]" \
    "show: the newest, its text read from standard input"
ok mn checkpoint show user-42-chat --checkpoint-id 1ef4-0001 --json
eq "$(jget "$OUT" '[j["checkpoint_id"], j["parent_checkpoint_id"], j["checkpoint"]]')" '["1ef4-0001", null, "eyJ2IjoxfQ=="]' \
    "show --checkpoint-id: that one"
ok mn checkpoint show user-42-chat --checkpoint-ns sub --json
eq "$(jget "$OUT" 'j["checkpoint_id"]')" 1ef4-0004 "show --checkpoint-ns: the subgraph's newest"
ok mn checkpoint show user-42-chat --namespace team-a --json
eq "$(jget "$OUT" '[j["checkpoint_id"], j["session_id"] != "'"$SID"'"]')" '["1ef4-0009", true]' \
    "another namespace's thread of the same name is another session"
ok mn checkpoint show user-42-chat
check "show prints the fields" sh -c 'printf "%s\n" "$1" | grep -qx "checkpoint:    1ef4-0003" &&
    printf "%s\n" "$1" | grep -qx "parent:        1ef4-0002" && printf "%s\n" "$1" | grep -qx "size:          12 bytes"' - "$OUT"

# ---- list: newest first, narrowed
ok mn checkpoint list user-42-chat --json
eq "$(ids "$OUT")" '["1ef4-0004", "1ef4-0003", "1ef4-0002", "1ef4-0001"]' "list: every subgraph, newest first"
ok mn checkpoint list user-42-chat --checkpoint-ns '' --json
eq "$(ids "$OUT")" '["1ef4-0003", "1ef4-0002", "1ef4-0001"]' "list --checkpoint-ns '': the root graph's"
ok mn checkpoint list user-42-chat --before 1ef4-0003 --json
eq "$(ids "$OUT")" '["1ef4-0002", "1ef4-0001"]' "list --before: ids below it"
ok mn checkpoint list user-42-chat --limit 2 --json
eq "$(ids "$OUT")" '["1ef4-0004", "1ef4-0003"]' "list --limit"
ok mn checkpoint list user-42-chat --filter '{"source":"loop"}' --json
eq "$(ids "$OUT")" '["1ef4-0003", "1ef4-0002"]' "list --filter: metadata keys equal"
ok mn checkpoint list user-42-chat --filter '{"step":-1}' --json
eq "$(ids "$OUT")" '["1ef4-0001"]' "list --filter compares JSON values"
ok mn checkpoint list --json
eq "$(jget "$OUT" '[(c["thread_id"], c["checkpoint_id"]) for c in j]')" \
    '[["user-42-chat", "1ef4-0004"], ["user-42-chat", "1ef4-0003"], ["user-42-chat", "1ef4-0002"], ["user-42-chat", "1ef4-0001"], ["other-thread", "1ef4-0000"]]' \
    "list without a thread: every thread of the namespace (team-a's left out)"
ok mn checkpoint list user-42-chat --checkpoint-ns sub
check "list: a header, then one line a checkpoint" sh -c 'printf "%s\n" "$1" | sed -n 1p | grep -Eq "^CHECKPOINT +CREATED \(UTC\) +WRITES +CHECKPOINT_NS +THREAD +METADATA$" &&
    printf "%s\n" "$1" | sed -n 2p | grep -Eq "^1ef4-0004 +[0-9-]+ [0-9:]+ +0 +sub +user-42-chat +\{\}$" && [ "$(printf "%s\n" "$1" | wc -l)" -eq 2 ]' - "$OUT"
ok mn checkpoint list nobody --json
eq "$OUT" "[]" "a thread naming nothing has no checkpoints"

# ---- writes: a non-negative idx is written once, a negative one replaced
ok mn checkpoint writes user-42-chat --checkpoint-id 1ef4-0003 --json --writes \
    '[{"task_id":"t1","idx":0,"channel":"messages","type":"json","value":"Zmlyc3Q="},{"task_id":"t1","idx":-1,"channel":"__error__","type":"json","value":"ZXJyMQ=="}]'
eq "$OUT" '{"stored":2}' "writes --json: REST's answer"
printf '%s' '[{"task_id":"t1","idx":0,"channel":"messages","type":"json","value":"c2Vjb25k"},{"task_id":"t1","idx":-1,"channel":"__error__","type":"json","value":"ZXJyMg=="},{"task_id":"t0","task_path":"a","idx":3,"channel":"c","type":"json","value":"eA=="}]' >writes.json
ok mn checkpoint writes user-42-chat --checkpoint-id 1ef4-0003 --writes - <writes.json
eq "$OUT" "stored 3 writes" "writes read from standard input"
ok mn checkpoint show user-42-chat --json
eq "$(jget "$OUT" '[(w["task_path"], w["task_id"], w["idx"], w["value"]) for w in j["pending_writes"]]')" \
    '[["", "t1", -1, "ZXJyMg=="], ["", "t1", 0, "Zmlyc3Q="], ["a", "t0", 3, "eA=="]]' \
    "idx 0 kept its first value, idx -1 took the second; ordered by task path, task id, idx"
ok mn checkpoint list user-42-chat --checkpoint-id 1ef4-0003 --json
eq "$(jget "$OUT" '[len(c["pending_writes"]) for c in j]')" "[3]" "list --checkpoint-id: that one, with its writes"
# writes may come before their checkpoint (as LangGraph saves them), making the thread's session
ok mn checkpoint writes early-thread --checkpoint-id 1ef4-0001 \
    --writes '[{"task_id":"t","idx":0,"channel":"c","type":"json","value":"eA=="}]'
ok mn session show early-thread --json
eq "$(jget "$OUT" 'j["key"]')" early-thread "writes to a thread naming nothing make its session"
fails 1 "^mnemo: thread 'early-thread'" mn checkpoint show early-thread
ok mn checkpoint put early-thread --checkpoint-id 1ef4-0001 --type json --checkpoint e30=
ok mn checkpoint show early-thread --json
eq "$(jget "$OUT" '[w["value"] for w in j["pending_writes"]]')" '["eA=="]' "they show once the checkpoint is saved"

# ---- export and import, migrate
ok mn checkpoint list user-42-chat --json
BEFORE=$OUT
ok mn export user-42-chat --out export.jsonl
eq "$(grep -c '^{"type":"checkpoint"' export.jsonl)" 4 "the export has a checkpoint line for each"
FRESH=$(new_db fresh)
ok "$MNEMO" --db "$FRESH" import export.jsonl --json
ok "$MNEMO" --db "$FRESH" checkpoint list user-42-chat --json
eq "$OUT" "$BEFORE" "import into a fresh database restores them, pending writes too"
COPY=$T/copy.sqlite
ok "$MNEMO" migrate --from "$DB" --to "$COPY" --json
ok "$MNEMO" --db "$COPY" checkpoint list --json
eq "$(jget "$OUT" '[c["checkpoint_id"] for c in j if c["thread_id"] == "user-42-chat"]')" "$(ids "$BEFORE")" \
    "migrate copies them ($(backend) to SQLite)"
ok "$MNEMO" --db "$COPY" checkpoint list user-42-chat --json
eq "$OUT" "$BEFORE" "migrated checkpoints are the same, pending writes too"

# ---- delete: the checkpoints and writes go, the session stays
ok mn checkpoint delete user-42-chat --json
eq "$OUT" '{"deleted":4}' "delete --json: the checkpoints deleted"
ok mn session show user-42-chat --json
eq "$(jget "$OUT" 'j["id"]')" "$SID" "the session stays"
fails 1 "thread 'user-42-chat'" mn checkpoint show user-42-chat
ok mn checkpoint delete user-42-chat
eq "$OUT" "deleted 0 checkpoints of thread user-42-chat" "deleting again deletes nothing"
ok mn checkpoint show user-42-chat --namespace team-a --json
eq "$(jget "$OUT" 'j["checkpoint_id"]')" 1ef4-0009 "another namespace's thread is left alone"

# ---- errors: nothing is written
fails 1 "^mnemo: metadata: malformed JSON: .* at line 1 column" \
    mn checkpoint put bad-thread --checkpoint-id a --type json --checkpoint e30= --metadata '{"a":'
fails 1 "^mnemo: metadata: must be an object" \
    mn checkpoint put bad-thread --checkpoint-id a --type json --checkpoint e30= --metadata '[1]'
fails 2 "^mnemo: checkpoint put: unknown option --data " \
    mn checkpoint put bad-thread --checkpoint-id a --type json --data e30=
fails 2 "^mnemo: checkpoint put: --checkpoint is required" mn checkpoint put bad-thread --checkpoint-id a --type json
fails 2 "^mnemo: checkpoint put-writes: --writes is required" mn checkpoint writes bad-thread --checkpoint-id a
fails 1 "^mnemo: writes\[0\]\.idx: required" mn checkpoint writes other-thread --checkpoint-id 1ef4-0000 \
    --writes '[{"task_id":"t","channel":"c","type":"json","value":"x"}]'
fails 1 "^mnemo: filter: malformed JSON" mn checkpoint list --filter '{'
fails 2 "^mnemo: --limit: '0' is not a whole number from 1 to 10000" mn checkpoint list --limit 0
fails 2 "^mnemo: usage: mnemo checkpoint get THREAD" mn checkpoint show
fails 2 "^mnemo: usage: mnemo checkpoint delete-thread THREAD" mn checkpoint delete
fails 1 "^mnemo: thread 'nobody'" mn checkpoint show nobody
fails 1 "not found" mn session show bad-thread
fails 1 "not found" mn session show nobody
finish
