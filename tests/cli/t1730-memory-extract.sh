#!/bin/sh
# t1730-memory-extract.sh — the offline extractor in detail (docs/memory.md, "Extraction"): each
# candidate is compared only with the live memories of exactly the session's scope (no
# memory_scope, or only some of its ids, is a scope of its own, never "any"); sentences end at
# . ! ? followed by a space or the end, not inside a URL, a number, an address or after an
# abbreviation; a later statement in the same message wins; "My, …" is not "my K is V"; a Mem0
# update of a memory's metadata keeps the key extraction finds it by. Also as
# pg/cli/t1730-memory-extract.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

# say SESSION TEXT: one user message, extracted at once.
say() {
    ok mn add "$1" user "$2"
    ok mn memory extract "$1" --json
}
# scoped NS: the live memories of namespace NS as sorted [user_id, agent_id, text, version] ("" for
# an id that is not set).
scoped() {
    ok mn memory list --namespace "$1" --json
    jget "$OUT" 'sorted([m["user_id"] or "", m["agent_id"] or "", m["text"], m["version"]] for m in j)'
}

# --- scope: exactly the session's, never any --------------------------------------------------------
ok mn session new --namespace sc --metadata '{"memory_scope":{"user_id":"alex"}}'
SA=$OUT
ok mn session new --namespace sc --metadata '{"memory_scope":{"user_id":"sam"}}'
SB=$OUT
ok mn session new --namespace sc
SN=$OUT
ok mn session new --namespace sc --metadata '{"memory_scope":{"user_id":"alex","agent_id":"bot"}}'
SP=$OUT
say "$SA" "My city is Oslo."
say "$SB" "My city is Rome."
say "$SN" "My city is Bergen."
eq "$(jget "$OUT" '[j["added"], j["updated"]]')" "[1, 0]" "no memory_scope: a memory of its own, not another user's"
say "$SP" "My city is Paris."
eq "$(jget "$OUT" '[j["added"], j["updated"]]')" "[1, 0]" "user and agent: not the user's memory without the agent"
eq "$(scoped sc)" '[["", "", "User'"'"'s city is Bergen", 1], ["alex", "", "User'"'"'s city is Oslo", 1], ["alex", "bot", "User'"'"'s city is Paris", 1], ["sam", "", "User'"'"'s city is Rome", 1]]' \
    "each scope keeps its own city"
say "$SA" "My city is Lima."
eq "$(scoped sc)" '[["", "", "User'"'"'s city is Bergen", 1], ["alex", "", "User'"'"'s city is Lima", 2], ["alex", "bot", "User'"'"'s city is Paris", 1], ["sam", "", "User'"'"'s city is Rome", 1]]' \
    "a new value updates only its own scope's memory"
say "$SA" "Remember that the office closes at six."
say "$SN" "Remember that the office closes at six."
eq "$(jget "$OUT" '[j["added"], j["unchanged"]]')" "[1, 0]" "the same text in another scope is not already known"

# --- sentences ----------------------------------------------------------------------------------------
ok mn session new --namespace st
S=$OUT
say "$S" "Remember that the staging URL is staging.example.com/api. My version is 3.14. I live in St. Petersburg. My e-mail is bob@example.org. My doctor is Dr. Who! Is my dog Rex? My dog is Fido"
ok mn memory list --namespace st --json
eq "$(jget "$OUT" 'sorted(m["text"] for m in j)')" \
    '["The staging URL is staging.example.com/api", "User lives in St. Petersburg", "User'"'"'s doctor is Dr. Who", "User'"'"'s dog is Fido", "User'"'"'s e-mail is bob@example.org", "User'"'"'s version is 3.14"]' \
    "a sentence ends at . ! ? before a space or the end, not after an abbreviation"

# --- within one message the later statement wins ------------------------------------------------------
ok mn session new --namespace later
S=$OUT
say "$S" "My favourite color is blue. My favourite color is red."
ok mn memory list --namespace later --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["User'"'"'s favourite color is red"]' "the later statement wins"
ok mn add "$S" user "My favourite color is green. My favourite color is blue."
ok mn memory extract "$S" --json
ok mn memory list --namespace later --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["User'"'"'s favourite color is blue"]' "also over an older message's value"

# --- "My, …" is an exclamation ------------------------------------------------------------------------
ok mn session new --namespace excl
S=$OUT
say "$S" "My, the weather is lovely today. Also, my cat is Tom."
ok mn memory list --namespace excl --json
eq "$(jget "$OUT" '[m["text"] for m in j]')" '["User'"'"'s cat is Tom"]' "\"My,\" is not \"my K is V\""

# --- Mem0: an update of the metadata keeps the extraction's key ---------------------------------------
serve_start
req POST /v3/memories/add/ '{"messages":[{"role":"user","content":"My city is Oslo."}],"user_id":"kim"}'
eq "$CODE $(jget "$OUT" '[m["event"] for m in j]')" '200 ["ADD"]' "mem0 add extracts"
MID=$(jget "$OUT" 'j[0]["id"]')
req PUT "/v1/memories/$MID/" '{"metadata":{"topic":"travel"}}'
eq "$CODE $(jget "$OUT" 'sorted(j["metadata"].items())')" "200 [[\"key\", \"home\"], [\"topic\", \"travel\"]]" \
    "mem0 update: the new metadata, and the key extraction keeps"
req PUT "/v1/memories/$MID/" '{"metadata":{"key":"food"}}'
eq "$CODE" 400 "mem0 update: another key is refused"
req POST /v3/memories/add/ '{"messages":[{"role":"user","content":"My city is Rome."}],"user_id":"kim"}'
eq "$CODE $(jget "$OUT" '[[m["id"], m["event"], m["memory"]] for m in j]')" \
    "200 [[\"$MID\", \"UPDATE\", \"User's city is Rome\"]]" "a later statement updates that memory"
req POST /v3/memories/ '{"filters":{"user_id":"kim"}}'
eq "$(jget "$OUT" '[[m["memory"], sorted(m["metadata"].items())] for m in j["results"]]')" \
    "[[\"User's city is Rome\", [[\"key\", \"home\"], [\"topic\", \"travel\"]]]]" "one live fact of that key"
serve_stop
finish
