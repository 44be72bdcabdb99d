#!/bin/sh
# t0900-threads.sh — threads: cross-tool continuation, TTL expiry with an injected clock (reads
# say expired, never an empty history), gc, turn limits (keep and delete; every message a turn, a
# tool call with its results one; session limit), files newest first, fork, resume, stats.
. "$TESTS_DIR/cli/lib.sh"

NOW=1800000000000 # a fixed clock (ms), moved forward by hand
at() { MNEMO_TEST_NOW_MS=$1; export MNEMO_TEST_NOW_MS; }
at $NOW

# --- a thread opened by one tool, continued by two others ----------------------------------------
ok mn session new --tool chat --json
TH=$(jget "$OUT" 'j["id"]')
eq "$(jget "$OUT" '[j["tool_name"], j["ttl_ms"], j["max_turns"], j["expires_at"] - j["created_at"]]')" \
    '["chat", 10800000, 50, 10800000]' "a thread gets the default TTL (3 h) and turn limit (50)"
# 0 or -1 given: none (as the API's ttl_seconds and max_turns); absent: the thread default (on a
# database of their own: the counts below are of this script's threads)
DB_MAIN=$DB
DB=$(new_db ttl)
for v in 0 -1; do
    ok mn session new --tool-name chat --ttl-seconds $v --max-turns $v --json
    eq "$(jget "$OUT" '[j["ttl_ms"], j["max_turns"], j["expires_at"]]')" '[0, 0, 0]' "--ttl-seconds $v --max-turns $v: none"
done
ok mn session new --tool chat --ttl 60 --json
eq "$(jget "$OUT" '[j["tool_name"], j["ttl_ms"], j["max_turns"]]')" '["chat", 60000, 50]' "the older spellings --tool --ttl"
fails 2 "--ttl-seconds: '-2' is not a whole number from -1" mn session new --ttl-seconds -2
fails 2 "--ttl and --ttl-seconds are one option" mn session new --ttl 5 --ttl-seconds 5
fails 2 "--ttl: 'abc' is not a whole number" mn session new --ttl abc
fails 2 "option --ttl needs a value" mn session new --ttl
DB=$DB_MAIN
ok mn add "$TH" user "Why does the build fail?" --tool chat --files '["src/a.c","Makefile"]'
ok mn add "$TH" assistant "Missing include in src/a.c." --tool chat
ok mn add "$TH" user "Review the fix" --tool codereview --files '["src/a.c","src/b.c"]'
ok mn add "$TH" assistant "Looks right." --tool codereview
ok mn add "$TH" user "Now debug the test" --tool debug --files '["tests/t.c"]'
ok mn history "$TH" --json
eq "$(jget "$OUT" '[m["tool_name"] for m in j]')" '["chat", "chat", "codereview", "codereview", "debug"]' \
    "history shows the three tools in order"
ok mn files "$TH" --json
eq "$(jget "$OUT" 'j')" '["tests/t.c", "src/a.c", "src/b.c", "Makefile"]' "files: unique paths, newest first"
ok mn session show "$TH" --json
eq "$(jget "$OUT" 'j["turn_count"]')" 3 "three turns"
ok mn session list
check "session list shows the tool and the time left" sh -c 'printf "%s\n" "$1" | grep -q "chat .*3h00m"' - "$OUT"

# --- TTL: touching extends, idling expires -------------------------------------------------------
at $((NOW + 2 * 3600 * 1000))
ok mn add "$TH" assistant "Found it." --tool debug   # extends the thread to now + 3 h
at $((NOW + 4 * 3600 * 1000))
ok mn history "$TH"
pass "an append extended the thread past its first expiry"
at $((NOW + 6 * 3600 * 1000))
fails 1 "expired at" mn history "$TH"
fails 1 "expired" mn context "$TH"
fails 1 "expired" mn add "$TH" user "still there?"
fails 1 "expired" mn session show "$TH"
ok mn stats --json
eq "$(jget "$OUT" '[j["threads"], j["expired_pending"]]')" '[1, 1]' "stats: one thread, expired, waiting for gc"
ok mn session new --title plain
P=$OUT
ok mn add "$P" user "plain sessions never expire"
ok mn gc --json
eq "$(jget "$OUT" 'j["purged"]')" 1 "gc purges the expired thread"
fails 1 "not found" mn history "$TH"
ok mn history "$P"
pass "gc keeps plain sessions"
fails 1 "'nope' not found" mn history nope
fails 2 "ttl" mn session new --tool x --ttl -5
fails 2 "max-turns" mn session new --tool x --max-turns 99999999999

