#!/bin/sh
# t1602-chat-sessions.sh — the sessions of `mnemo chat` as seed 001 describes them (docs/chat.md):
# a session is created with the first thing said (a chat left in silence leaves none, at a
# terminal or scripted), /save names it, /delete ID deletes another session and refuses the
# current one, --resume continues the newest live session (an expired thread is not one), the
# system prompt of a new session comes from --system or chat.system_prompt (and --system with a
# session to continue is refused before anything happens), the model server is configured under
# chat.* (its own URL, protocol, key variable and silence limit; summarizer.* only when
# chat.base_url is empty), and /history, /search and /pin speak of the per-session position #N.
# pg variant: none — the chat's session commands.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/chat_lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER
unset COLUMNS

chat_server
MNEMO_SUMMARIZER_BASE_URL=$URL
MNEMO_CHAT_MODEL=chat
export MNEMO_SUMMARIZER_BASE_URL MNEMO_CHAT_MODEL
count_msgs() { "$MNEMO" --db "$DB" session show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["message_count"])'; }

# -- lazy: nothing said, no session -------------------------------------------------------------
chat_in "$(printf '/help\n/history\n/context\n/save\n/compact\n/retry\n/exit')"
eq "$RC" 0 "slash commands only: status 0"
eq "$(sessions)" 0 "a chat where nothing was said creates no session"
check "/save before anything was said says there is nothing to save yet" \
    sh -c "echo \"\$1\" | grep -q 'nothing to save yet'" - "$OUT"
tmux_chat quiet 100
wait_pane quiet 'you>' && pass
keys quiet C-d
eq "$(wait_exit quiet)" 0 "at a terminal, Ctrl-D at the first prompt: status 0"
eq "$(sessions)" 0 "and no session"
tmux_chat first 100
wait_pane first 'you>' && pass
type_line first "hello lazy"
wait_pane first 'Echo: hello lazy' && pass
check "the session is announced when the first turn creates it" grep -Eq '^session [0-9a-f-]{36} \(new\)$' "$T/pane"
eq "$(sessions)" 1 "the first turn creates the session"
keys first C-d
eq "$(wait_exit first)" 0 "Ctrl-D leaves"
MNEMO_MAX_MESSAGE_BYTES=8 chat_in "a first message too long to store"
check "a first turn that cannot be stored is one line on stderr" sh -c "echo \"\$1\" | grep -q 'memory.max_message_bytes'" - "$ERR"
eq "$(sessions)" 1 "and leaves no session behind"

# -- /save ----------------------------------------------------------------------------------------
chat_in "$(printf 'remember this\n/save')"
S=$(new_session_of)
check "/save says the session is saved, by its id" sh -c "echo \"\$1\" | grep -q '^session $S saved: 2 messages'" - "$OUT"

# -- /delete ID ------------------------------------------------------------------------------------
ok mn session new
D=$OUT
ok mn add "$D" user "doomed"
chat_in "$(printf '/delete %s\n/delete %s\n/delete 00000000-0000-4000-8000-000000000000\n/delete' "$D" "$S")" "$S"
eq "$RC" 0 "/delete: status 0"
check "/delete ID says it deleted that session" sh -c "echo \"\$1\" | grep -q '^deleted session $D$'" - "$OUT"
check "/delete of the current session is refused, pointing to /forget" \
    sh -c "echo \"\$1\" | grep -q \"/delete: $S is the current session.*/forget\"" - "$ERR"
check "/delete of an unknown session says not found" sh -c "echo \"\$1\" | grep -q 'not found'" - "$ERR"
check "/delete without an id shows its usage" sh -c "echo \"\$1\" | grep -q '^usage: /delete ID'" - "$OUT"
fails 1 'not found' mn session show "$D"
eq "$(count_msgs "$S")" 2 "the current session is kept whole"

# -- --resume: the newest live session -------------------------------------------------------------
now=$(python3 -c 'import time; print(int(time.time() * 1000))')
# (R at now, the thread a second later; the sessions made above are older than both)
run env MNEMO_TEST_NOW_MS="$now" "$MNEMO" --db "$DB" session new
R=$OUT
run env MNEMO_TEST_NOW_MS="$now" "$MNEMO" --db "$DB" add "$R" user "resume me"
run env MNEMO_TEST_NOW_MS=$((now + 1000)) "$MNEMO" --db "$DB" session new --tool-name h5 --ttl-seconds 60
X=$OUT
run env MNEMO_TEST_NOW_MS=$((now + 1000)) "$MNEMO" --db "$DB" add "$X" user "an expiring thread"
# two minutes on, the thread (updated last) has expired: R is the newest live session
MNEMO_TEST_NOW_MS=$((now + 121000)) chat_in "continuing" --resume
eq "$RC" 0 "--resume: status 0"
check "--resume continues the newest live session, not the newer expired thread" \
    sh -c "echo \"\$1\" | grep -q '^session $R (1 messages)'" - "$OUT"
eq "$(count_msgs "$R")" 3 "the resumed session got the turn and its reply"
DB_MAIN=$DB
DB=$(new_db empty)
chat_in "nothing before" --resume
eq "$RC" 0 "--resume with nothing to resume: status 0"
check "it says so and starts a new session" \
    sh -c "echo \"\$1\" | grep -q '^no session to resume' && echo \"\$1\" | grep -q '^session .* (new)$'" - "$OUT"
DB=$DB_MAIN

