#!/bin/sh
# t0700-crash.sh — kill -9 a writer (and the mnemo process it is running) at random moments:
# every acknowledged message survives, the database is never torn, and it keeps accepting
# appends. A writer acknowledges key k-<n> only after `mnemo add --key k-<n>` exited 0; the next
# round resumes at the first unacknowledged key, so the message killed in flight is retried
# with the same key and must not be stored twice.
#
# When to kill is decided by progress, not by the clock, so that a slow or loaded machine runs
# the same test: each round waits until the writer has acknowledged a random 1..3 further
# messages, then kills it at a random point of the next `mnemo add` (a random fraction of the
# time one add took in this round: during start-up, inside the append, after the commit but
# before the acknowledgement). Every third round the next add kills itself instead, right
# after its commit (the test hook MNEMO_TEST_CRASH_AFTER_COMMIT, docs/config.md), so the
# committed-but-unacknowledged case and its retry are covered in every run, not by luck.
# Every round kills, and every round has acknowledged work.
. "$TESTS_DIR/cli/lib.sh"

ROUNDS=${MNEMO_CRASH_ROUNDS:-20}

ok mn session new --title crash
S=$OUT
: >"$T/ack"

cat >"$T/writer.sh" <<'EOF'
# writer.sh MNEMO DB SESSION FIRST-N ACK-FILE ERR-FILE CRASH-N
# The add of key k-CRASH-N (0: none) runs with the test hook that makes it SIGKILL itself after
# its commit, in place of the writer (exec): the writer ends with it, acknowledging nothing.
n=$4
while :; do
    if [ "$n" = "$7" ]; then
        MNEMO_TEST_CRASH_AFTER_COMMIT=1 exec "$1" --db "$2" add "$3" user "crash message $n" --key "k-$n" >/dev/null 2>>"$6"
    fi
    if "$1" --db "$2" add "$3" user "crash message $n" --key "k-$n" >/dev/null 2>>"$6"; then
        echo "k-$n" >>"$5"
        n=$((n + 1))
    fi
done
EOF

group_running() { # group_running PGID: true while a process of the group is not a zombie
    for _p in $(pgrep -g "$1"); do
        alive "$_p" && return 0
    done
    return 1
}
group_gone() { ! group_running "$1"; }

acks() { grep -c . "$T/ack"; }
acked_at_least() { [ "$(acks)" -ge "$1" ]; }
random() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; } # 0 .. 65535
now_ns() { date +%s%N; }

next=1
round=1
inflight=0 # rounds where the kill came after the commit but before the acknowledgement
while [ "$round" -le "$ROUNDS" ]; do
    base=$(acks)
    want=$((1 + $(random) % 3))
    hooked=
    crash_n=0
    if [ $((round % 3)) = 0 ]; then
        hooked=1
        crash_n=$((base + want + 1))
    fi
    t0=$(now_ns)
    # setsid: the writer and its mnemo child form their own process group, killed at once.
    # detect_leaks=0: the leak scan at exit would make most kills land after the commit;
    # leaks are checked by the other scripts.
    ASAN_OPTIONS=detect_leaks=0 setsid sh "$T/writer.sh" "$MNEMO" "$DB" "$S" "$next" "$T/ack" "$T/writer.err.$round" "$crash_n" </dev/null &
    pg=$!
    progressed=1
    if ! wait_until 120 "round $round: the writer to acknowledge $want message(s)" acked_at_least $((base + want)); then
        progressed=
        echo "    acknowledged this round: $(($(acks) - base)); the writer's errors: $(head -c 600 "$T/writer.err.$round")" >&2
    fi
    if [ -n "$progressed" ] && [ -n "$hooked" ]; then
        # the add of k-$crash_n kills itself after its commit, and the writer with it (exec)
        if wait_until 120 "round $round: the add of k-$crash_n to kill itself after its commit" group_gone "$pg"; then
            wait "$pg"
            rc=$?
            eq "$rc" 137 "round $round: the add of k-$crash_n died by SIGKILL (the test hook)" || progressed=
        else
            progressed=
            hooked= # killed below
        fi
    else
        if [ -n "$progressed" ]; then
            # a random point of the next add: a random fraction of one add's duration in this round
            per_add=$((($(now_ns) - t0) / want))
            ms=$((per_add / 1000000 * $(random) / 65536))
            sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
        fi
        hooked=
    fi
    if [ -z "$hooked" ]; then
        # (no "--": dash's kill builtin does not take it; "-PID" after the signal is the group)
        if ! kill -9 "-$pg" 2>/dev/null; then
            fail "round $round: could not kill process group $pg"
            pkill -9 -P "$pg"
            kill -9 "$pg" 2>/dev/null
        fi
        wait "$pg" 2>/dev/null
    fi
    # the mnemo child was reparented when the shell died; it is dead once it is a zombie
    # (init may take a while to reap it)
    wait_until 60 "round $round: every process of the writer's group $pg to end" group_gone "$pg" && pass
    [ -n "$progressed" ] || break

    # everything acknowledged is there, exactly once; the killed-in-flight one at most once
    "$MNEMO" --db "$DB" history "$S" --json >"$T/hist.json" 2>"$T/hist.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "round $round: history exited $rc: $(cat "$T/hist.err")"
        break
    fi
    run python3 -c '
