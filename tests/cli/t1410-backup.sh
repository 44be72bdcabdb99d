#!/bin/sh
# t1410-backup.sh — `mnemo backup DEST` (docs/cli.md, backup) while `mnemo serve` appends to the
# same database: the backup opens consistent (every session holds as many messages as its row
# says, the first ones of the source's, and whole append requests only), answers a keyword search
# without indexing again (the warning a rebuild logs is absent; a copy of the file alone shows
# it), answers a semantic search from the copied vector index (its report says the index
# answered; a copy without it scans), and has the offloaded tool outputs of its sessions and of
# no other; an existing DEST, the database itself and a journal left by DEST's name are refused,
# naming them. The pg variant: the refusal names PostgreSQL's own tools.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
MNEMO_TOKENIZER=heuristic
MNEMO_EMBEDDER=hash
export MNEMO_TOKENIZER MNEMO_EMBEDDER

if [ "$(backend)" = postgres ]; then
    ok mn stats
    fails 1 'PostgreSQL database: back it up with PostgreSQL.s own tools, pg_basebackup .* or pg_dump' \
        mn backup "$T/b.db"
    check "nothing is written" test ! -e "$T/b.db"
    finish
fi

# A session whose old tool outputs a context build offloads into $T/tool-outputs/SESSION/.
ok mn session create --title tools
TOOLS=$OUT
python3 -c '
import json
msgs = []
for i in range(6):
    msgs.append({"role": "user", "content": "Please fix issue %d, the quokka one." % i if i == 0 else "Fix issue %d." % i})
    msgs.append({"role": "assistant", "tool_calls": [{"id": "c%d" % i, "type": "function",
                 "function": {"name": "run_tests", "arguments": "{}"}}]})
    msgs.append({"role": "tool", "tool_call_id": "c%d" % i, "content": "E: test %d failed\n" % i + "x" * 3000})
    msgs.append({"role": "assistant", "content": "Fixed it; tests pass."})
json.dump(msgs, open("tools.json", "w"))'
ok mn append "$TOOLS" --messages tools.json
ok env MNEMO_TOOL_OUTPUT_OFFLOAD=on MNEMO_TOOL_OUTPUT_OFFLOAD_THRESHOLD=100 MNEMO_TOOL_OUTPUT_PROTECT_TOKENS=1000 \
    "$MNEMO" --db "$DB" context build "$TOOLS" --max-tokens 100000
check "tool outputs were offloaded" test -s "$T/tool-outputs/$TOOLS/3.txt"
# a folder of another database in the same folder (no session of this one)
OTHER=0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee
mkdir -p "$T/tool-outputs/$OTHER" && echo other >"$T/tool-outputs/$OTHER/1.txt"
ok mn embed --backfill
check "the vector index is saved beside the database" test -s "$DB.hnsw"

# Three sessions a loop appends to through the server, a user and an assistant message per
# request (one transaction), until told to stop.
serve_start
SIDS=
for n in 1 2 3; do
    req POST /v1/sessions '{"title":"load"}'
    SIDS="$SIDS $(jget "$OUT" 'j["session"]["id"]')"
done
: >"$T/acks"
(
    i=0
    while [ ! -e "$T/stop" ]; do
        for s in $SIDS; do
            i=$((i + 1))
            curl -s -o /dev/null -w '%{http_code}\n' -X POST -H 'Content-Type: application/json' \
                --data-binary "{\"messages\":[{\"role\":\"user\",\"content\":\"question $i about walrus$i\"},{\"role\":\"assistant\",\"content\":\"answer $i\"}]}" \
                "$URL/v1/sessions/$s/messages" >>"$T/acks"
        done
    done
) &
LOOP=$!
acks() { [ "$(wc -l <"$T/acks")" -ge "$1" ]; }
wait_until 120 "30 appends through the server" acks 30
mkdir "$T/bk"
ok mn backup "$T/bk/b.db"
check "the output names the backup" sh -c 'printf "%s" "$1" | grep -q "^backed up .*db.sqlite to .*/bk/b.db$"' - "$OUT"
AT=$(wc -l <"$T/acks")
wait_until 120 "30 more appends after the backup" acks $((AT + 30))
touch "$T/stop"
wait "$LOOP"
serve_stop
check "every append was acknowledged" sh -c '! grep -qv "^201$" "$1"' - "$T/acks"

b() { "$MNEMO" --db "$T/bk/b.db" "$@"; }
check "the backup's files, and no temporary folder left" sh -c 'cd "$1" && test -s b.db && test -s b.db.keywords &&
    test -s b.db.hnsw && test -s b.db.hnsw.state && ! ls -a | grep -q "backup-"' - "$T/bk"
