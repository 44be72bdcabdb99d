#!/bin/sh
# t1286-serve-conn-limits.sh — idle connections cannot lock clients out of `mnemo serve`: at
# server.max_connections the oldest idle connection is closed for a new one; sockets that
# reconnect as soon as they are closed still leave room for /healthz and for requests; with
# every connection busy, /healthz and /metrics are still answered (a reserve) and other requests
# get 503; the cap stays below the descriptor limit (ulimit -n); server.max_connections_per_ip
# counts a client's network (/24, /64; all of loopback is one client), so rotating source
# addresses does not multiply it. Raw sockets: tests/cli/rawhttp.py. No timing is asserted.
# pg variant: none — connection limits in the HTTP layer.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

rawhttp() { python3 "$TESTS_DIR/cli/rawhttp.py" "$URL" "$@"; }

# no header deadline and a long idle timeout: only the cap may close an idle connection
MNEMO_SERVER_MAX_CONNECTIONS=64 MNEMO_SERVER_HEADER_TIMEOUT_MS=0 MNEMO_SERVER_IDLE_TIMEOUT=600 serve_start
J=$(rawhttp evict 64)
echo "# evict: $J"
eq "$(jget "$J" 'j["a_closed"]')" 64 "at the cap, each new connection closed the oldest idle one"
eq "$(jget "$J" '[j["b_closed"], j["b_healthz"]]')" '[0, {"200": 64}]' "the newer ones stay open and are served"
J=$(rawhttp flood 300 2)
echo "# flood: $J"
eq "$(jget "$J" 'sorted(j["probes"]["healthz"])')" '["200"]' "300 idle sockets reconnecting: every /healthz probe answered"
eq "$(jget "$J" 'sorted(j["probes"]["sessions"])')" '["200"]' "and every request of a new client"
check "the flood was closed and came back ($(jget "$J" 'j["reconnects"]') reconnects)" \
    test "$(jget "$J" 'j["reconnects"]')" -gt 0
check "open connections, as /metrics saw them meanwhile, within the cap and its reserve (64 + 16)" \
    test "$(jget "$J" 'j["most_connections"]')" -le 80
serve_stop

# a descriptor limit below server.max_connections (4096): the cap is lowered under it
: >"$T/serve.out"
(ulimit -n 300 && exec "$MNEMO" --db "$DB" serve --listen 127.0.0.1:0 >"$T/serve.out" 2>>"$T/serve.err") &
SPID=$!
_await_url "$SPID" "$T/serve.out" "the server"
URL=$(head -n1 "$T/serve.out")
J=$(rawhttp flood 400 2)
echo "# flood under ulimit -n 300: $J"
eq "$(jget "$J" 'sorted(j["probes"]["healthz"])')" '["200"]' "ulimit -n 300, 400 idle sockets: /healthz answered"
eq "$(jget "$J" 'sorted(j["probes"]["sessions"])')" '["200"]' "and requests"
check "the lowered cap was logged" grep -q 'lowered to fit the descriptor limit.*nofile=300' "$T/serve.err"
serve_stop

# per client network: 10 connections from each of 127.0.0.2-9 and 127.0.1.2 (90) under a cap of
# 20 per client: 20 are served, the rest get 503 or are closed; /healthz still answers
MNEMO_SERVER_MAX_CONNECTIONS_PER_IP=20 MNEMO_SERVER_HEADER_TIMEOUT_MS=0 serve_start
J=$(rawhttp prefix 10 /v1/sessions)
echo "# prefix: $J"
eq "$(jget "$J" 'j.get("200")')" 20 "rotating loopback source addresses: 20 served, not 90"
eq "$(jget "$J" 'sorted(k for k in j if k != "200")')" '["503", "closed"]' "the others: 503 or closed"
req GET /healthz
eq "$CODE" 200 "/healthz from the same client while over its cap"
serve_stop
finish
