#!/bin/sh
# t1600-chat.sh — `mnemo chat` as a person uses it: tmux runs it against the local fake
# OpenAI-compatible server (tests/fake_llm/fake_llm.js, streaming and not), send-keys types turns
# and slash commands, capture-pane reads the screen, and the database is checked after each step:
# turns stored, /clear keeps them stored but out of the context, /compact leaves the summary and
# its acknowledgement (t1603 has the details), Ctrl-C stores the user turn only, /forget deletes,
# Ctrl-D leaves. Also scripted use (stdin not a terminal), the
# exit status without a model, an HTTP error retried with /retry, /retry with nothing to retry,
# broken streams (OpenAI, and Ollama's non-JSON lines, which stop the reply at once) and a 200
# answer that is not JSON (one line, nothing stored), summarizer.timeout_ms as the longest silence
# to the millisecond, Ctrl-C at the /forget question (nothing deleted), /pin by the position in
# the session, bad /history N and --strategy, /context without a summary, and the clear/limit/agent
# commands from the shell. Waits on the screen and the database, never on fixed sleeps.
# pg variant: none — the chat's screen and commands; sessions on PostgreSQL are the other tests'.
. "$TESTS_DIR/cli/lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER
unset COLUMNS # the status lines are checked whole

if ! command -v node >/dev/null 2>&1 || ! command -v tmux >/dev/null 2>&1; then
    echo "t1600-chat: node and tmux are needed (scripts/install-deps)" >&2
    exit 1
