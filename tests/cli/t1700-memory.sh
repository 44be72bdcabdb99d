#!/bin/sh
# t1700-memory.sh — `mnemo memory …` end to end: add with scope, provenance and times; list and
# search with filters; update makes a version and closes the previous one; --as-of answers what
# was true then; delete closes, forget erases (history included); bad input refused with nothing
# written. Runs on SQLite and, as pg/cli/t1700-memory, on PostgreSQL.
. "$TESTS_DIR/cli/lib.sh"

export MNEMO_TEST_NOW_MS=1767225600000 # 2026-01-01
# provenance names messages of the memory's namespace (docs/memory.md): messages 1-7 to point at
ok mn session new
P=$OUT
for i in 1 2 3 4 5 6 7; do ok mn add "$P" user "turn $i"; done
ok mn memory add "Ana lives in Lisbon" --user ana --kind fact --source 3,4 --metadata '{"topic":"home"}' \
    --valid-from 2025-06-01
ID=$OUT
ok mn memory add "Ana prefers green tea" --user-id ana --kind preference --json
eq "$(jget "$OUT" '[j["kind"], j["user_id"], j["version"], j["actor"]]')" '["preference", "ana", 1, "cli"]' \
    "add --json prints the memory"
ok mn memory add "Bruno prefers coffee" --user bruno --kind preference
ok mn memory show "$ID" --json
eq "$(jget "$OUT" '[j["sources"], j["metadata"], j["valid_from"]]')" '[[3, 4], {"topic": "home"}, 1748736000000]' \
    "provenance, metadata and valid_from kept"

ok mn memory list --user-id ana --json
eq "$(jget "$OUT" 'sorted(m["text"] for m in j)')" '["Ana lives in Lisbon", "Ana prefers green tea"]' \
    "list by user"
ok mn memory list --kind preference --json
eq "$(jget "$OUT" 'len(j)')" 2 "list by kind"
ok mn memory list --metadata '{"topic":"home"}' --json
eq "$(jget "$OUT" '[m["id"] for m in j]')" "[\"$ID\"]" "list by metadata"
ok mn memory list --json
ALL=$(jget "$OUT" '[m["id"] for m in j]')
ok mn memory list --limit 2 --offset 1 --json
eq "$(jget "$OUT" '[m["id"] for m in j]')" "$(jget "$ALL" 'j[1:3]')" "--limit 2 --offset 1: the list's second and third"
fails 2 "--offset: '-1' is not a whole number" mn memory list --offset -1
ok mn memory search "prefers" --user bruno --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["Bruno prefers coffee"]' "keyword search within a user's scope"
# a metadata filter matches the type as well as the value: true is not 1 (1 and 1.0 are one number)
FDB=$(new_db flags)
ok "$MNEMO" --db "$FDB" memory add "flag one" --metadata '{"flag":1}'
ok "$MNEMO" --db "$FDB" memory add "flag true" --metadata '{"flag":true}'
ok "$MNEMO" --db "$FDB" memory add "flag text" --metadata '{"flag":"1"}'
for f in true 1 1.0 '"1"'; do
    ok "$MNEMO" --db "$FDB" memory list --metadata "{\"flag\":$f}" --json
    printf '%s ' "$(jget "$OUT" 'sorted(m["text"] for m in j)')"
done >"$T/flags.txt"
eq "$(cat "$T/flags.txt")" '["flag true"] ["flag one"] ["flag one"] ["flag text"] ' \
    "metadata filter true / 1 / 1.0 / \"1\": each its own type"
ok "$MNEMO" --db "$FDB" memory search "flag" --metadata '{"flag":true}' --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["flag true"]' "search: metadata true matches only true"

# --- versions and time ------------------------------------------------------------------------------
export MNEMO_TEST_NOW_MS=1772323200000 # 2026-03-01
ok mn memory update "$ID" --text "Ana lives in Porto" --reason "moved"
eq "$OUT" "$ID v2" "update prints the new version"
export MNEMO_TEST_NOW_MS=1780272000000 # 2026-06-01
ok mn memory update "$ID" --text "Ana lives in Berlin" --valid-from 2026-05-15
ok mn memory list --user ana --kind fact --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["Ana lives in Berlin"]' "now: the latest fact"
ok mn memory list --user ana --kind fact --as-of 2026-02-01 --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["Ana lives in Lisbon"]' "as of February: Lisbon"
ok mn memory list --user ana --kind fact --as-of 2026-04-01 --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["Ana lives in Porto"]' "as of April: Porto"
ok mn memory search "lives" --as-of 2026-04-01 --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["Ana lives in Porto"]' "search as of a past moment"
ok mn memory history "$ID" --json
eq "$(jget "$OUT" '[(m["version"], m["change"], m["superseded_at"] is not None) for m in j]')" \
    '[[1, "add", true], [2, "update", true], [3, "update", false]]' "history keeps every version"
