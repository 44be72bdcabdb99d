#!/bin/sh
# t1294-serve-slowloris.sh — slow clients cannot hold `mnemo serve` (issue #13): sockets that
# send request headers a byte at a time are closed by the server once server.header_timeout_ms
# has passed (each byte used to restart the idle timeout, so they stayed for ever); at most
# server.max_connections_per_ip are held from one address; meanwhile a new client from another
# address still gets /healthz. No timing is asserted: only outcomes, with generous deadlines.
# pg variant: none — header timeouts in the HTTP layer.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

MNEMO_SERVER_HEADER_TIMEOUT_MS=1000 MNEMO_SERVER_MAX_CONNECTIONS_PER_IP=20 serve_start
# 40 sockets from 127.0.0.2, a header byte every 0.3 s, until the server has closed them all
python3 "$TESTS_DIR/cli/slowloris.py" --url "$URL" --sockets 40 --interval 0.3 --duration 60 --until-closed \
    >"$T/slow.json" &
SLOW=$!
sleep 0.5
req GET /healthz
eq "$CODE" 200 "a new client gets /healthz while slow sockets are open"
wait "$SLOW"
cat "$T/slow.json"
eq "$(jget "$(cat "$T/slow.json")" 'j["still_open"]')" 0 "every slow socket was closed by the server"
eq "$(jget "$(cat "$T/slow.json")" 'j["opened"] == 40 and j["closed_by_server"] == 40')" true \
    "all 40 connected and were closed (past the per-address limit at once, the rest at the header deadline)"
eq "$(jget "$(cat "$T/slow.json")" 'j["healthz"]["failed"]')" 0 "no /healthz probe failed meanwhile"
req GET /healthz
eq "$CODE" 200 "served after"
serve_stop
finish
