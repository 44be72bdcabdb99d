#!/bin/sh
# t1604-chat-status.sh — the status line after each reply of `mnemo chat` fits the terminal
# (docs/chat.md "Status line"): at a terminal its width is asked of the terminal before each line
# (tmux's window, resized between replies), else COLUMNS; a narrower width gives shorter words and
# then fewer parts, never a part cut in the middle, so the line stays one screen row that opens
# with [ and closes with ]. Wide enough, or a pipe without COLUMNS, it is the whole line.
# pg variant: none — the chat's status line.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/chat_lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER
unset COLUMNS

chat_server
MNEMO_SUMMARIZER_BASE_URL=$URL
MNEMO_CHAT_MODEL=chat
export MNEMO_SUMMARIZER_BASE_URL MNEMO_CHAT_MODEL
FULL='^\[context [0-9]+/4096 tokens · [0-9]+ kept · model usage: prompt [0-9]+ completion 5 cached 32 · session: [0-9]+ turns, [0-9]+ prompt \+ 5 completion tokens, [0-9]+ cached\]$'

# prompts NAME: how many prompts the screen of NAME shows
prompts() { tmux -S "$TMUX_SOCK" capture-pane -p -t "$1" -S -200 | grep -c 'you>'; }
more_prompts() { [ "$(prompts "$1")" -gt "$2" ]; }
# ask NAME TEXT: types TEXT and waits for the prompt after its reply and status line; $T/status
# gets the screen rows from the reply's row to that prompt
ask() {
    _n=$(prompts "$1")
    type_line "$1" "$2"
    wait_until 60 "the prompt after the reply to '$2'" more_prompts "$1" "$_n"
    tmux -S "$TMUX_SOCK" capture-pane -p -t "$1" -S -200 | sed -n "/^Echo: $2/,/you>/p" | sed '1d;$d' >"$T/status"
}
# fits WIDTH: the status is one row of at most WIDTH characters, [ … ]
fits() {
    [ "$(grep -c . "$T/status")" = 1 ] && grep -q '^\[.*\]$' "$T/status" &&
        [ "$(python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read().rstrip("\n")))' "$T/status")" -le "$1" ]
}

tmux_chat wide 200
wait_pane wide 'you>' && pass
ask wide "hello wide"
check "at 200 columns the whole status line" grep -Eq "$FULL" "$T/status"

for w in 80 50 30; do
    tmux_chat "w$w" "$w"
    wait_pane "w$w" 'you>' && pass
    ask "w$w" "hi $w"
    check "at $w columns the status line is one row within $w characters" fits "$w"
    check "at $w columns it still gives the context's tokens" grep -Eq '[0-9]+/4096' "$T/status"
    cp "$T/status" "$T/status-$w"
done
check "at 80 columns it still gives the model's usage" grep -q 'usage' "$T/status-80"
tmux -S "$TMUX_SOCK" resize-window -t w30 -x 60
wait_until 60 "the window to be 60 columns wide" sh -c '[ "$(tmux -S "$1" display -p -t w30 "#{window_width}")" = 60 ]' - "$TMUX_SOCK"
ask w30 "after the resize"
check "resized to 60 columns, the next status line follows the new width" fits 60
check "and is longer than at 30" sh -c '[ "$(wc -c <"$1")" -gt "$(wc -c <"$2")" ]' - "$T/status" "$T/status-30"

# scripted: COLUMNS when set, else the whole line
COLUMNS=60 chat_in "hello pipe"
printf '%s\n' "$OUT" | sed -n '/^Echo: hello pipe/{n;p;}' >"$T/status"
check "scripted with COLUMNS=60: one line within 60 characters" fits 60
chat_in "hello pipe"
check "scripted without COLUMNS: the whole line" sh -c "printf '%s\n' \"\$1\" | grep -Eq \"\$2\"" - "$OUT" "$FULL"
chat_cleanup
finish