# --- turn limits ----------------------------------------------------------------------------------
# a turn is any appended message (seed 002), except that a tool call and its results are one
ok mn session new --tool chat --max-turns 2
K=$OUT
for i in 1 2 3 4; do
    ok mn add "$K" user "question $i"
    ok mn add "$K" assistant "answer $i"
done
ok mn history "$K" --json
eq "$(jget "$OUT" '[m["content"] for m in j]')" '["question 4", "answer 4"]' \
    "past the limit the oldest turns leave the active history"
ok mn history "$K" --json --all
eq "$(jget "$OUT" '[len(j), sum(1 for m in j if not m["active"])]')" '[8, 6]' "kept for search (threads.trim: keep)"
ok mn context "$K" --report --json
eq "$(jget "$OUT" 'len(j["messages"])')" 2 "the context only sees the active turns"
ok mn add "$K" assistant --tool-calls '[{"id":"c1","function":{"name":"ls"}}]'
ok mn add "$K" tool "README.md src/" --tool-call-id c1
ok mn history "$K" --json
eq "$(jget "$OUT" '[m["content"] or m["role"] for m in j]')" '["answer 4", "assistant", "README.md src/"]' \
    "a tool call and its result are one turn"
ok env MNEMO_THREAD_TRIM=delete "$MNEMO" --db "$DB" add "$K" user "question 5"
ok mn history "$K" --json --all
eq "$(jget "$OUT" '[m["content"] or m["role"] for m in j]')" '["assistant", "README.md src/", "question 5"]' \
    "threads.trim: delete removes the oldest turns, never a call without its result"
ok mn session show "$K" --json
eq "$(jget "$OUT" 'j["message_count"]')" 3 "counts follow deletions"
# seed 003's prune(max_messages): session limit keeps that many, at once
ok mn session new
P=$OUT
python3 -c 'import json; print(json.dumps([{"role": r, "content": r[0] + str(i)} for i in range(15) for r in ("user", "assistant")]))' >"$T/thirty.json"
ok mn add "$P" --messages "$T/thirty.json"
ok mn session limit "$P" 10 --json
eq "$(jget "$OUT" '[j["message_count"], j["inactive_count"]]')" '[30, 20]' "session limit 10 on 30 messages"
ok mn history "$P" --json
eq "$(jget "$OUT" '[len(j), j[0]["content"]]')" '[10, "u10"]' "leaves the newest 10 active"

# --- fork and resume ------------------------------------------------------------------------------
ok mn session new --system "be brief" --title origin
O=$OUT
for i in 1 2 3; do ok mn add "$O" user "m$i"; done
ok mn session fork "$O" --upto 2 --json
F=$(jget "$OUT" 'j["id"]')
eq "$(jget "$OUT" '[j["parent_id"], j["system_prompt"], j["message_count"]]')" "[\"$O\", \"be brief\", 2]" \
    "fork copies history up to a message, with parent_id"
ok mn history "$F" --json
eq "$(jget "$OUT" '[m["content"] for m in j]')" '["m1", "m2"]' "forked history"
ok mn session resume
eq "$OUT" "$F" "resume: the most recent live session"
ok mn session resume "$O"
eq "$OUT" "$O" "resume by id"
fails 1 "not found" mn session resume 0190f0f0-3333-7000-8000-000000000001

finish