eq "$(jget "$OUT" '[j[1]["reason"], j[1]["valid_to"]]')" '["moved", 1778803200000]' \
    "a version is closed where the next one begins"
ok mn memory history "$ID"
check "the text history names each change and its reason" sh -c 'printf "%s" "$1" | grep -q "v2 update .* by cli: moved"' _ "$OUT"

# --- delete closes, forget erases -------------------------------------------------------------------
ok mn memory delete "$ID" --reason "left the country"
ok mn memory list --user ana --kind fact --json
eq "$(jget "$OUT" 'len(j)')" 0 "a deleted memory is no longer true"
ok mn memory list --user ana --kind fact --all --json
eq "$(jget "$OUT" '[m["change"] for m in j]')" '["delete"]' "--all shows the closed version"
ok mn memory list --user-id ana --kind fact --include-closed --json
eq "$(jget "$OUT" '[m["change"] for m in j]')" '["delete"]' "--include-closed, the API's name for --all"
fails 2 "--all and --include-closed are one option" mn memory list --all --include-closed
fails 2 "--source: 'x' is not a comma-separated list" mn memory add "x" --source x
fails 1 "sources: message 99 not found in namespace 'default'" mn memory add "x" --source 99
fails 1 "sources: message 3 not found in namespace 'other'" mn memory add "x" --source 3 --namespace other
ok mn memory list --user ana --kind fact --as-of 2026-05-20 --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["Ana lives in Berlin"]' "the past is kept"
fails 1 "closed" mn memory update "$ID" --text "again"
ok mn memory forget "$ID"
fails 1 "no such memory" mn memory history "$ID"
ok mn memory list --user ana --kind fact --as-of 2026-05-20 --json
eq "$(jget "$OUT" 'len(j)')" 0 "forget erases every version"
case $(backend) in
sqlite) eq "$(sql "$DB" "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'Berlin'")" 0 \
    "nothing left in the keyword index" ;;
postgres) eq "$(sql "$DB" "SELECT count(*) FROM memories WHERE text LIKE '%Berlin%'")" 0 "no row left" ;;
esac

# forget erases: no word of any version stays readable in the database's files (erasure.md), by
# memory forget and by namespace forget alike
ok mn memory add "secret zebraword"
SECRET=$OUT
ok mn memory update "$SECRET" --text "secret quokkaword"
ok mn memory add "secret okapiword" --namespace leaving
ok mn memory forget "$SECRET"
ok mn namespace forget leaving --yes
if [ "$(backend)" = sqlite ]; then
    for w in zebraword quokkaword okapiword; do
        check "forget leaves no '$w' in the database files" sh -c '! cat "$1"* | grep -q -a "$2"' _ "$DB" "$w"
    done
fi

# --- export / import / migrate carry every version ------------------------------------------------
ok mn memory add "Rui lives in Faro" --user rui --source 7
RUI=$OUT
ok mn memory update "$RUI" --text "Rui lives in Braga"
ok mn memory history "$RUI" --json
HIST=$OUT
ok mn export --out "$T/all.jsonl"
check "the export has a line per memory version" sh -c '[ "$(grep -c "^{\"type\":\"memory\"" "$1")" -eq 4 ]' _ "$T/all.jsonl"
DB2=$(new_db copy)
ok "$MNEMO" --db "$DB2" import "$T/all.jsonl"
ok "$MNEMO" --db "$DB2" memory history "$RUI" --json
eq "$OUT" "$HIST" "import brings back every version, as it was"
ok "$MNEMO" --db "$DB2" import "$T/all.jsonl"
ok "$MNEMO" --db "$DB2" memory history "$RUI" --json
eq "$OUT" "$HIST" "importing again adds nothing"
DB3=$(new_db migrated)
ok "$MNEMO" migrate --from "$DB" --to "$DB3"
ok "$MNEMO" --db "$DB3" memory history "$RUI" --json
eq "$OUT" "$HIST" "migrate copies every version"
ok "$MNEMO" --db "$DB3" memory search "Braga" --json
eq "$(jget "$OUT" '[m["id"] for m in j]')" "[\"$RUI\"]" "migrated memories are keyword-indexed"

