#!/bin/sh
# t1720-memory-llm.sh — the llm memory extractor against a local fake LLM
# (tests/fake_llm/fake_memory_llm.js, its model name picks the decision): add, update,
# invalidate and nothing, each with provenance; a malformed answer (not JSON, a memory id that
# was not offered, candidates of the wrong shape) changes nothing, is a session event, and the
# turns are read again next time; re-running over the same turns changes nothing; supersession
# answered "as of"; the decision sees only the memories of exactly the session's scope. Also as
# pg/cli/t1720-memory-llm.
. "$TESTS_DIR/cli/lib.sh"

node "$TESTS_DIR/fake_llm/fake_memory_llm.js" >"$T/port" &
LLM=$!
n=0
while [ ! -s "$T/port" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
PORT=$(sed -n 's/^PORT //p' "$T/port")
export MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:$PORT MNEMO_SUMMARIZER_RETRIES=0
x() { MNEMO_SUMMARIZER_MODEL=$1 ok mn memory extract "$2" --extractor llm --json; }
live() { ok mn memory list --namespace "$1" --json; jget "$OUT" 'sorted(m["text"] for m in j)'; }

export MNEMO_TEST_NOW_MS=1767225600000 # 2026-01-01
ok mn session new --namespace n1
S=$OUT
ok mn add "$S" user "The user lives in Lisbon" --json
M1=$(jget "$OUT" 'j["id"]')
ok mn add "$S" assistant "Nice city."
x add "$S"
eq "$(jget "$OUT" '[j["candidates"], j["added"], j["rejected"]]')" "[1, 1, 0]" "add"
ok mn memory list --namespace n1 --json
eq "$(jget "$OUT" '[(m["text"], m["sources"], m["actor"]) for m in j]')" \
    "[[\"The user lives in Lisbon\", [$M1], \"extractor:llm\"]]" "added with its provenance"
LID=$(jget "$OUT" 'j[0]["id"]')
x add "$S"
eq "$(jget "$OUT" '[j["messages"], j["added"]]')" "[0, 0]" "re-running over the same turns changes nothing"

export MNEMO_TEST_NOW_MS=1772323200000 # 2026-03-01
ok mn add "$S" user "The user lives in Porto"
x update "$S"
eq "$(jget "$OUT" '[j["updated"], j["added"]]')" "[1, 0]" "update"
eq "$(live n1)" '["The user lives in Porto"]' "the current fact"
ok mn memory list --namespace n1 --as-of 2026-02-01 --json
eq "$(jget "$OUT" '[(m["id"], m["text"]) for m in j]')" "[[\"$LID\", \"The user lives in Lisbon\"]]" \
    "as of February: the superseded version, same memory"

export MNEMO_TEST_NOW_MS=1775001600000 # 2026-04-01
ok mn add "$S" user "The user lives in Porto, said again"
x nothing "$S"
eq "$(jget "$OUT" '[j["unchanged"], j["added"], j["updated"]]')" "[1, 0, 0]" "nothing"
ok mn add "$S" user "The user no longer lives in Porto"
x invalidate "$S"
eq "$(jget "$OUT" 'j["invalidated"]')" 1 "invalidate"
eq "$(live n1)" '[]' "invalidated: nothing is true now"
ok mn memory list --namespace n1 --as-of 2026-03-15 --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["The user lives in Porto"]' "still true for the past"

# malformed answers change nothing, are events, and the turns are read again
ok mn session new --namespace n2
S2=$OUT
ok mn add "$S2" user "The project uses PostgreSQL 15"
for model in garbage badid badfacts; do
    x $model "$S2"
    eq "$(jget "$OUT" '[j["rejected"], j["added"], j["updated"]]')" "[1, 0, 0]" "$model: rejected"
    eq "$(live n2)" '[]' "$model: nothing changed"
done
ok mn events "$S2" --json
eq "$(jget "$OUT" 'sorted(set((e["kind"], e["data"]["stage"]) for e in j))')" \
    '[["memory_extract_rejected", "candidates"], ["memory_extract_rejected", "decision"]]' "each rejection is an event"
x add "$S2"
eq "$(jget "$OUT" '[j["messages"], j["added"]]')" "[1, 1]" "after a rejection the same turns are read again"
eq "$(live n2)" '["The project uses PostgreSQL 15"]' "and then kept"

# the decision is asked with the memories of exactly the session's scope: a session without
# memory_scope neither sees nor updates another user's memories
ok mn session new --namespace n3 --metadata '{"memory_scope":{"user_id":"alex"}}'
SA=$OUT
ok mn session new --namespace n3 --metadata '{"memory_scope":{"user_id":"sam"}}'
SB=$OUT
ok mn session new --namespace n3
SN=$OUT
ok mn add "$SA" user "The user lives in Oslo"
x add "$SA"
ok mn add "$SB" user "The user lives in Rome"
x add "$SB"
ok mn add "$SN" user "The user lives in Bergen"
x update "$SN"
eq "$(jget "$OUT" '[j["added"], j["updated"]]')" "[1, 0]" "no memory_scope: nothing of another scope to update"
ok mn add "$SN" user "The user lives in Rome"
x add "$SN"
eq "$(jget "$OUT" '[j["added"], j["unchanged"]]')" "[1, 0]" "the same text in another scope is not already known"
ok mn memory list --namespace n3 --json
eq "$(jget "$OUT" 'sorted([m["user_id"] or "", m["text"], m["version"]] for m in j)')" \
    '[["", "The user lives in Bergen", 1], ["", "The user lives in Rome", 1], ["alex", "The user lives in Oslo", 1], ["sam", "The user lives in Rome", 1]]' \
    "each scope keeps its own"

ok mn add "$S2" user "The staging database is small"
MNEMO_SUMMARIZER_BASE_URL= fails 1 "summarizer.base_url" mn memory extract "$S2" --extractor llm
kill "$LLM"
wait "$LLM" 2>/dev/null
finish
