#!/bin/sh
# t0600-concurrency.sh — four processes append to one database file at the same time, two per
# session: no add fails, nothing is lost or duplicated, each writer's order is kept, seq has no
# gaps, and the database passes its backend's integrity check (lib.sh integrity).
. "$TESTS_DIR/cli/lib.sh"

# Messages per writer. Each `mnemo add` is one process (~50 ms under ASan with the BPE
# tokenizer loading its ranks), so 4 × 200 took 30-40 s on 2 cores; 4 × 100 keeps the script
# near 15 s. MNEMO_CONCURRENCY_N=200 runs the full size.
N=${MNEMO_CONCURRENCY_N:-100}
# The writers wait for each other's locks: bounded generously, not by the speed of a loaded
# machine (the default bound is tested by unit/test_busy).
MNEMO_BUSY_TIMEOUT_MS=120000
export MNEMO_BUSY_TIMEOUT_MS

ok mn session new --title "session A"
SA=$OUT
ok mn session new --title "session B"
SB=$OUT

writer() { # writer PROC SESSION: appends N messages "p<PROC>-<i>", logs failures
    i=1
    while [ $i -le "$N" ]; do
        if ! "$MNEMO" --db "$DB" add "$2" user "p$1-$i" >/dev/null 2>>"$T/err.$1"; then
            echo "p$1-$i exited non-zero" >>"$T/fail.$1"
        fi
        i=$((i + 1))
    done
    echo finished >"$T/done.$1"
}

start=$(date +%s)
writer 1 "$SA" &
P1=$!
writer 2 "$SA" &
P2=$!
writer 3 "$SB" &
P3=$!
writer 4 "$SB" &
P4=$!
wait "$P1" "$P2" "$P3" "$P4"
elapsed=$(($(date +%s) - start))
echo "4 writers x $N messages: ${elapsed}s" >&2

for p in 1 2 3 4; do
    check "writer $p finished" test -f "$T/done.$p"
    check "writer $p: every add exited 0 ($(cat "$T/fail.$p" 2>/dev/null | wc -l | tr -d " ") failed)" test ! -s "$T/fail.$p"
    check "writer $p: nothing on stderr ($(head -c 300 "$T/err.$p" 2>/dev/null))" test ! -s "$T/err.$p"
done

cat >"$T/verify.py" <<'EOF'
import json, sys
hist, procs, n = json.load(open(sys.argv[1])), sys.argv[2].split(","), int(sys.argv[3])
problems = []
if len(hist) != 2 * n:
    problems.append(f"{len(hist)} messages, want {2 * n}")
seqs = [m["seq"] for m in hist]
if seqs != list(range(1, len(hist) + 1)):
    problems.append("seq is not 1..%d without gaps" % len(hist))
contents = [m["content"] for m in hist]
if len(set(contents)) != len(contents):
    problems.append("duplicated messages")
ids = [m["id"] for m in hist]
if ids != sorted(ids) or len(set(ids)) != len(ids):
    problems.append("ids not increasing with seq")
for p in procs:
    mine = [int(c.split("-")[1]) for c in contents if c.startswith(f"p{p}-")]
    if mine != list(range(1, n + 1)):
        problems.append(f"writer p{p}: {len(mine)} messages, order intact: {mine == sorted(mine)}")
others = [c for c in contents if not any(c.startswith(f"p{p}-") for p in procs)]
if others:
    problems.append(f"messages of other writers in this session: {others[:3]}")
print("; ".join(problems) if problems else "ok")
EOF
"$MNEMO" --db "$DB" history "$SA" --json >"$T/a.json" || fail "history A"
"$MNEMO" --db "$DB" history "$SB" --json >"$T/b.json" || fail "history B"
ok python3 "$T/verify.py" "$T/a.json" 1,2 "$N"
eq "$OUT" ok "session A: $((2 * N)) messages, seq 1..$((2 * N)), writers 1 and 2 in order"
ok python3 "$T/verify.py" "$T/b.json" 3,4 "$N"
eq "$OUT" ok "session B: $((2 * N)) messages, seq 1..$((2 * N)), writers 3 and 4 in order"
ok mn session show "$SA" --json
eq "$(jget "$OUT" 'j["message_count"]')" $((2 * N)) "session A message_count"
ok mn stats --json
eq "$(jget "$OUT" '[j["sessions"], j["messages"]]')" "[2, $((4 * N))]" "stats: 2 sessions, $((4 * N)) messages"
ok integrity "$DB"
eq "$OUT" ok "integrity check ($(backend))"
ok sql "$DB" 'SELECT count(*) FROM messages'
eq "$OUT" $((4 * N)) "the messages table holds every message"

# concurrent idempotent retries: 4 processes append the same keys; each key is stored once
ok mn session new --title keys
SK=$OUT
keyed() {
    i=1
    while [ $i -le 25 ]; do
        "$MNEMO" --db "$DB" add "$SK" user "keyed $i" --key "k-$i" >>"$T/keyed.$1" 2>>"$T/keyed-err.$1" ||
            echo "k-$i" >>"$T/keyed-fail.$1"
        i=$((i + 1))
    done
}
keyed 1 & K1=$!
keyed 2 & K2=$!
keyed 3 & K3=$!
keyed 4 & K4=$!
wait "$K1" "$K2" "$K3" "$K4"
check "keyed writers: every add exited 0" sh -c '! cat "$1"/keyed-fail.* 2>/dev/null | grep -q .' - "$T"
ok mn history "$SK" --json
eq "$(jget "$OUT" '[m["content"] for m in j] == ["keyed %d" % i for i in range(1, 26)]')" true \
    "the same 25 keys from 4 concurrent writers: each stored once, in order"
eq "$(cat "$T"/keyed.1)" "$(cat "$T"/keyed.4)" "every writer got the same message ids back"

finish
