# chat_lib.sh — what the newer tests of `mnemo chat` (tests/cli/t1602-…) share: the stand-in
# model server (tests/fake_llm/fake_llm.js) and tmux, which types into a chat and reads its
# screen. Sourced after lib.sh. Everything waits on the screen, a file or the server, never on
# fixed sleeps; the deadlines only end a hung test.
#
#   chat_server                starts fake_llm.js; $URL is its root. On exit the server and the
#                              tmux server stop
#   stat PYEXPR                prints PYEXPR evaluated on s = the server's /stats
#   last PYEXPR                prints PYEXPR evaluated on j = the last request body it got
#   tmux_chat NAME WIDTH ARGS… runs `mnemo --db $DB chat ARGS…` with this shell's exported
#                              variables in a detached tmux session NAME, WIDTH columns wide; its
#                              exit status goes to $T/exit-NAME
#   wait_pane NAME PATTERN     polls the screen of NAME until grep -E PATTERN matches; the screen
#                              is then in $T/pane (each screen row a line, as wrapped)
#   type_line NAME TEXT        types TEXT and Enter into NAME
#   keys NAME KEY…             sends tmux keys (C-d, C-c) to NAME
#   wait_exit NAME             waits for the chat of NAME to end; prints its exit status
#   sessions                   prints how many sessions the database has
#   chat_in TEXT ARGS…         runs `mnemo --db $DB chat ARGS…` with the lines of TEXT as its input
#                              (scripted: not a terminal), as `run` does: $OUT $ERR $RC
#   new_session_of             prints the id of the "session ID (new)" line of $OUT
# Call chat_cleanup before finish (finish removes $T, the tmux socket with it).

if ! command -v node >/dev/null 2>&1 || ! command -v tmux >/dev/null 2>&1; then
    echo "$(basename "$0"): node and tmux are needed (scripts/install-deps)" >&2
    exit 1
fi
TMUX_SOCK="$T/tmux.sock"
SERVER=
chat_cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
    tmux -S "$TMUX_SOCK" kill-server 2>/dev/null
}
trap chat_cleanup EXIT

chat_server() {
    node "$TESTS_DIR/fake_llm/fake_llm.js" >"$T/port" &
    SERVER=$!
    wait_until 60 "the stand-in model server" grep -q '^PORT ' "$T/port"
    URL=http://127.0.0.1:$(sed -n 's/^PORT //p' "$T/port")
}
stat() { python3 -c 'import json,sys,urllib.request; s = json.load(urllib.request.urlopen(sys.argv[1] + "/stats")); print(eval(sys.argv[2]))' "$URL" "$1"; }
last() { python3 -c 'import json,sys,urllib.request; j = json.load(urllib.request.urlopen(sys.argv[1] + "/last")); print(eval(sys.argv[2]))' "$URL" "$1"; }
sessions() { "$MNEMO" --db "$DB" session list --json --limit 1000 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

chat_in() {
    _in=$1
    shift
    run sh -c 'i=$1 m=$2 d=$3; shift 3; printf "%s\n" "$i" | "$m" --db "$d" chat "$@"' - "$_in" "$MNEMO" "$DB" "$@"
}
new_session_of() { printf '%s\n' "$OUT" | sed -n 's/^session \([0-9a-f-]*\) (new)$/\1/p'; }

shquote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
tmux_chat() {
    _name=$1 _width=$2
    shift 2
    rm -f "$T/exit-$_name"
    {
        export -p
        printf 'exec %s --db %s chat' "$(shquote "$MNEMO")" "$(shquote "$DB")"
        for _a in "$@"; do printf ' %s' "$(shquote "$_a")"; done
        echo
    } >"$T/run-$_name.sh"
    tmux -S "$TMUX_SOCK" new-session -d -s "$_name" -x "$_width" -y 50 \
        "sh '$T/run-$_name.sh'; echo \$? >'$T/exit-$_name'; sleep 600"
}
on_screen() {
    tmux -S "$TMUX_SOCK" capture-pane -p -t "$1" -S -200 >"$T/pane" 2>/dev/null && grep -Eq -- "$2" "$T/pane"
}
wait_pane() {
    if ! wait_until 60 "the screen of $1 to show /$2/" on_screen "$1" "$2"; then
        cat "$T/pane" >&2
        return 1
    fi
}
type_line() { tmux -S "$TMUX_SOCK" send-keys -t "$1" -l "$2" && tmux -S "$TMUX_SOCK" send-keys -t "$1" Enter; }
keys() {
    _name=$1
    shift
    tmux -S "$TMUX_SOCK" send-keys -t "$_name" "$@"
}
wait_exit() {
    wait_until 60 "the chat of $1 to end" test -s "$T/exit-$1" && cat "$T/exit-$1"
}
