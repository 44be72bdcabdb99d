#!/bin/sh
# t1550-nodes-faults.sh — the fault suite (pg/ variant only): tests/cli/faults.py runs each
# scenario a few seconds against `mnemo serve` nodes on a throwaway PostgreSQL of this test's own
# (tests/pg/pgctl.sh; two scenarios restart it), records every append with its outcome and reads
# the history back through every node. In every scenario nothing acknowledged is lost, nothing is
# stored twice, seq has no gap, an append acknowledged before another was sent has the lower seq,
# every node reads the same history, and a 201 names the message stored. Then each its own:
# connections terminated under keyless appends (no copy, and an error answer means nothing was
# stored), a COMMIT's answer lost (201, once), a node paused holding session locks (the other
# node's appends to them still 201: the paused node's transaction is ended), a session locked
# past the busy wait (503 busy for it, the other sessions go on), a node killed or stopped, and
# PostgreSQL restarted (fast, and immediate: a crash; the nodes report it on /healthz and
# /metrics, and that they are ready again). Longer runs: bench/faults/run.sh.
. "$TESTS_DIR/cli/lib.sh"
[ "$(backend)" = postgres ] || { fail "t15xx tests need PostgreSQL (MNEMO_TEST_PG_URL)"; finish; }
PGCTL=$TESTS_DIR/pg/pgctl.sh
pgctl() { (cd / && sh "$PGCTL" "$@"); } # from /: the server runs as postgres, who cannot enter $T

PGDIR=$(mktemp -d /tmp/mnemo-t1550.XXXXXX) || exit 99
rmdir "$PGDIR"
BASE=$(pgctl start "$PGDIR") || { fail "pgctl start"; finish; }
trap 'pgctl stop "$PGDIR"' EXIT

# scenario NAME [SECONDS]: runs it; R gets its report (JSON), printed for the log, and each key
# of it a variable r_KEY with the value as JSON text (r_held_answers='["503/busy"]'): one python
# call a scenario, not one a check
scenario() {
    for _v in $(set | sed -n 's/^\(r_[a-z_]*\)=.*/\1/p'); do unset "$_v"; done
    R=$(python3 "$TESTS_DIR/cli/faults.py" "$1" --mnemo "$MNEMO" --base "$BASE" --pgdir "$PGDIR" --work "$T/$1" \
        --seconds "${2:-3}" 2>"$T/$1.err")
    if [ -z "$R" ]; then
        fail "$1: the scenario did not finish"
        tail -5 "$T/$1.err" >&2
        return 1
    fi
    echo "$1: $R"
    eval "$(printf '%s' "$R" | python3 -c '
import json, shlex, sys
for k, v in json.load(sys.stdin).items():
    print("r_%s=%s" % (k, shlex.quote(json.dumps(v, sort_keys=True))))')"
}
history_ok() {
    _bad=
    for _k in lost duplicated gaps order_violations diverged ack_mismatch phantoms; do
        eval "_v=\${r_$_k:-missing}"
        [ "$_v" = 0 ] || _bad="$_bad $_k=$_v"
    done
    eq "$_bad" "" "$1: nothing lost or doubled, no gap, in real-time order, the same history through every node,
    every 201 naming the message stored"
    eq "${r_clean_exits:-}" true "$1: every node stopped with SIGTERM exits 0"
    check "$1: appends were acknowledged" test "${r_acknowledged:-0}" -gt 0
}

# the issue's first case: without keys, the node's connections terminated every 30-100 ms
scenario terminate 3
history_ok terminate
eq "${r_error_but_stored:-}" 0 "terminate: no append answered with an error was stored"
check "terminate: connections were terminated" test "${r_backends_terminated:-0}" -gt 0

scenario commit-lost
history_ok commit-lost
check "commit-lost: an answer to COMMIT was lost" test "${r_answers_lost:-0}" -gt 0
eq "${r_error_but_stored:-}" 0 "commit-lost: the append whose answer was lost got its 201"

# the issue's second case
scenario sigstop
history_ok sigstop
check "sigstop: node a was paused holding a session lock" test "${r_held_sessions:-0}" -gt 0
eq "${r_b_errors_while_paused:-}" 0 "sigstop: node b answered 201 to every append while a was paused"

scenario busy
history_ok busy
eq "${r_held_answers:-}" '["503/busy"]' "busy: appends to the held session answer 503 busy"
eq "${r_other_errors_while_held:-}" 0 "busy: appends to the other sessions answer 201 meanwhile"
echo "busy: answered after ${r_busy_answer_ms:-} ms (memory.busy_timeout_ms 1000)"

scenario sigkill
history_ok sigkill
eq "${r_node_a_exits:-}" '[-9]' "sigkill: node a was killed"

scenario sigterm
history_ok sigterm
eq "${r_node_a_exits:-}" '[0]' "sigterm: node a drained and exited 0"

for s in pg-fast pg-immediate; do
    scenario $s
    history_ok $s
    eq "${r_other_answers:-}" '[]' "$s: every answer was 201 or 503 unavailable"
    eq "${r_error_but_stored:-}" 0 "$s: no append answered with an error was stored"
    eq "${r_degraded:-}" \
        '{"database": "unreachable", "gauges": {"mnemo_database_reachable": "0", "mnemo_ready": "0"}}' \
        "$s: while it was down, node b said so (/healthz 503 naming the database; /metrics)"
    eq "${r_ready_again:-}" true "$s: once it was back, both nodes answered /healthz 200 again"
done
finish
