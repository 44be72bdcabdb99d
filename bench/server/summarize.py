#!/usr/bin/env python3
"""summarize.py — medians (min-max) of bench/server/results/{wrk,redis}.txt as a Markdown table."""
import re, statistics, sys
from collections import defaultdict

out = sys.argv[1] if len(sys.argv) > 1 else "results"


def ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


rows = defaultdict(lambda: defaultdict(list))
cur = None
for line in open(f"{out}/wrk.txt"):
    m = re.match(r"run=\d+ workload=(\w+) conns=(\d+)", line)
    if m:
        cur = (m.group(1), int(m.group(2)))
        continue
    m = re.search(r"Requests/sec:\s+([\d.]+)", line)
    if m:
        rows[cur]["rps"].append(float(m.group(1)))
    m = re.match(r"\s+(50|99)%\s+([\d.]+)(us|ms|s)", line)
    if m:
        rows[cur]["p" + m.group(1)].append(ms(m.group(2), m.group(3)))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", line)
    if m:
        rows[cur]["non2xx"].append(int(m.group(1)))

red = defaultdict(list)
size = None
for line in open(f"{out}/redis.txt"):
    m = re.match(r"run=\d+ value_bytes=(\d+(?:-durable)?)", line)
    if m:
        size = m.group(1)
        continue
    m = re.match(r"(LPUSH|LRANGE_100).*?([\d.]+) requests per second", line)
    if m:
        red[(m.group(1), size)].append(float(m.group(2)))


def fmt(v, nd=0):
    if not v:
        return "-"
    med = statistics.median(v)
    f = f"{{:,.{nd}f}}"
    return f"{f.format(med)} [{f.format(min(v))}-{f.format(max(v))}]"


print("| workload | req/s | p50 ms | p99 ms | non-2xx |")
print("| --- | --- | --- | --- | --- |")
for w, c in sorted(rows, key=lambda k: (("append", "history", "context", "turn").index(k[0]), -k[1])):
    r = rows[(w, c)]
    print(f"| mnemo {w} ({c} conns) | {fmt(r.get('rps'))} | {fmt(r.get('p50'), 2)} | {fmt(r.get('p99'), 2)} | "
          f"{sum(r.get('non2xx', [])) if r.get('non2xx') else 0} |")
for (op, d), v in sorted(red.items()):
    print(f"| redis {op} {d} B | {fmt(v)} | | | |")
