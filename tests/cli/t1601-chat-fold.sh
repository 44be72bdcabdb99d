#!/bin/sh
# t1601-chat-fold.sh — `mnemo chat` never waits on a fold (docs/chat.md "Folding"): a due fold runs
# on a thread of the chat after the reply is stored, while the user types, however slow the
# summariser; the next context uses the summary once it is stored; leaving (/exit, end of input,
# Ctrl-C) waits for a fold in flight no longer than context.fold_timeout_ms, and a fold given up
# changes nothing (its claim expires, every turn is stored). Also --rag-scope (session, all, the
# configuration's memory.rag.scope when absent, anything else status 2).
#
# The server below is the chat model and the summariser both. The summariser ("gated") answers
# only when the test opens its gate, so "slower than context.fold_timeout_ms" is not a matter of
# the clock: the summariser's request stays open until the test says so, and the server records,
# for each chat request, whether a summariser request was open from its start to its end. Every
# check is on that order and on the database; the deadlines of wait_until only end a hung test.
# pg variant: none — the chat's fold thread; folds on PostgreSQL are api/test_seed_folding's.
. "$TESTS_DIR/cli/lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER
unset COLUMNS # the status lines are checked whole

if ! command -v node >/dev/null 2>&1; then
    echo "t1601-chat-fold: node is needed (scripts/install-deps)" >&2
    exit 1
fi
cat >"$T/gated.js" <<'EOF'
// The chat model ("chat…": "Echo: <the last user message>", streamed as SSE in word pieces) and a
// summariser ("gated") that answers only while the gate is open. GET /open, /close set the gate;
// GET /stats reports the summariser requests (begun, open, answered, abandoned: the client closed
// it unanswered) and the chat requests (replies: how many; during_fold: how many began and ended
// while a summariser request was open; ms: milliseconds from each reply's request to its first
// piece, for the log only).
'use strict';
const http = require('http');
const st = { begun: 0, open: 0, answered: 0, abandoned: 0, replies: 0, during_fold: 0, ms: [], last: null };
let gate = false;
const held = [];
function answer(res) {
  st.answered++;
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Summary: the gated fold.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 6, total_tokens: 56 } }));
}
function chat(res, j) {
  const t0 = Date.now(), foldAtStart = st.open > 0;
  const last = [...(j.messages || [])].reverse().find((m) => m.role === 'user');
  const question = (last && last.content) || '';
  const words = ('Echo: ' + question).split(/(?= )/);
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  let i = 0;
  const next = () => {
    if (i === 1) st.ms.push(Date.now() - t0);
    if (i < words.length) {
      res.write('data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: words[i++] }, finish_reason: null }] }) + '\n\n');
      return setTimeout(next, 2);
    }
    st.replies++;
    if (foldAtStart && st.open > 0) st.during_fold++;
    res.end('data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 } }) + '\n\ndata: [DONE]\n\n');
  };
  next();
}
const server = http.createServer((req, res) => {
  const plain = (o) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(o)); };
  if (req.method === 'GET' && req.url === '/stats') return plain(st);
  if (req.method === 'GET' && req.url === '/open') {
    gate = true;
    while (held.length) { const h = held.shift(); st.open--; answer(h); }
    return plain({ gate });
  }
  if (req.method === 'GET' && req.url === '/close') { gate = false; return plain({ gate }); }
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    let j = {};
    try { j = JSON.parse(body); } catch (e) { /* an empty object */ }
    st.last = j;
    if (/^chat/.test(j.model || '')) return chat(res, j);
    st.begun++;
    if (gate) return answer(res);
    st.open++;
    held.push(res);
    res.on('close', () => {
      const k = held.indexOf(res);
      if (k >= 0) { held.splice(k, 1); st.open--; st.abandoned++; }
    });
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + server.address().port + '\n'));
process.on('SIGTERM', () => process.exit(0));
EOF
node "$T/gated.js" >"$T/port" &
SERVER=$!
CHAT=
cleanup() {
    [ -n "$CHAT" ] && kill "$CHAT" 2>/dev/null
    kill "$SERVER" 2>/dev/null
}
trap cleanup EXIT
wait_until 60 "the test's model server" grep -q '^PORT ' "$T/port"
URL=http://127.0.0.1:$(sed -n 's/^PORT //p' "$T/port")

