#!/bin/sh
# t1000-state.sh — ask-user session state: merge, wait, result, plan, clear; bad input refused
# with nothing written; sensitive params redacted in every output path; concurrent merges from
# several processes all land.
. "$TESTS_DIR/cli/lib.sh"

ok mn session new
S=$OUT
ok mn state "$S"
eq "$(jget "$OUT" 'j')" \
    "$(jget '{"params":{},"waiting_for_param":null,"last_intent_id":null,"last_result":null,"plan_execution":null}' 'j')" \
    "an empty state has every member"
ok mn state "$S" wait city
eq "$(jget "$OUT" 'j["waiting_for_param"]')" city "waiting for a parameter"
ok mn state "$S" merge '{"city":"Lisbon","days":5,"dates":["2026-12-01"]}'
eq "$(jget "$OUT" '[j["params"]["city"], j["params"]["days"], j["waiting_for_param"]]')" '["Lisbon", 5, null]' \
    "merge keeps JSON types and the awaited answer clears the wait"
ok mn state "$S" merge '{"days":6,"dates":null}'
eq "$(jget "$OUT" 'j["params"]')" "$(jget '{"city":"Lisbon","days":6}' 'j')" "shallow merge; null removes a key"
ok mn state "$S" result book_trip '{"ok":true,"ref":"X1"}'
eq "$(jget "$OUT" '[j["last_intent_id"], j["last_result"]["ref"]]')" '["book_trip", "X1"]' "last intent and result"
ok mn state "$S" plan '{"steps":["a","b"],"done":1}'
eq "$(jget "$OUT" 'j["plan_execution"]["done"]')" 1 "plan stored for resumption"

# --- bad input: refused, nothing written ----------------------------------------------------------
ok mn state "$S"
BEFORE=$OUT
fails 1 "must be a JSON object" mn state "$S" merge '[1,2]'
fails 1 "malformed JSON" mn state "$S" merge '{"a":'
fails 1 "malformed JSON" mn state "$S" result x '{nope'
fails 2 "'state' takes get, merge-params, set-waiting, unwait, set-result, set-plan, clear" mn state "$S" explode
fails 2 "usage: mnemo state merge-params ID JSON" mn state "$S" merge
fails 2 "unknown command 'state explode'" mn state explode "$S"
ok mn state "$S"
eq "$OUT" "$BEFORE" "refused changes leave the state as it was"
fails 1 "not found" mn state 0190f0f0-4444-7000-8000-000000000001

# --- sensitive params -------------------------------------------------------------------------------
export MNEMO_SENSITIVE_PARAMS="card_number, pin"
ok mn state "$S" merge '{"card_number":"4111111111111111","pin":"0000","name":"Ana"}'
eq "$(jget "$OUT" '[j["params"]["card_number"], j["params"]["pin"], j["params"]["name"]]')" \
    '["[redacted]", "[redacted]", "Ana"]' "sensitive params are redacted in the output"
check "no secret on stderr" sh -c '! grep -q 4111111111111111 "$1"' - "$ERR"
ok mn state "$S" get --reveal
eq "$(jget "$OUT" 'j["params"]["card_number"]')" 4111111111111111 "--reveal shows them when asked"
ok mn state "$S" wait pin
check "redacted after every verb" sh -c '! printf "%s" "$1" | grep -q 4111111111111111' - "$OUT"
# any case, any depth, and secret-looking names whatever the list says (issue 13, item 13)
ok mn state "$S" merge '{"Card_Number":"4111111111111112","db":{"Password":"hunter2x","host":"h"},"keys":[{"API-Key":"sk-abc123x"}],"auth":{"access_token":"tok-77x","client_secret":"cs-88x","private_key":"pk-99x","Authorization":"Bearer zz-11x","credentials":"cr-22x","passwd":"pw-33x"}}'
for secret in 4111111111111112 hunter2x sk-abc123x tok-77x cs-88x pk-99x zz-11x cr-22x pw-33x; do
    check "$secret is redacted" sh -c '! printf "%s" "$1" | grep -q "$2"' - "$OUT" "$secret"
done
eq "$(jget "$OUT" 'j["params"]["db"]["host"]')" h "non-secret members nested beside them stay"
unset MNEMO_SENSITIVE_PARAMS
ok mn state "$S" clear
eq "$(jget "$OUT" 'j["params"]')" "{}" "clear resets the state"

# --- concurrent merges from several processes: no lost update -------------------------------------
# (their lock waits bounded generously, not by the speed of a loaded machine)
MNEMO_BUSY_TIMEOUT_MS=120000
export MNEMO_BUSY_TIMEOUT_MS
N=25
for p in 1 2 3 4; do
    (
        i=1
        while [ $i -le $N ]; do
            "$MNEMO" --db "$DB" state "$S" merge "{\"p${p}_$i\":$i}" >/dev/null 2>>"$T/merge.err" ||
                echo "p$p $i failed" >>"$T/merge.fail"
            i=$((i + 1))
        done
    ) &
done
wait
check "every concurrent merge succeeded" test ! -s "$T/merge.fail"
ok mn state "$S"
eq "$(jget "$OUT" 'len(j["params"])')" $((4 * N)) "all $((4 * N)) merges landed"

finish
