#!/bin/sh
# t1220-serve-sigterm.sh — nothing acknowledged is lost: 4 clients append as fast as they can;
# the server gets SIGTERM (graceful) in the middle, then in a second round SIGKILL; after a
# restart every message that was answered 201 is in the database, exactly once.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

S=0190a000-0000-7000-8000-0000000000b1
ok mn session new --id "$S"

# burst URL OUTFILE: 4 threads append until the server goes away; acknowledged contents to OUTFILE
burst() {
    python3 - "$1" "$2" "$S" <<'PY' &
import json, sys, threading, urllib.request
url, out, sid = sys.argv[1], sys.argv[2], sys.argv[3]
acked, lock = [], threading.Lock()
def worker(w):
    i = 0
    while True:
        body = json.dumps({"role": "user", "content": "w%d-%d" % (w, i), "idempotency_key": "w%d-%d" % (w, i)}).encode()
        rq = urllib.request.Request(url + "/v1/sessions/" + sid + "/messages", data=body, method="POST",
                                    headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(rq, timeout=10) as r:
                if r.status == 201:
                    with lock:
                        acked.append("w%d-%d" % (w, i))
                        if len(acked) == 20:
                            open(out + ".progress", "w").close()
        except Exception:
            return
        i += 1
ts = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
open(out, "w").write("\n".join(acked) + "\n")
PY
    BPID=$!
}

for sig in TERM KILL; do
    serve_start
    burst "$URL" "$T/acked-$sig"
    # on progress, not time: python may take seconds to start on a loaded machine
    for _i in $(seq 1 600); do [ -e "$T/acked-$sig.progress" ] && break; sleep 0.1; done
    sleep 0.3
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
