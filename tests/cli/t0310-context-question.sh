#!/bin/sh
# t0310-context-question.sh — the context always carries the current question (issue #12): for
# every strategy, at tight budgets and with a model window, the newest message is last; over
# the budget the report says over_budget and the shortfall; `compact` works under the window
# strategy (summary + the newest messages that fit); compact --instructions; --fold modes.
. "$TESTS_DIR/cli/lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER

add() { "$MNEMO" --db "$DB" add "$S" "$@" >/dev/null || fail "add $*"; }
# new_conv: a session S of 61 messages, the last one the current question
new_conv() {
    ok mn session new --system "You are a careful coding agent."
    S=$OUT
    i=0
    while [ $i -lt 30 ]; do
        add user "Step $i: change src/store/migrate_v3.c so that the index $i is rebuilt; keep the old API."
        add assistant "Done with step $i: the index is rebuilt and the tests pass again after the change."
        i=$((i + 1))
    done
    add user "What is the current question?"
}
Q="What is the current question?"
new_conv

ok mn context "$S" --strategy summary --model-window 2000 --report --json
eq "$(jget "$OUT" 'j["messages"][-1]["content"]')" "$Q" "summary --model-window 2000: the question is last"
for st in window summary chunked hybrid; do
    ok mn context "$S" --strategy $st --max-tokens 300 --report --json
    eq "$(jget "$OUT" 'j["messages"][-1]["content"]')" "$Q" "$st --max-tokens 300: the question is last"
    eq "$(jget "$OUT" 'j["report"]["tokens"] <= 300')" true "$st --max-tokens 300: within the budget"
    eq "$(jget "$OUT" 'j["messages"][0]["role"]')" system "$st --max-tokens 300: the system prompt"
    ok mn context "$S" --strategy $st --max-tokens 1 --report --json
    eq "$(jget "$OUT" '[len(j["messages"]), j["messages"][-1]["content"]]')" "[2, \"$Q\"]" \
        "$st --max-tokens 1: system prompt and question anyway"
    eq "$(jget "$OUT" '[j["report"]["over_budget"], j["report"]["shortfall"] == j["report"]["tokens"] - 1]')" \
        '[true, true]' "$st --max-tokens 1: over_budget with the shortfall"
    ok mn context "$S" --strategy $st --max-tokens 300 --format anthropic
    eq "$(jget "$OUT" 'j["messages"][-1]["content"][-1]["text"]')" "$Q" "$st anthropic: the question is last"
    ok mn context "$S" --strategy $st --max-tokens 300 --format text
    check "$st text: the question is there" sh -c 'printf "%s" "$1" | grep -q "current question"' - "$OUT"
done

fails 2 "fold" mn context "$S" --fold sometimes
# --no-fold is --fold off: with another mode it was taken silently (the API refuses it)
fails 2 "--no-fold: the same as --fold off; it does not go with --fold sync" mn context "$S" --fold sync --no-fold
fails 2 "it does not go with --fold background" mn context "$S" --no-fold --fold background
ok mn context "$S" --fold off --no-fold
new_conv
ok mn context "$S" --strategy summary --fold off --report --json
eq "$(jget "$OUT" '[j["report"]["fold"]["mode"], j["report"]["fold"]["outcome"]]')" '["off", "disabled"]' \
    "--fold off: a due fold is not run"

# compact under the default window strategy: the summary is used, and counts against the budget
new_conv
ok mn context "$S" --report --json
eq "$(jget "$OUT" 'j["report"]["messages"]["kept"]')" 61 "window before compact: everything fits"
B=$(printf 'x%.0s' $(seq 1 4001))
fails 1 "instructions: 4001 bytes is over the maximum of 4000" mn compact "$S" --instructions "$B"
ok mn compact "$S" --instructions "keep the API decisions" --json
eq "$(jget "$OUT" '[j["outcome"], j["instructions"]]')" '["ok", "keep the API decisions"]' \
    "compact --instructions: the event says which"
ok mn context "$S" --report --json
eq "$(jget "$OUT" 'j["report"]["summary"]["shown"]')" true "window after compact: the summary is sent"
eq "$(jget "$OUT" 'j["report"]["messages"]["kept"] < 61')" true "window after compact: folded messages are not"
eq "$(jget "$OUT" 'j["messages"][1]["content"].startswith("[Summary of")')" true "the summary comes first"
eq "$(jget "$OUT" 'j["messages"][-1]["content"]')" "$Q" "and the question last"
ok mn context "$S" --max-tokens 120 --report --json
eq "$(jget "$OUT" '[j["messages"][-1]["content"], j["report"]["tokens"] <= 120, j["report"]["summary"]["cut"]]')" \
    "[\"$Q\", true, true]" "window, tight: the summary is cut to fit, the question kept"
finish
