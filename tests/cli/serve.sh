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
    for _i in $(seq 1 100); do
        URL=$(head -n1 "$T/serve.out" 2>/dev/null)
        [ -n "$URL" ] && break
        sleep 0.1
    done
    [ -n "$URL" ] || { fail "server did not print its URL"; cat "$T/serve.err" >&2; }
}
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
    _u=
    for _i in $(seq 1 150); do
        _u=$(head -n1 "$T/node-$_n.out" 2>/dev/null)
        [ -n "$_u" ] && break
        sleep 0.1
    done
    [ -n "$_u" ] || { fail "node $_n did not print its URL"; cat "$T/node-$_n.err" >&2; }
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