import json, sys
hist = json.load(open(sys.argv[1]))
acked = [l.strip() for l in open(sys.argv[2]) if l.strip()]
keys = [m["idempotency_key"] for m in hist]
problems = []
missing = [k for k in acked if k not in set(keys)]
if missing:
    problems.append("acknowledged but missing: %s" % missing[:5])
if len(set(keys)) != len(keys):
    problems.append("a key is stored twice")
if keys != ["k-%d" % i for i in range(1, len(keys) + 1)]:
    problems.append("keys are not k-1..k-%d in order: %s" % (len(keys), keys[-5:]))
if [m["seq"] for m in hist] != list(range(1, len(hist) + 1)):
    problems.append("seq has gaps")
if any(m["content"] != "crash message " + m["idempotency_key"][2:] for m in hist):
    problems.append("a content does not match its key")
if len(keys) > len(acked) + 1:
    problems.append("more than one unacknowledged message stored")
print("; ".join(problems) if problems else "ok %d %d" % (len(acked), len(keys)))
' "$T/hist.json" "$T/ack"
    case $OUT in
    "ok "*)
        pass
        set -- $OUT # "ok ACKED STORED"
        [ "$3" -gt "$2" ] && inflight=$((inflight + 1))
        [ -z "$hooked" ] || eq "$3" $(($2 + 1)) "round $round: the message committed before the crash is stored (k-$crash_n)"
        ;;
    *) fail "round $round: $OUT" ;;
    esac
    check "round $round: the writer saw no error ($(head -c 300 "$T/writer.err.$round" 2>/dev/null))" test ! -s "$T/writer.err.$round"
    run integrity "$DB"
    eq "$OUT" ok "round $round: integrity check ($(backend))"
    # resume at the first unacknowledged key (the in-flight one is retried with its key)
    next=$(($(grep -c . "$T/ack") + 1))
    round=$((round + 1))
done

acked=$(acks)
echo "$ROUNDS rounds ($((ROUNDS / 3)) of them killed by the test hook after a commit), $acked acknowledged messages, $inflight stored but unacknowledged when killed" >&2
check "every round acknowledged work before its kill ($acked over $ROUNDS rounds)" test "$acked" -ge "$ROUNDS"

# the database still accepts appends, and the in-flight key of the last round resolves to one copy
ok mn add "$S" user "crash message $next" --key "k-$next"
ok mn add "$S" user "crash message $next" --key "k-$next"
ok mn add "$S" user "after the crashes"
ok mn history "$S" --json
eq "$(jget "$OUT" '[m["idempotency_key"] for m in j[:-1]] == ["k-%d" % i for i in range(1, len(j))]')" true \
    "final history: k-1..k-$next once each, in order"
eq "$(jget "$OUT" 'j[-1]["content"]')" "after the crashes" "the last append is stored"
ok integrity "$DB"
eq "$OUT" ok "final integrity check ($(backend))"
ok mn stats --json
eq "$(jget "$OUT" 'j["messages"]')" "$((next + 1))" "stats counts every message"

finish
