#!/bin/sh
# t0131-auto-prune.sh — memory.auto_prune_days is applied by every command that opens the
# database, not only `mnemo serve` (a 40-day-old session used to survive `mnemo chat` and every
# other command): at most once a day per database, the time recorded in the database.
. "$TESTS_DIR/cli/lib.sh"

old_session() { # a session whose last update was 40 days ago; prints its id
    _id=$("$MNEMO" --db "$DB" session new --json | jget "$(cat)" 'j["id"]')
    sql "$DB" "UPDATE sessions SET updated_at = updated_at - CAST(40 AS BIGINT) * 86400000 WHERE id = '$_id'" >/dev/null
    echo "$_id"
}
OLD=$(old_session)
ok mn session new --json
NEW=$(jget "$OUT" 'j["id"]')
ok mn session list --json
eq "$(jget "$OUT" 'len(j)')" 2 "without auto_prune_days nothing is pruned"

export MNEMO_AUTO_PRUNE_DAYS=30
ok mn session list --json
eq "$(jget "$OUT" '[s["id"] for s in j]')" "[\"$NEW\"]" "any command prunes the session idle for 40 days"
check "the prune time is recorded" test -n "$(sql "$DB" "SELECT value FROM meta WHERE key = 'prune.auto_at'")"

OLD2=$(old_session)
ok mn session list --json
eq "$(jget "$OUT" 'len(j)')" 2 "at most once a day: a second command the same day does not prune"
sql "$DB" "UPDATE meta SET value = CAST(value AS BIGINT) - 86400001 WHERE key = 'prune.auto_at'" >/dev/null
ok mn session list --json
eq "$(jget "$OUT" '[s["id"] for s in j]')" "[\"$NEW\"]" "a day later the next command prunes again"
unset MNEMO_AUTO_PRUNE_DAYS
finish
