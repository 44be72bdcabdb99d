#!/bin/sh
# t1603-chat-compact.sh — /compact in `mnemo chat` as seed 001 §4.5 has it (docs/chat.md): the
# chat model, not the summariser's, is asked for a summary of what it sees, with the seed's prompt
# and the focus typed after the command; the active history is then exactly two messages, the
# summary as the user turn "[Compacted conversation summary]\n…" and the acknowledgement
# "Understood. I have the conversation context.", and the next request holds those two and the new
# turn. What they replace stays stored and searchable (cleared, as /clear does); the request for
# the summary is not kept. A failed or interrupted summary changes nothing; an empty active
# history has nothing to compact.
# pg variant: none — the chat's /compact.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/chat_lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER
unset COLUMNS

chat_server
# the summariser has a model of its own ("ok"): /compact must not ask it
MNEMO_SUMMARIZER_BASE_URL=$URL
MNEMO_SUMMARIZER=llm
MNEMO_SUMMARIZER_MODEL=ok
MNEMO_CHAT_MODEL=chat
export MNEMO_SUMMARIZER_BASE_URL MNEMO_SUMMARIZER MNEMO_SUMMARIZER_MODEL MNEMO_CHAT_MODEL
asked() { stat "s['requests'].get('$1', 0)"; }
PROMPT_START='Summarize the following conversation in a concise form that preserves:'
ACK='Understood. I have the conversation context.'

tmux_chat c 200
wait_pane c 'you>' && pass
for q in one two three; do
    type_line c "question $q"
    wait_pane c "Echo: question $q" && pass
done
S=$(sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p' "$T/pane")
ok mn history "$S" --json
eq "$(jget "$OUT" "len(j)")" 6 "three turns and their replies are stored"
chats=$(asked chat)
type_line c "/compact keep the question words"
wait_pane c '^\[compacted: ' && pass
eq "$(asked ok)" 0 "the summariser's model is not asked"
eq "$(asked chat)" "$((chats + 1))" "the chat model is asked once"
eq "$(last "j['messages'][-1]['content'].split(chr(10))[0]")" "$PROMPT_START" "with the seed's prompt as the last user turn"
eq "$(last "j['messages'][-1]['content'].split(chr(10))[-1]")" \
    "Focus of this compaction, from the user (keep what it names first): keep the question words" \
    "and the focus typed after /compact at its end"
eq "$(last "[m['content'] for m in j['messages'][:-1]]")" \
    "['question one', 'Echo: question one', 'question two', 'Echo: question two', 'question three', 'Echo: question three']" \
    "after the conversation it summarises"
ok mn history "$S" --json
eq "$(jget "$OUT" "len(j)")" 2 "the active history is exactly two messages"
eq "$(jget "$OUT" "j[0]['role'] + '|' + j[0]['content']")" \
    "user|[Compacted conversation summary]
Echo: Focus of this compaction, from the user (keep what it names first): keep the question words" \
    "the summary, as a user turn"
eq "$(jget "$OUT" "j[1]['role'] + '|' + j[1]['content']")" "assistant|$ACK" "and its acknowledgement"
ok mn history "$S" --all --json
eq "$(jget "$OUT" "len(j)")" 8 "what it replaced stays stored; the request for the summary does not"
eq "$(jget "$OUT" "[m['content'] for m in j if not m['active']][0]")" "question one" "out of the active history"
ok mn search "question one" --session "$S" --mode keyword --json
eq "$(jget "$OUT" "len(j) > 0")" true "and searchable"

type_line c "after the compaction"
wait_pane c 'Echo: after the compaction' && pass
eq "$(last "[m['content'] for m in j['messages']]")" \
    "['[Compacted conversation summary]\nEcho: Focus of this compaction, from the user (keep what it names first): keep the question words', '$ACK', 'after the compaction']" \
    "the next request holds the summary, its acknowledgement and the new turn"
keys c C-d
eq "$(wait_exit c)" 0 "Ctrl-D leaves"

# without a focus the prompt ends with the seed's last line
chat_in "/compact" "$S"
eq "$RC" 0 "/compact again: status 0"
eq "$(last "j['messages'][-1]['content'].split(chr(10))[-1]")" \
    "Be brief — this summary replaces the original messages to save context space." "without a focus, the seed's prompt as it is"
ok mn history "$S" --json
eq "$(jget "$OUT" "j[1]['content']")" "$ACK" "compacting a compacted history leaves two messages again"

# -- a failed or interrupted summary changes nothing -----------------------------------------------
ok mn session new
F=$OUT
ok mn add "$F" user "keep me"
ok mn add "$F" assistant "kept"
MNEMO_CHAT_MODEL=chatflaky chat_in "/compact" "$F"
eq "$RC" 0 "a failed /compact: status 0, the chat goes on"
check "the error is one line with the provider's words" sh -c "echo \"\$1\" | grep -q 'HTTP 500 .*warming up'" - "$ERR"
ok mn history "$F" --all --json
eq "$(jget "$OUT" "'|'.join(m['content'] for m in j)")" "keep me|kept" "a failed /compact changes nothing"
MNEMO_CHAT_MODEL=chatslow tmux_chat slow 200 "$F"
wait_pane slow 'you>' && pass
type_line slow "/compact"
wait_pane slow 'Thinking\.\.' && pass
keys slow C-c
wait_pane slow 'interrupted: nothing compacted' && pass
ok mn history "$F" --all --json
eq "$(jget "$OUT" "'|'.join(m['content'] for m in j)")" "keep me|kept" "an interrupted /compact changes nothing"
keys slow C-d
eq "$(wait_exit slow)" 0 "Ctrl-D leaves"

# -- nothing to compact ------------------------------------------------------------------------------
chats=$(asked chat)
chat_in "/compact"
check "before the first turn there is nothing to compact" sh -c "echo \"\$1\" | grep -q '^nothing to compact'" - "$OUT"
ok mn session clear "$F"
chat_in "/compact" "$F"
check "nor in a cleared history" sh -c "echo \"\$1\" | grep -q '^nothing to compact'" - "$OUT"
eq "$(asked chat)" "$chats" "and the model is not asked"
chat_cleanup
finish
