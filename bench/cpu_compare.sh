#!/bin/sh
# cpu_compare.sh — two builds of mnemo side by side, in one run, by CPU time per operation (user +
# system seconds of the process doing the work), which a busy machine disturbs far less than wall
# time. For a refactoring's "nothing got slower": append, window context, and the server's append
# and context routes.
# usage: sh bench/cpu_compare.sh BEFORE_BUILD AFTER_BUILD [RUNS]
#   a BUILD folder holds `mnemo` and `mnemo-bench` (a Release build with -DMNEMO_BENCH=ON)
#   RUNS (default 3): the builds alternate inside each run; the table shows medians [min-max]
# Workloads (heuristic tokenizer, as the other store benchmarks):
#   append   mnemo-bench append --n 3000 --per-txn 1 --sync normal: µs of CPU per append
#   window   mnemo-bench window --calls 2000 --max-tokens 4096 on a 10k-message store
#            (100 sessions x 100): µs of CPU per context build (3 passes), and its p50 wall µs
#   serve    `mnemo serve` on a copy of that store; 3000 appends then 3000 window contexts over
#            one keep-alive connection (tests/cli's python3 client); µs of the server's CPU per request
set -eu
BEFORE=$1 AFTER=$2 RUNS=${3:-3}
W=$(mktemp -d /tmp/mnemo-cpucmp.XXXXXX)
trap 'rm -rf "$W"' EXIT
export MNEMO_TOKENIZER=heuristic

cpu_of() { # cpu_of CMD... : runs it, prints "CPU_SECONDS<TAB>STDOUT"
    /usr/bin/time -f '%U %S' -o "$W/time" "$@" >"$W/out" 2>/dev/null
    printf '%s\t%s\n' "$(awk '{print $1 + $2}' "$W/time")" "$(cat "$W/out")"
}

"$BEFORE/mnemo-bench" build --db "$W/store.db" --sessions 100 --messages 100 --rounds-per-txn 100 >/dev/null

serve_cpu() { # serve_cpu BUILD: prints "append_us context_us" of server CPU per request
    cp "$W/store.db" "$W/s.db"
    rm -f "$W/s.db-wal" "$W/s.db-shm" "$W/url"
    "$1/mnemo" --db "$W/s.db" serve --listen 127.0.0.1:0 >"$W/url" 2>/dev/null &
    pid=$!
    for _ in $(seq 1 600); do [ -s "$W/url" ] && break; sleep 0.1; done
    python3 - "$(head -n1 "$W/url")" "$pid" <<'EOF'
import http.client, json, os, sys, urllib.parse
url, pid = urllib.parse.urlparse(sys.argv[1]), sys.argv[2]
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
c = http.client.HTTPConnection(url.hostname, url.port)
def call(method, path, body=None):
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    assert r.status in (200, 201), (r.status, data[:200])
    return json.loads(data)
N = 3000
ids = [s["id"] for s in call("GET", "/v1/sessions?limit=100")["sessions"]]
out = []
for kind in ("append", "context"):
    t0 = cpu()
    for i in range(N):
        sid = ids[i % len(ids)]
        if kind == "append":
            call("POST", f"/v1/sessions/{sid}/messages", {"role": "user", "content": "bench message %d about the weather" % i})
        else:
            call("POST", f"/v1/sessions/{sid}/context", {"max_tokens": 4096, "strategy": "window", "fold": "off"})
    out.append((cpu() - t0) / N * 1e6)
print("%.1f %.1f" % tuple(out))
EOF
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

: >"$W/rows"
for run in $(seq 1 "$RUNS"); do
    for side in before after; do
        b=$BEFORE
        [ "$side" = after ] && b=$AFTER
        rm -f "$W/a.db"*
        a=$(cpu_of "$b/mnemo-bench" append --db "$W/a.db" --n 3000 --per-txn 1 --sync normal --tokenizer heuristic)
        echo "$side append $(echo "$a" | awk -F'\t' '{printf "%.1f", $1 / 3000 * 1e6}')" >>"$W/rows"
        cp "$W/store.db" "$W/w.db"
        w=$(cpu_of "$b/mnemo-bench" window --db "$W/w.db" --calls 2000 --max-tokens 4096 --passes 3)
        echo "$side window_cpu $(echo "$w" | awk -F'\t' '{printf "%.1f", $1 / 6000 * 1e6}')" >>"$W/rows"
        echo "$side window_p50 $(echo "$w" | cut -f2 | python3 -c 'import json,sys; print(json.load(sys.stdin)["lat_p50_us"])')" >>"$W/rows"
        set -- $(serve_cpu "$b")
        echo "$side serve_append $1" >>"$W/rows"
        echo "$side serve_context $2" >>"$W/rows"
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$W/rows" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    side, what, v = line.split()
    rows.setdefault(what, {}).setdefault(side, []).append(float(v))
names = {"append": "append, µs CPU each", "window_cpu": "window context, µs CPU each",
         "window_p50": "window context, p50 wall µs", "serve_append": "serve append, µs server CPU each",
         "serve_context": "serve context, µs server CPU each"}
print("| figure | before | after | after/before |\n| --- | --- | --- | --- |")
for what, label in names.items():
    b, a = rows[what]["before"], rows[what]["after"]
    mb, ma = statistics.median(b), statistics.median(a)
    print(f"| {label} | {mb:.1f} [{min(b):.1f}-{max(b):.1f}] | {ma:.1f} [{min(a):.1f}-{max(a):.1f}] | {ma / mb:.2f} |")
EOF
