#!/bin/sh
# t1287-serve-dual-bind.sh — `mnemo serve` on localhost (or 127.0.0.1, or ::1) holds the port on
# both 127.0.0.1 and [::1], which a browser's http://localhost:PORT may reach: no other process
# can then listen on the other one and phish the API key typed into the page. When another
# process holds [::1]:PORT first the server refuses to start, naming it; on a machine without
# IPv6 it says so and serves IPv4. Its browser policy names its own origins, scheme included:
# https://127.0.0.1:PORT is not this http server.
# pg variant: none — socket binding.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

# a port free on both 127.0.0.1 and ::1 right now
free_port() {
    python3 -c '
import socket
for _ in range(100):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    b = socket.socket(socket.AF_INET6)
    try:
        b.bind(("::1", p)); print(p); break
    except OSError:
        pass
    finally:
        a.close(); b.close()'
}
# bind_fails HOST PORT: another process cannot listen there
bind_fails() {
    python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(); sys.exit(1)
except OSError:
    sys.exit(0)' "$1" "$2"
}
# start_on SPEC: serve_start with --listen SPEC
start_on() {
    : >"$T/serve.out"
    "$MNEMO" --db "$DB" serve --listen "$1" >"$T/serve.out" 2>>"$T/serve.err" &
    SPID=$!
    _await_url "$SPID" "$T/serve.out" "the server" || cat "$T/serve.err" >&2
    URL=$(head -n1 "$T/serve.out" 2>/dev/null)
}
code_of() { curl -s -o "$T/.body" -w '%{http_code}' --max-time 30 "$@"; }

ok mn session new --json
P=$(free_port)
start_on "localhost:$P"
eq "$URL" "http://localhost:$P" "the URL printed names localhost"
check "another process cannot listen on [::1]:$P" bind_fails ::1 "$P"
check "nor on 127.0.0.1:$P" bind_fails 127.0.0.1 "$P"
eq "$(code_of "http://[::1]:$P/healthz")" 200 "[::1]:$P is this server"
eq "$(code_of "http://127.0.0.1:$P/healthz")" 200 "127.0.0.1:$P is this server"
serve_stop

# 127.0.0.1:0 (an ephemeral port, as every other test listens) holds ::1 on the same port too
serve_start
PORT=${URL##*:}
check "127.0.0.1:0 holds [::1]:$PORT too" bind_fails ::1 "$PORT"
# own origins: http only (the server speaks nothing else)
for o in "http://127.0.0.1:$PORT" "http://localhost:$PORT" "http://[::1]:$PORT"; do
    eq "$(code_of -X POST -H "Origin: $o" -H 'Content-Type: application/json' --data '{}' "$URL/v1/sessions")" 201 \
        "Origin $o is the server's own"
done
for o in "https://127.0.0.1:$PORT" "https://localhost:$PORT" "https://[::1]:$PORT"; do
    eq "$(code_of -X POST -H "Origin: $o" -H 'Content-Type: application/json' --data '{}' "$URL/v1/sessions")" 403 \
        "Origin $o: another scheme is another origin (403)"
done
eq "$(code_of -H "Origin: https://127.0.0.1:$PORT" -H "Host: 127.0.0.1:$PORT" "$URL/v1/sessions")" 403 \
    "https on this port is not same-origin through Host either"
serve_stop

# another process on [::1]:PORT first: the server refuses to start on localhost:PORT
P=$(free_port)
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET6); s.bind(("::1", int(sys.argv[1]))); s.listen()
open(sys.argv[2], "w").close(); time.sleep(600)' "$P" "$T/squat" &
SQUAT=$!
wait_until 60 "the other process to listen on [::1]:$P" test -e "$T/squat"
fails 1 "\[::1\]:$P" timeout 60 "$MNEMO" --db "$DB" serve --listen "localhost:$P"
check "the error says why" grep -q 'localhost' "$T/.err"
fails 1 "\[::1\]:$P" timeout 60 "$MNEMO" --db "$DB" serve --listen "127.0.0.1:$P"
kill "$SQUAT"
wait "$SQUAT" 2>/dev/null

# a machine without IPv6 (a network namespace where ::1 is disabled): a log line, IPv4 served
if unshare -n true 2>/dev/null; then
    unshare -n sh -c 'ip link set lo up && sysctl -qw net.ipv6.conf.lo.disable_ipv6=1 &&
        "$1" --db "$2" serve --listen localhost:0 >"$3/v4.out" 2>"$3/v4.err" & pid=$!
        i=0; while [ ! -s "$3/v4.out" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
        curl -s --max-time 30 "$(head -n1 "$3/v4.out" | sed "s/localhost/127.0.0.1/")/healthz" >"$3/v4.health"
        kill -TERM $pid; wait $pid' - "$MNEMO" "$DB" "$T"
    eq "$(cat "$T/v4.health")" '{"status":"ok"}' "without IPv6: served on 127.0.0.1"
    check "without IPv6: a log line says so" grep -q 'no IPv6' "$T/v4.err"
else
    echo "# no network namespace here (unshare -n): the no-IPv6 case is not exercised"
fi
finish