MNEMO_SUMMARIZER_BASE_URL=$URL
MNEMO_SUMMARIZER=llm
MNEMO_SUMMARIZER_MODEL=gated
MNEMO_SUMMARIZER_RETRIES=0
MNEMO_SUMMARIZER_TIMEOUT_MS=600000 # the gate, not a timeout, ends the summariser's request
MNEMO_SUMMARIZER_CLAIM_SECONDS=1 # a fold given up leaves its claim: it expires soon
MNEMO_CHAT_MODEL=chat
MNEMO_MAX_HISTORY_MESSAGES=6 # summary: a fold is due past 6 messages, down to the last 4
MNEMO_FOLD_TIMEOUT_MS=200    # far less than the summariser takes: its gate stays shut for seconds
MNEMO_RAG=false              # the folds alone (retrieval has its part below)
export MNEMO_SUMMARIZER_BASE_URL MNEMO_SUMMARIZER MNEMO_SUMMARIZER_MODEL MNEMO_SUMMARIZER_RETRIES MNEMO_SUMMARIZER_TIMEOUT_MS \
    MNEMO_SUMMARIZER_CLAIM_SECONDS MNEMO_CHAT_MODEL MNEMO_MAX_HISTORY_MESSAGES MNEMO_FOLD_TIMEOUT_MS MNEMO_RAG

# stat KEY: a value of the server's /stats
stat() { python3 -c 'import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "/stats"))[sys.argv[2]])' "$URL" "$1"; }
gate() { python3 -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1] + "/" + sys.argv[2]).read()' "$URL" "$1"; }
stat_ge() { [ "$(stat "$1")" -ge "$2" ]; }
# sent TEXT: whether the last request to the model holds TEXT
sent() { python3 -c 'import json,sys,urllib.request; sys.exit(0 if sys.argv[2] in json.dumps(json.load(urllib.request.urlopen(sys.argv[1] + "/stats"))["last"]) else 1)' "$URL" "$1"; }
not_sent() { ! sent "$1"; }
has_summary() { "$MNEMO" --db "$DB" summary show "$1" >/dev/null 2>&1; }
no_summary() { ! has_summary "$1"; }
shown() { grep -q -- "$1" "$T/out"; }
gone() { ! alive "$1"; }
count_msgs() { "$MNEMO" --db "$DB" session show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["message_count"])'; }

# start_chat FOLD_TIMEOUT_MS ARGS...: mnemo chat ARGS with that context.fold_timeout_ms, reading
# the fifo $T/in (written through fd 3), its screen in $T/out and $T/err, its process $CHAT
start_chat() {
    rm -f "$T/in"
    mkfifo "$T/in"
    : >"$T/out"
    _ms=$1
    shift
    MNEMO_FOLD_TIMEOUT_MS=$_ms "$MNEMO" --db "$DB" chat "$@" <"$T/in" >"$T/out" 2>"$T/err" &
    CHAT=$!
    exec 3>"$T/in"
}
say() { printf '%s\n' "$1" >&3; }
# turn TEXT: types "TEXT, and …" (long enough for a summary to be shorter than what it folds) and
# waits for its reply and the status line after it
turn() {
    say "$1, and a few more words so that the summary of a fold is shorter than the turns it folds"
    wait_until 60 "the reply to '$1'" grep -q "^Echo: $1, " "$T/out"
    wait_until 60 "the status line after '$1'" sh -c "grep -A1 '^Echo: $1, ' '$T/out' | grep -q '^\[context'"
}
# turns_until_fold PREFIX: chats turn after turn until a fold's summariser request is open
turns_until_fold() {
    _k=0
    _end=$(($(date +%s) + $(deadline 60)))
    while [ "$(stat open)" -eq 0 ]; do
        [ "$(date +%s)" -lt "$_end" ] || { fail "gave up waiting for a fold's summariser request"; return 1; }
        turn "$1 $_k"
        _k=$((_k + 1))
    done
}
# left: waits for the chat to end; $RC gets its status
left() {
    wait_until 60 "the chat to leave" gone "$CHAT"
    wait "$CHAT"
    RC=$?
    CHAT=
}

