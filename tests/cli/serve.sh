# serve.sh — helpers for the `mnemo serve` tests (tests/cli/t12*.sh), sourced after lib.sh.
#   serve_start [ARGS...]   starts `mnemo serve --listen 127.0.0.1:0 ARGS` on $DB; sets SPID, URL
#   serve_stop              SIGTERM, wait, expect exit 0
#   req METHOD PATH [BODY] [CURL ARGS...]   sets OUT (response body) and CODE (HTTP status)
# Several nodes on one database (tests/cli/t15*.sh, PostgreSQL):
#   node_start NAME [ARGS...]   another `mnemo serve` on $DB; sets ${NAME}_PID and ${NAME}_URL
#   node_stop NAME              SIGTERM, wait, expect exit 0
#   at NAME CMD...              runs CMD (req, …) with URL set to node NAME's
# serve_start [ARGS...]: starts the server on 127.0.0.1:0; sets SPID and URL.
serve_start() {
    : >"$T/serve.out"
    "$MNEMO" --db "$DB" serve --listen 127.0.0.1:0 "$@" >"$T/serve.out" 2>>"$T/serve.err" &
    SPID=$!
    URL=
    _await_url "$SPID" "$T/serve.out" "the server" || cat "$T/serve.err" >&2
    URL=$(head -n1 "$T/serve.out" 2>/dev/null)
}
# _await_url PID OUTFILE WHO: waits until the server PID has printed its URL (first line of
# OUTFILE); gives up early when it exited, else after a generous deadline (lib.sh wait_until).
_await_url() {
    wait_until 120 "$3 to print its URL" _url_or_exit "$1" "$2" || return 1
    _has_line "$2" || { fail "$3 exited before printing its URL"; return 1; }
}
_has_line() { [ "$(wc -l <"$1")" -ge 1 ]; }
_url_or_exit() { _has_line "$2" || ! alive "$1"; }
serve_stop() {
    kill -TERM "$SPID" 2>/dev/null
    wait "$SPID"
    _rc=$?
    eq "$_rc" 0 "server exits 0 on SIGTERM"
}
# req METHOD PATH [BODY] [CURL ARGS...]: sets OUT (body) and CODE (HTTP status).
req() {
    _m=$1 _p=$2
    shift 2
    _body=
    if [ $# -gt 0 ]; then
        _body=$1
        shift
    fi
    if [ -n "$_body" ]; then
        CODE=$(curl -s -o "$T/.body" -w '%{http_code}' -X "$_m" -H 'Content-Type: application/json' \
            --data-binary "$_body" "$@" "$URL$_p")
    else
        CODE=$(curl -s -o "$T/.body" -w '%{http_code}' -X "$_m" "$@" "$URL$_p")
    fi
    OUT=$(cat "$T/.body")
}


# node_start NAME [ARGS...]: one more server on $DB on its own ephemeral port.
node_start() {
    _n=$1
    shift
    : >"$T/node-$_n.out"
    "$MNEMO" --db "$DB" serve --listen 127.0.0.1:0 "$@" >"$T/node-$_n.out" 2>>"$T/node-$_n.err" &
    eval "${_n}_PID=\$!"
    eval "_np=\$${_n}_PID"
    _await_url "$_np" "$T/node-$_n.out" "node $_n" || cat "$T/node-$_n.err" >&2
    _u=$(head -n1 "$T/node-$_n.out" 2>/dev/null)
    eval "${_n}_URL=\$_u"
}
node_stop() {
    eval "_p=\$${1}_PID"
    kill -TERM "$_p" 2>/dev/null
    wait "$_p"
    eq "$?" 0 "node $1 exits 0 on SIGTERM"
}
at() {
    _saved_url=${URL:-}
    eval "URL=\$${1}_URL"
    shift
    "$@"
    URL=$_saved_url
}