# importing a newer export closes the version its newer version supersedes: one current version
DBA=$(new_db origin)
DBB=$(new_db replica)
ok "$MNEMO" --db "$DBA" memory add "User lives in Lisbon"
LIS=$OUT
ok "$MNEMO" --db "$DBA" export --out "$T/a1.jsonl"
ok "$MNEMO" --db "$DBB" import "$T/a1.jsonl"
export MNEMO_TEST_NOW_MS=1782864000000 # 2026-07-01
ok "$MNEMO" --db "$DBA" memory update "$LIS" --text "User lives in Porto"
ok "$MNEMO" --db "$DBA" export --out "$T/a2.jsonl"
ok "$MNEMO" --db "$DBB" import "$T/a2.jsonl"
ok "$MNEMO" --db "$DBB" memory list --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["User lives in Porto"]' "a re-import leaves one current version"
ok "$MNEMO" --db "$DBA" memory history "$LIS" --json
HIST=$OUT
ok "$MNEMO" --db "$DBB" memory history "$LIS" --json
eq "$OUT" "$HIST" "the re-imported history is the origin's, the old version closed as the update closed it"
export MNEMO_TEST_NOW_MS=1780272000000 # 2026-06-01

# --- extraction from a conversation -----------------------------------------------------------------
ok mn session new --namespace home
S=$OUT
ok mn add "$S" user "My dog is Rex. Remember that the wifi password changes on Fridays."
ok mn memory extract "$S" --json
eq "$(jget "$OUT" '[j["messages"], j["added"], j["updated"], j["unchanged"]]')" "[1, 2, 0, 0]" "extract adds two memories"
ok mn memory extract "$S" --json
eq "$(jget "$OUT" '[j["messages"], j["added"]]')" "[0, 0]" "extracting again changes nothing"
ok mn memory list --namespace home --json
eq "$(jget "$OUT" 'sorted(m["text"] for m in j)')" \
    '["The wifi password changes on Fridays", "User'"'"'s dog is Rex"]' "the extracted memories"
fails 1 "not one of offline" mn memory extract "$S" --extractor magic

# the pinned filter's three states, as REST's pinned true / false / absent
DB=$(new_db pinned)
ok mn memory add "Answer in British English" --pinned
ok mn memory add "Deploys go through staging first"
for f in --pinned --unpinned ""; do
    ok mn memory list $f --json
    jget "$OUT" '[m["text"] for m in j]'
done >"$T/pinned.txt"
eq "$(cat "$T/pinned.txt")" '["Answer in British English"]
["Deploys go through staging first"]
["Deploys go through staging first", "Answer in British English"]' "memory list --pinned / --unpinned / neither"
ok mn memory search "English staging" --mode keyword --unpinned --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["Deploys go through staging first"]' "memory search --unpinned"
fails 2 "pinned" mn memory list --pinned --unpinned

# --- bad input ---------------------------------------------------------------------------------------
ok mn memory list --json
BEFORE=$OUT
fails 1 "kind" mn memory add "x" --kind "Not Valid"
fails 1 "metadata" mn memory add "x" --metadata '[1]'
fails 1 "text" mn memory add ""
fails 1 "user_id: must not be empty \\(leave it unset instead\\)" mn memory add "x" --user-id ''
fails 1 "user_id: must not be empty \\(leave it unset instead\\)" mn memory list --user-id ''
fails 1 "namespace: must not be empty \\(leave it unset instead\\)" mn memory list --namespace ''
fails 1 "agent_id: must not be empty \\(leave it unset instead\\)" mn memory search "x" --agent-id ''
fails 1 "session_id: must not be empty \\(leave it unset instead\\)" mn memory search "x" --session-id ''
fails 2 "not a time" mn memory list --as-of yesterday
fails 2 "source" mn memory add "x" --source 1,abc
fails 1 "not a memory id" mn memory show nope
fails 2 "unknown option" mn memory add "x" --colour red
ok mn memory list --json
eq "$OUT" "$BEFORE" "refused input writes nothing"
finish