fi
node "$TESTS_DIR/fake_llm/fake_llm.js" >"$T/port" &
SERVER=$!
TMUX_SOCK="$T/tmux.sock"
cleanup() { kill "$SERVER" 2>/dev/null; tmux -S "$TMUX_SOCK" kill-server 2>/dev/null; }
trap cleanup EXIT
n=0
while [ ! -s "$T/port" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
PORT=$(sed -n 's/^PORT //p' "$T/port")
[ -n "$PORT" ] || { fail "the fake server did not start"; finish; }
MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:$PORT
export MNEMO_SUMMARIZER_BASE_URL

# -- without a model: what to set, exit 2 ------------------------------------------------------
fails 2 'chat\.model' mn chat

# -- scripted: lines from standard input -------------------------------------------------------
MNEMO_CHAT_MODEL=chat
export MNEMO_CHAT_MODEL
run sh -c "printf 'hello there\n/history\n' | \"$MNEMO\" --db \"$DB\" chat"
eq "$RC" 0 "scripted chat exits 0"
check "the reply streamed to the screen" sh -c "echo \"\$1\" | grep -q 'Echo: hello there'" - "$OUT"
check "the status line reports the usage with cached tokens" sh -c "echo \"\$1\" | grep -q 'prompt 4[0-9] completion 5 cached 32'" - "$OUT"
S1=$(echo "$OUT" | sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p')
ok mn history "$S1" --json
eq "$(jget "$OUT" "'|'.join(m['role'] + ':' + m['content'] for m in j)")" "user:hello there|assistant:Echo: hello there" "both turns stored"
eq "$(jget "$OUT" "j[1]['metadata']['usage']")" '{"prompt_tokens": 41, "completion_tokens": 5, "cached_tokens": 32}' "the usage is kept on the reply"
ok mn session show "$S1" --json
eq "$(jget "$OUT" "j['metadata']['chat']")" '{"turns": 1, "prompt_tokens": 41, "completion_tokens": 5, "cached_tokens": 32}' "the session totals are stored"

# a server that does not stream, continuing the same session
run sh -c "printf 'plain please\n' | MNEMO_CHAT_MODEL=chatplain \"$MNEMO\" --db \"$DB\" chat $S1"
check "a non-streamed reply is shown" sh -c "echo \"\$1\" | grep -q 'Echo: plain please'" - "$OUT"
ok mn session show "$S1" --json
eq "$(jget "$OUT" "j['message_count']")" 4 "the non-streamed reply is stored"

# an HTTP error: one line, nothing half-written, /retry asks again
run sh -c "printf 'try me\n/retry\n' | MNEMO_CHAT_MODEL=chatflaky \"$MNEMO\" --db \"$DB\" chat"
check "the error is one line naming the status and the provider's words" sh -c "echo \"\$1\" | grep -q 'HTTP 500 .*warming up'" - "$ERR"
check "the retry answers" sh -c "echo \"\$1\" | grep -q 'Echo: try me'" - "$OUT"
S2=$(echo "$OUT" | sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p')
ok mn history "$S2" --json
eq "$(jget "$OUT" "' '.join(m['role'] for m in j)")" "user assistant" "one user turn, one reply after the retry"

count_msgs() { "$MNEMO" --db "$DB" session show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["message_count"])'; }

# /retry asks again only for a user turn still waiting for its answer; else nothing is sent
# requests MODEL: how many requests the fake server has had for MODEL
requests() { python3 -c 'import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "/stats"))["requests"].get(sys.argv[2], 0))' "$MNEMO_SUMMARIZER_BASE_URL" "$1"; }
# lines TEXT: how many non-empty lines TEXT has
lines() { printf '%s\n' "$1" | grep -c .; }
run sh -c "printf 'ping\n/retry\n/retry\n' | MNEMO_CHAT_MODEL=chatretry \"$MNEMO\" --db \"$DB\" chat"
eq "$RC" 0 "/retry after an answer: status 0"
S3=$(echo "$OUT" | sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p')
eq "$(echo "$OUT" | grep -c 'nothing to retry')" 2 "/retry after an answer says there is nothing to retry, each time"
eq "$(requests chatretry)" 1 "/retry after an answer asks the model nothing"
ok mn history "$S3" --json
eq "$(jget "$OUT" "'|'.join(m['role'] + ':' + m['content'] for m in j)")" "user:ping|assistant:Echo: ping" "/retry after an answer stores nothing"
ok mn session new
S4=$OUT
run sh -c "printf '/retry\n' | MNEMO_CHAT_MODEL=chatretry \"$MNEMO\" --db \"$DB\" chat $S4"
check "/retry in an empty session says there is nothing to retry" sh -c "echo \"\$1\" | grep -q 'nothing to retry'" - "$OUT"
eq "$(requests chatretry)" 1 "/retry in an empty session asks the model nothing"
eq "$(count_msgs "$S4")" 0 "/retry in an empty session stores nothing"

# a broken stream is an error: one line, nothing of the reply stored
for model in chatbadjson chatnotobj chatnul; do
    run sh -c "printf 'break it\n' | MNEMO_CHAT_MODEL=$model \"$MNEMO\" --db \"$DB\" chat"
    S5=$(echo "$OUT" | sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p')
    check "$model: the error is one line naming the broken stream" sh -c "[ \"\$(printf '%s\n' \"\$1\" | grep -c .)\" = 1 ] && echo \"\$1\" | grep -q 'stream'" - "$ERR"
    check "$model: the error is not 'an empty reply'" sh -c "! echo \"\$1\" | grep -q 'empty reply'" - "$ERR"
    ok mn history "$S5" --json
    eq "$(jget "$OUT" "'|'.join(m['role'] + ':' + m['content'] for m in j)")" "user:break it" "$model: the user turn stays, nothing of the reply is stored"
done

# Ollama: a streamed line that is not JSON stops the reply there, named in one line; what the
# server sends after it is neither shown nor stored (it was shown, then the error came at the end)
for model in chatbadline chatbadfirst; do
    run sh -c "printf 'break ollama\n' | MNEMO_SUMMARIZER_PROTOCOL=ollama MNEMO_CHAT_MODEL=$model \"$MNEMO\" --db \"$DB\" chat"
    S5=$(echo "$OUT" | sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p')
    check "$model: the error is one line naming the line that is not JSON" sh -c "[ \"\$(printf '%s\n' \"\$1\" | grep -c .)\" = 1 ] && echo \"\$1\" | grep -q 'stream is broken: a line is not JSON.*: not json at all'" - "$ERR"
    check "$model: nothing after the bad line is shown" sh -c "! echo \"\$1\" | grep -q 'after the bad line'" - "$OUT"
    ok mn history "$S5" --json
    eq "$(jget "$OUT" "'|'.join(m['role'] + ':' + m['content'] for m in j)")" "user:break ollama" "$model: the user turn stays, nothing of the reply is stored"
done

# summarizer.timeout_ms bounds each silence of the server: "Drip", 4 s without a byte, " drop".
# With a limit of 1 s the reply ends at the silence (libcurl's low-speed check, which averages
# over about 5 s and counts the request sent, let it through: the limit came some 6 s late).
run sh -c "printf 'drip\n' | MNEMO_CHAT_MODEL=chatdrip MNEMO_SUMMARIZER_TIMEOUT_MS=1000 \"$MNEMO\" --db \"$DB\" chat"
S6=$(echo "$OUT" | sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p')
check "a silence over summarizer.timeout_ms is one line naming the limit" sh -c "[ \"\$(printf '%s\n' \"\$1\" | grep -c .)\" = 1 ] && echo \"\$1\" | grep -q 'sent nothing for 1000 ms'" - "$ERR"
check "what comes after the silence is not shown" sh -c "! echo \"\$1\" | grep -q 'drop'" - "$OUT"
ok mn history "$S6" --json
eq "$(jget "$OUT" "'|'.join(m['role'] + ':' + m['content'] for m in j)")" "user:drip" "after the silence only the user turn is stored"
# a server that never answers: the same error, the limit in milliseconds as configured
run sh -c "printf 'anyone\n' | MNEMO_CHAT_MODEL=slow MNEMO_SUMMARIZER_TIMEOUT_MS=1500 \"$MNEMO\" --db \"$DB\" chat"
check "a server that never answers: the error names the limit of 1500 ms" sh -c "echo \"\$1\" | grep -q 'sent nothing for 1500 ms'" - "$ERR"

# a 200 answer that is neither JSON nor a stream: one line
run sh -c "printf 'garbage\n' | MNEMO_CHAT_MODEL=chatgarbage \"$MNEMO\" --db \"$DB\" chat"
eq "$(lines "$ERR")" 1 "an answer neither JSON nor a stream is one line on stderr"
check "and it shows the answer's start" sh -c "echo \"\$1\" | grep -q 'neither a stream nor JSON: <html> <body>oops'" - "$ERR"

# /pin N: the message at position N of this session only; a non-number is named
ok mn session new
P1=$OUT
ok mn add "$P1" user "pin me"
ok mn session new
P2=$OUT
ok mn add "$P2" user "not yours"
ok mn add "$P2" user "nor this one"
run sh -c "printf '/pin 2\n/pin abc\n/pin 1\n' | \"$MNEMO\" --db \"$DB\" chat $P1"
check "/pin of a position this session does not have is refused" sh -c "echo \"\$1\" | grep -q 'no message #2 in this session'" - "$ERR"
check "/pin abc names the text" sh -c "echo \"\$1\" | grep -q \"'abc' is not a position\"" - "$ERR"
check "/pin of this session's position pins it" sh -c "echo \"\$1\" | grep -q 'pinned #1'" - "$OUT"
ok mn history "$P2" --json
eq "$(jget "$OUT" "[m['pinned'] for m in j]")" "[false, false]" "another session's messages stay unpinned"
ok mn history "$P1" --json
eq "$(jget "$OUT" "j[0]['pinned']")" true "this session's message is pinned"

# options are checked before a session is created
ok mn session list --json
NSESS=$(jget "$OUT" "len(j)")
fails 2 "^mnemo: --strategy: 'bogus' is not one of: window summary chunked hybrid" mn chat --strategy bogus
ok mn session list --json
eq "$(jget "$OUT" "len(j)")" "$NSESS" "a bad --strategy creates no session"

# /history N: a whole number from 1, else one line and nothing shown
run sh -c "printf '/history abc\n/history -3\n/history 0\n/history 1x\n/history 1\n' | \"$MNEMO\" --db \"$DB\" chat $P1"
eq "$(echo "$OUT" | grep -c '^#')" 1 "/history with a bad N shows nothing, /history 1 one message"
eq "$(lines "$ERR")" 4 "each bad /history N is one line"
check "and names the argument" sh -c "echo \"\$1\" | grep -q \"/history: '-3' is not\"" - "$ERR"

# /context without a summary says so
run sh -c "printf '/context\n' | \"$MNEMO\" --db \"$DB\" chat $P1"
check "/context without a summary says 'no summary'" sh -c "echo \"\$1\" | grep -q 'no summary' && ! echo \"\$1\" | grep -q 'summary of 0'" - "$OUT"

# -- interactive, in tmux ----------------------------------------------------------------------
# wait_pane SESSION PATTERN: polls the screen until grep -E PATTERN matches (60 s deadline).
wait_pane() {
    i=0
    while [ $i -lt 600 ]; do
        tmux -S "$TMUX_SOCK" capture-pane -p -t "$1" -S -200 >"$T/pane" 2>/dev/null
        grep -Eq "$2" "$T/pane" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    fail "the screen of $1 never showed /$2/; it shows:"
    cat "$T/pane" >&2
    return 1
}
# wait_file FILE: polls until FILE exists (60 s deadline).
wait_file() {
    i=0
    while [ ! -s "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$1" ] || fail "$1 never appeared"
}
type_line() { tmux -S "$TMUX_SOCK" send-keys -t "$1" -l "$2" && tmux -S "$TMUX_SOCK" send-keys -t "$1" Enter; }

ok mn session new --title "tmux chat"
S=$OUT
tmux -S "$TMUX_SOCK" new-session -d -s a -x 200 -y 50 \
    "\"$MNEMO\" --db \"$DB\" chat $S; echo \$? >\"$T/exit-a\"; sleep 600"
wait_pane a 'you>' && pass
type_line a "what is mnemo"
wait_pane a 'Echo: what is mnemo' && pass
wait_pane a '\[context [0-9]+/4096 tokens' && pass
eq "$(count_msgs "$S")" 2 "the turn and its reply are stored"
for q in one two three four; do
    type_line a "question $q"
    wait_pane a "Echo: question $q" && pass
done
eq "$(count_msgs "$S")" 10 "every turn stored"

type_line a "/compact keep the question words"
wait_pane a '^\[compacted: ' && pass
ok mn history "$S" --json
eq "$(jget "$OUT" "[m['role'] for m in j]")" '["user", "assistant"]' "/compact leaves the summary and its acknowledgement"

type_line a "/context"
wait_pane a 'messages: 2 active' && pass

type_line a "/clear"
wait_pane a 'cleared 2 messages' && pass
ok mn history "$S" --json
eq "$OUT" "[]" "/clear empties the active history"
ok mn history "$S" --all --json
eq "$(jget "$OUT" "len(j)")" 12 "/clear keeps every message stored"
ok mn context "$S" --report --json
eq "$(jget "$OUT" "j['report']['messages']['kept']")" 0 "the cleared messages are out of the context"
ok mn search "mnemo" --session "$S" --mode keyword --json
eq "$(jget "$OUT" "len(j) > 0")" true "and still searchable"

type_line a "after the clear"
wait_pane a 'Echo: after the clear' && pass
ok mn history "$S" --json
eq "$(jget "$OUT" "'|'.join(m['content'] for m in j)")" "after the clear|Echo: after the clear" "the chat goes on from an empty history"
type_line a "/search question"
wait_pane a '#[0-9]+ user question one' && pass
tmux -S "$TMUX_SOCK" send-keys -t a C-d
wait_file "$T/exit-a"
eq "$(cat "$T/exit-a")" 0 "Ctrl-D leaves with status 0"

# Ctrl-C during a reply: the user turn stays, the partial reply is not stored
tmux -S "$TMUX_SOCK" new-session -d -s b -x 200 -y 50 \
    "MNEMO_CHAT_MODEL=chatslow \"$MNEMO\" --db \"$DB\" chat $S; echo \$? >\"$T/exit-b\"; sleep 600"
wait_pane b 'you>' && pass
type_line b "a slow question"
wait_pane b 'Thinking\.\.' && pass
tmux -S "$TMUX_SOCK" send-keys -t b C-c
wait_pane b 'interrupted: the partial reply was not stored' && pass
ok mn history "$S" --json
eq "$(jget "$OUT" "j[-1]['role'] + ':' + j[-1]['content']")" "user:a slow question" "the interrupted turn's user message is stored, no reply"
eq "$(jget "$OUT" "len(j)")" 3 "nothing else was stored"

# Ctrl-C at the /forget question cancels it, even with "y" typed: nothing is deleted and the
# chat goes on, as Ctrl-C stops a reply and the chat goes on
type_line b "/forget"
wait_pane b '\[y/N\]' && pass
tmux -S "$TMUX_SOCK" send-keys -t b -l "y"
tmux -S "$TMUX_SOCK" send-keys -t b C-c
wait_pane b 'interrupted: session .* kept' && pass
ok mn history "$S" --json
eq "$(jget "$OUT" "len(j)")" 3 "Ctrl-C at the /forget question deletes nothing"
type_line b "/history 1"
wait_pane b '#[0-9]+ user +a slow question' && pass

# /forget asks first, then deletes
type_line b "/forget"
wait_pane b '\[y/N\]' && pass
type_line b "y"
wait_pane b "deleted session $S" && pass
fails 1 'not found' mn session show "$S"
type_line b "/exit"
wait_file "$T/exit-b"
eq "$(cat "$T/exit-b")" 0 "/exit leaves with status 0"

# -- the seed behaviours from the shell --------------------------------------------------------
ok mn session new
C=$OUT
ok mn add "$C" user "first"
ok mn add "$C" agent "seed 003 calls me agent"
ok mn history "$C" --json
eq "$(jget "$OUT" "j[1]['role']")" assistant "role agent is stored as assistant"
ok mn state "$C" merge '{"order_id":"O-1"}'
ok mn state "$C" clear --history
eq "$(jget "$OUT" "j['params']")" "{}" "state clear --history resets the state"
ok mn history "$C" --json
eq "$OUT" "[]" "and clears the active history"
ok mn session clear "$C" --undo --json
eq "$OUT" '{"restored":2}' "session clear --undo brings them back"
fails 2 'do not go together' mn session clear "$C" --undo --state
i=0
while [ $i -lt 4 ]; do "$MNEMO" --db "$DB" add "$C" user "q$i" >/dev/null; i=$((i + 1)); done
ok mn session limit "$C" 2
check "session limit applies the limit now" sh -c "echo \"\$1\" | grep -q 'turn limit 2: 2 of 6 messages active'" - "$OUT"
fails 2 'TURNS' mn session limit "$C" 1000001
fails 2 'TURNS' mn session limit "$C" -1
# /state reads as text, a field a line (the JSON is `mnemo state ID`)
ok mn state "$C" merge '{"city":"Lisbon","n":2}'
ok mn state "$C" wait date
run sh -c "printf '/state\n' | \"$MNEMO\" --db \"$DB\" chat $C"
check "/state: the params as key=value ($OUT)" sh -c 'echo "$1" | grep -q "^params: city=Lisbon, n=2$"' - "$OUT"
check "/state: what the session waits for" sh -c 'echo "$1" | grep -q "^waiting for: date$"' - "$OUT"
check "/state: an empty field says none" sh -c 'echo "$1" | grep -q "^plan: none$"' - "$OUT"
check "/state: no JSON" sh -c '! echo "$1" | grep -q "{\"params\""' - "$OUT"
cleanup # now: finish removes $T, and with it the tmux socket the trap would need
finish
