#!/bin/sh
# t1220-serve-sigterm.sh — nothing acknowledged is lost: 4 clients append as fast as they can;
# the server gets SIGTERM (graceful) in the middle, then in a second round SIGKILL; after a
# restart every message that was answered 201 is in the database, exactly once. "In the middle"
# is decided by progress, not by the clock: the signal goes once the clients have been answered
# 201 a random 11..40 times, however fast the machine is.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

S=0190a000-0000-7000-8000-0000000000b1
ok mn session new --id "$S"

# burst URL OUTFILE: 4 threads append until the server goes away; each acknowledged content is
# appended to OUTFILE as its 201 arrives
burst() {
    python3 - "$1" "$2" "$S" <<'PY' &
import json, sys, threading, urllib.request
url, out, sid = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()
acked = open(out, "a", buffering=1)
def worker(w):
    i = 0
    while True:
        body = json.dumps({"role": "user", "content": "w%d-%d" % (w, i), "idempotency_key": "w%d-%d" % (w, i)}).encode()
        rq = urllib.request.Request(url + "/v1/sessions/" + sid + "/messages", data=body, method="POST",
                                    headers={"Content-Type": "application/json"})
        try:
            # the timeout only ends a hung client; it asserts nothing about speed
            with urllib.request.urlopen(rq, timeout=300) as r:
                if r.status == 201:
                    with lock:
                        acked.write("w%d-%d\n" % (w, i))
        except Exception:
            return
        i += 1
ts = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
PY
    BPID=$!
}

acked_at_least() { [ "$(grep -c . "$1")" -ge "$2" ]; }

for sig in TERM KILL; do
    serve_start
    : >"$T/acked-$sig"
    burst "$URL" "$T/acked-$sig"
    want=$((11 + $(od -An -N1 -tu1 /dev/urandom | tr -d ' ') % 30))
    wait_until 120 "$sig round: $want appends answered 201" acked_at_least "$T/acked-$sig" "$want"
    kill -"$sig" "$SPID"
    wait "$SPID"
    _rc=$?
    if [ $sig = TERM ]; then eq "$_rc" 0 "SIGTERM: clean exit"; fi
    wait "$BPID"
    n=$(grep -c . "$T/acked-$sig")
    check "SIGTERM/KILL round $sig: some appends were acknowledged ($n)" test "$n" -gt 10
    ok mn history "$S" --json
    printf '%s' "$OUT" | python3 -c 'import json,sys; [print(m["content"]) for m in json.load(sys.stdin)]' | sort >"$T/stored"
    sort "$T/acked-$sig" | grep . >"$T/acked.sorted"
    check "$sig: every acknowledged append is stored" sh -c "comm -23 '$T/acked.sorted' '$T/stored' | grep -q . && exit 1 || exit 0"
    check "$sig: no message stored twice" sh -c "[ \"\$(uniq -d '$T/stored' | wc -l)\" -eq 0 ]"
done
finish