# Keyword search, the backup's first open: the index came along (a copy of the file alone is
# indexed again at its open, and says so).
ok b search quokka --mode keyword --json
check "keyword search finds the seeded message" sh -c 'printf "%s" "$1" | grep -q quokka' - "$OUT"
check "keyword search in the backup indexed nothing again" sh -c '! printf "%s" "$1" | grep -q "indexing again"' - "$ERR"
ok b search walrus1 --mode keyword --json
check "keyword search finds a message the server appended" sh -c 'printf "%s" "$1" | grep -q "walrus1\\b"' - "$OUT"
cp "$T/bk/b.db" "$T/alone.db"
ok "$MNEMO" --db "$T/alone.db" search quokka --mode keyword
check "a copy of the database file alone indexes again (what the check above would see)" \
    sh -c 'printf "%s" "$1" | grep -q "indexing again"' - "$ERR"

eq "$(sqlite3 "$T/bk/b.db" 'PRAGMA integrity_check')" ok "the backup passes SQLite's check"

# Consistent: per session, the row's count, the history's length (each the first messages of the
# source's), and whole requests only; the stats' total their sum; more than the seed, fewer than now.
for side in bk src; do
    db=$DB
    [ $side = bk ] && db=$T/bk/b.db
    "$MNEMO" --db "$db" session list --limit 100 --json >"$T/$side.sessions"
    for s in $TOOLS $SIDS; do
        "$MNEMO" --db "$db" history "$s" --all --limit 10000 --json >"$T/$side.$s.history"
    done
done
run b stats --json
check "the backup is a consistent prefix of the source" python3 -c '
import json, sys
bk, src, stats, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4].split()
rows = {s["id"]: s for s in json.load(open(bk + ".sessions"))}
assert sorted(rows) == sorted(ids), (sorted(rows), ids)
total = 0
for s in ids:
    h = json.load(open("%s.%s.history" % (bk, s)))
    assert len(h) == rows[s]["message_count"], (s, len(h), rows[s]["message_count"])
    whole = json.load(open("%s.%s.history" % (src, s)))
    assert h == whole[:len(h)], s
    if s != ids[0]:
        assert len(h) % 2 == 0 and [m["role"] for m in h] == ["user", "assistant"] * (len(h) // 2), s
    total += len(h)
assert stats["messages"] == total, (stats["messages"], total)
loaded = total - 24
assert loaded >= 60, loaded  # at least the 30 appends acknowledged before the backup began
assert sum(len(json.load(open("%s.%s.history" % (src, s)))) for s in ids) > total  # appends went on
' "$T/bk" "$T/src" "$OUT" "$TOOLS $SIDS"

# Semantic search: the saved vector index answered (a copy without it scans every vector).
ok b search "fix issue quokka" --mode semantic --json --report
check "semantic search finds the seeded message" sh -c 'printf "%s" "$1" | grep -q quokka' - "$OUT"
check "the copied vector index answered" python3 -c '
import json, sys
assert json.loads(sys.argv[1])["index"]["indexed"] > 0, sys.argv[1]' "$OUT"
cp "$T/bk/b.db" "$T/novec.db"
ok "$MNEMO" --db "$T/novec.db" search "fix issue quokka" --mode semantic --json --report
check "without the index file, no index answers (what the check above would see)" python3 -c '
import json, sys
assert json.loads(sys.argv[1])["index"]["indexed"] == 0, sys.argv[1]' "$OUT"

# The offloaded outputs of its sessions, and not another database's.
check "the offloaded tool outputs came along" sh -c 'cd "$1/tool-outputs/$2" && for f in *.txt; do
    cmp -s "$f" "$1/bk/tool-outputs/$2/$f" || exit 1; done' - "$T" "$TOOLS"
check "another database's outputs did not" test ! -e "$T/bk/tool-outputs/$OTHER"

# Refusals, each naming what is in the way; nothing is written.
fails 1 "backup: $T/bk/b.db already exists" mn backup "$T/bk/b.db"
fails 1 "backup: $DB is the database itself" mn backup "$DB"
: >"$T/bk/j.db-wal"
fails 1 "backup: $T/bk/j.db-wal is there, a SQLite journal of another database" mn backup "$T/bk/j.db"
check "no backup under a refused name" test ! -e "$T/bk/j.db"
fails 1 'backup: the destination must be a new file' mn backup ':memory:'
fails 2 'usage' mn backup
finish