# -- the system prompt: --system, chat.system_prompt ------------------------------------------------
chat_in "who are you" --system "You are terse."
eq "$RC" 0 "--system: status 0"
S=$(new_session_of)
ok mn session show "$S" --json
eq "$(jget "$OUT" "j['system_prompt']")" "You are terse." "--system is the new session's system prompt"
eq "$(last "j['messages'][0]")" "{'role': 'system', 'content': 'You are terse.'}" "and the model gets it first"
MNEMO_CHAT_SYSTEM_PROMPT="You are kind." chat_in "and now"
S=$(new_session_of)
ok mn session show "$S" --json
eq "$(jget "$OUT" "j['system_prompt']")" "You are kind." "chat.system_prompt is a new session's system prompt"
MNEMO_CHAT_SYSTEM_PROMPT="You are kind." chat_in "once more" --system "You are brief."
S=$(new_session_of)
ok mn session show "$S" --json
eq "$(jget "$OUT" "j['system_prompt']")" "You are brief." "--system wins over chat.system_prompt"
MNEMO_CHAT_SYSTEM_PROMPT="You are kind." chat_in "old friend" "$R"
ok mn session show "$R" --json
eq "$(jget "$OUT" "j['system_prompt']")" null "a continued session keeps its own system prompt (none)"
N=$(sessions)
fails 2 "^mnemo: --system: .*new session" mn chat "$R" --system "Too late."
fails 2 "^mnemo: --system: .*new session" mn chat --resume --system "Too late."
eq "$(sessions)" "$N" "--system with a session to continue creates nothing"
eq "$(count_msgs "$R")" 5 "and changes nothing"

# -- the model server under chat.* --------------------------------------------------------------------
unset MNEMO_SUMMARIZER_BASE_URL
fails 2 'chat\.base_url' mn chat
MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:9
export MNEMO_SUMMARIZER_BASE_URL
v1() { stat "s['routes'].get('/v1/chat/completions', 0)"; }
ol() { stat "s['routes'].get('/api/chat', 0)"; }
before=$(v1)
MNEMO_CHAT_BASE_URL=$URL chat_in "via chat.base_url"
check "chat.base_url is used over summarizer.base_url" sh -c "echo \"\$1\" | grep -q '^Echo: via chat.base_url'" - "$OUT"
eq "$(v1)" "$((before + 1))" "chat.protocol's default is openai"
before=$(ol)
MNEMO_CHAT_BASE_URL=$URL MNEMO_CHAT_PROTOCOL=ollama chat_in "via ollama"
check "chat.protocol ollama answers" sh -c "echo \"\$1\" | grep -q '^Echo: via ollama'" - "$OUT"
eq "$(ol)" "$((before + 1))" "chat.protocol ollama asks /api/chat"
before=$(v1)
MNEMO_CHAT_BASE_URL=$URL MNEMO_SUMMARIZER_PROTOCOL=ollama chat_in "not the summariser's protocol"
eq "$(v1)" "$((before + 1))" "with chat.base_url set, summarizer.protocol does not apply"
H5_KEY=sekrit MNEMO_CHAT_BASE_URL=$URL MNEMO_CHAT_API_KEY_ENV=H5_KEY chat_in "with a key"
eq "$(stat "s['authorization']")" "Bearer sekrit" "chat.api_key_env names the key's variable"
MNEMO_CHAT_BASE_URL=$URL MNEMO_CHAT_MODEL=slow MNEMO_CHAT_TIMEOUT_MS=1000 chat_in "anyone"
check "chat.timeout_ms is the longest silence" sh -c "echo \"\$1\" | grep -q 'sent nothing for 1000 ms'" - "$ERR"
# without chat.base_url the server is the summariser's, all of it
H5_KEY=other MNEMO_SUMMARIZER_BASE_URL=$URL MNEMO_SUMMARIZER_API_KEY_ENV=H5_KEY chat_in "fallback"
check "without chat.base_url, summarizer.base_url is the server" sh -c "echo \"\$1\" | grep -q '^Echo: fallback'" - "$OUT"
eq "$(stat "s['authorization']")" "Bearer other" "and summarizer.api_key_env its key"

# -- positions: #N is the message's place in its session ------------------------------------------------
MNEMO_SUMMARIZER_BASE_URL=$URL
ok mn session new
O=$OUT
ok mn add "$O" user "padding one"
ok mn add "$O" user "padding two"
ok mn add "$O" user "gamma elsewhere"
ok mn session new
P=$OUT
ok mn add "$P" user "alpha position"
ok mn add "$P" assistant "beta position"
ok mn add "$P" user "gamma position"
chat_in "$(printf '/history\n/pin 2\n/pin 9\n/pin abc\n/search gamma')" "$P"
eq "$RC" 0 "/history, /pin, /search: status 0"
check "/history numbers the messages by position" sh -c "printf '%s\n' \"\$1\" | grep -Eq '^#1 user +alpha position$' &&
    printf '%s\n' \"\$1\" | grep -Eq '^#2 assistant +beta position$' && printf '%s\n' \"\$1\" | grep -Eq '^#3 user +gamma position$'" - "$OUT"
check "/pin 2 pins the second message" sh -c "printf '%s\n' \"\$1\" | grep -q '^pinned #2$'" - "$OUT"
check "/pin of a position the session does not have is refused" sh -c "echo \"\$1\" | grep -q '/pin: no message #9 in this session'" - "$ERR"
check "/pin abc names the text" sh -c "echo \"\$1\" | grep -q \"/pin: 'abc' is not a position\"" - "$ERR"
check "/search shows this session's hits by position" sh -c "printf '%s\n' \"\$1\" | grep -Eq '^#3 user gamma position$'" - "$OUT"
check "and another session's with that session's id" sh -c "printf '%s\n' \"\$1\" | grep -Eq '^#3 user gamma elsewhere \[session $O\]$'" - "$OUT"
ok mn history "$P" --json
eq "$(jget "$OUT" "[m['pinned'] for m in j]")" "[false, true, false]" "exactly the message at position 2 is pinned"
chat_cleanup
finish