# -- the reply never waits for the fold; the summary comes when the summariser answers ----------
start_chat 200 --strategy summary
turn "turn 1" # the first turn creates the session
S=$(sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p' "$T/out")
for i in 2 3 4; do turn "turn $i"; done
# turn 4 made the fold due (7 messages): after its reply the fold asks the summariser, which waits
wait_until 60 "the fold's summariser request" stat_ge begun 1
eq "$(stat answered)" 0 "the gate is shut: the summariser has answered nothing"
before=$(stat during_fold)
turn "turn 5"
turn "turn 6"
eq "$(stat during_fold)" "$((before + 2))" "turns 5 and 6 were asked and answered while the summariser request was open"
eq "$(stat open)" 1 "the fold's summariser request is still open after them"
eq "$(stat abandoned)" 0 "no summariser request was given up (no build waited for it with a deadline)"
check "no summary while the summariser has not answered" no_summary "$S"
eq "$(count_msgs "$S")" 12 "every turn and reply is stored meanwhile"
check "the status line says the fold runs in the background" shown 'folding into the summary in the background'
echo "# time to the first piece of each reply (ms): $(stat ms)"

gate open
wait_until 60 "the summary, once the summariser answers" has_summary "$S"
ok mn events "$S" --json
# events come newest first: [-1] is the first fold's, the one the gate held
eq "$(jget "$OUT" "[e['data']['outcome'] for e in j if e['kind'] == 'compaction'][-1]")" ok "the fold's event says ok"
eq "$(jget "$OUT" "[e['data']['automatic'] for e in j if e['kind'] == 'compaction'][-1]")" true "and it was automatic"
turn "turn 7"
check "the next context uses the summary" sh -c "grep -A1 '^Echo: turn 7, ' '$T/out' | grep -q 'folded into the summary'"
ok mn summary show "$S" --json
eq "$(jget "$OUT" "j['text']")" "Summary: the gated fold." "the stored summary is the summariser's"

# -- /exit with a fold in flight: bounded by context.fold_timeout_ms, nothing lost -------------
gate close
answered=$(stat answered)
abandoned=$(stat abandoned)
turns_until_fold exit
stored=$(count_msgs "$S")
ok mn summary show "$S" --json
summary=$(jget "$OUT" "[j['id'], j['covers_upto']]")
say "/exit"
left
exec 3>&-
eq "$RC" 0 "/exit with a fold in flight: status 0"
check "leaving says it waits for the fold" shown 'finishing the summary fold'
check "then that it gave the fold up" shown 'left the summary fold unfinished'
wait_until 60 "the summariser request to close with the chat" stat_ge abandoned "$((abandoned + 1))"
eq "$(stat answered)" "$answered" "the fold given up was never answered"
eq "$(count_msgs "$S")" "$stored" "every turn is stored"
ok mn summary show "$S" --json
eq "$(jget "$OUT" "[j['id'], j['covers_upto']]")" "$summary" "the fold given up changed nothing"
# its claim expires (summarizer.claim_seconds): a later fold of the session succeeds
gate open
wait_until 60 "the claim to expire and a later fold to store a summary" sh -c \
    "\"\$1\" --db \"\$2\" context \"\$3\" --strategy summary --fold sync --report --json | grep -q '\"outcome\": *\"ok\"'" - "$MNEMO" "$DB" "$S"

# -- end of input with a fold due: the same bound ------------------------------------------------
gate close
answered=$(stat answered)
run sh -c "printf 'eof one, with words enough to be worth a fold\neof two, with words enough to be worth a fold\n' | \"$MNEMO\" --db \"$DB\" chat --strategy summary $S"
eq "$RC" 0 "end of input with a fold due: status 0"
check "the replies came" sh -c "echo \"\$1\" | grep -q '^Echo: eof two'" - "$OUT"
check "leaving waited for the fold" sh -c "echo \"\$1\" | grep -q 'finishing the summary fold'" - "$OUT"
eq "$(stat answered)" "$answered" "the summariser answered nothing meanwhile"

# -- Ctrl-C while leaving gives up at once, however long context.fold_timeout_ms ------------------
gate open
wait_until 60 "the claim to expire again" sh -c \
    "\"\$1\" --db \"\$2\" context \"\$3\" --strategy summary --fold sync --report --json | grep -q '\"outcome\": *\"\(ok\|none\)\"'" - "$MNEMO" "$DB" "$S"
gate close
start_chat 600000 --strategy summary "$S"
wait_until 60 "the chat's prompt" grep -q "^session $S" "$T/out"
turns_until_fold ctrlc
exec 3>&- # end of input
wait_until 60 "the note that leaving waits for the fold" shown 'Ctrl-C leaves now'
kill -INT "$CHAT"
left
eq "$RC" 0 "Ctrl-C while leaving: status 0"
check "it gave the fold up" shown 'left the summary fold unfinished'
gate open

# -- --rag-scope ---------------------------------------------------------------------------------
unset MNEMO_SUMMARIZER MNEMO_SUMMARIZER_MODEL MNEMO_MAX_HISTORY_MESSAGES MNEMO_RAG
ok mn session new
A=$OUT
ok mn add "$A" user "the zebra password is hunter2"
ok mn session new
B=$OUT
# ask SCOPE-ARGS...: one turn of chat on B with retrieval on
ask() {
    run sh -c 'm=$1 d=$2 b=$3; shift 3; printf "what is the zebra password\n" | "$m" --db "$d" chat "$b" --rag "$@"' - \
        "$MNEMO" "$DB" "$B" "$@"
}
ask --rag-scope all
eq "$RC$ERR" 0 "--rag-scope all: status 0, nothing on stderr"
check "--rag-scope all retrieves from the namespace's other sessions" sent hunter2
ask --rag-scope session
eq "$RC$ERR" 0 "--rag-scope session: status 0, nothing on stderr"
check "--rag-scope session retrieves from this session only" not_sent hunter2
MNEMO_RAG_SCOPE=all
export MNEMO_RAG_SCOPE
ask
eq "$RC$ERR" 0 "memory.rag.scope all: status 0, nothing on stderr"
check "without --rag-scope, memory.rag.scope all retrieves from the namespace" sent hunter2
ask --rag-scope session
eq "$RC$ERR" 0 "--rag-scope session with memory.rag.scope all: status 0, nothing on stderr"
check "--rag-scope session overrides memory.rag.scope" not_sent hunter2
unset MNEMO_RAG_SCOPE
ask
eq "$RC$ERR" 0 "no scope: status 0, nothing on stderr"
check "without either, the session only" not_sent hunter2
ok mn session list --json
NSESS=$(jget "$OUT" "len(j)")
fails 2 "^mnemo: --rag-scope: 'everything' is not session or all" mn chat --rag --rag-scope everything
fails 2 "^mnemo: --rag-scope: '' is not session or all" mn chat --rag-scope ''
ok mn session list --json
eq "$(jget "$OUT" "len(j)")" "$NSESS" "a bad --rag-scope creates no session"
finish
