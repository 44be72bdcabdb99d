#!/usr/bin/env python3
"""Medians (min-max) over runs of bench/results/storage_raw.txt, and the ratios to the peers.
usage: python3 bench/summarize_storage.py bench/results/storage_raw.txt [bench/results/storage_load.txt]"""
import collections
import json
import re
import statistics
import sys

raw = sys.argv[1]
app = collections.defaultdict(list)     # (impl, SYNC, per_txn, n) -> msgs/s
win = collections.defaultdict(list)     # (impl, rows) -> [(p50, p99, mean, returned, pass0_p50)]
build = collections.defaultdict(list)   # (impl, sessions, messages) -> [(rows/s, bytes/msg)]
byrun = {}                              # (impl, SYNC, per_txn, n, run) -> msgs/s
for line in open(raw):
    line = line.strip()
    if not line:
        continue
    run, rest = line.split(" ", 1)
    runno = int(run.split("=")[1])
    if rest.startswith("{"):
        j = json.loads(rest)
        if j["op"] == "append":
            app[("mnemo", j["sync"].upper(), j["per_txn"], j["n"])].append(j["msgs_per_s"])
            byrun[("mnemo", j["sync"].upper(), j["per_txn"], j["n"], runno)] = j["msgs_per_s"]
        elif j["op"] == "window":
            impl = "mnemo" if j["read"] == "context" else "mnemo-history"
            win[(impl, j["rows"])].append((j["lat_p50_us"], j["lat_p99_us"], j["lat_mean_us"],
                                           j["msgs_returned_avg"], j["pass0_p50_us"]))
        elif j["op"] == "build":
            build[("mnemo", j["sessions"], j["messages"])].append((j["rows_per_s"], j["bytes_per_msg"], j["seconds"]))
        continue
    kv = dict(re.findall(r"(\w+)=([^ ]+)", rest))
    if rest.startswith("store_append"):
        sync = kv["sync"].replace("(default)", "")
        app[(kv["impl"], sync, int(kv["per_txn"]), int(kv["n"]))].append(float(kv["msgs_per_s"]))
        byrun[(kv["impl"], sync, int(kv["per_txn"]), int(kv["n"]), runno)] = float(kv["msgs_per_s"])
    elif rest.startswith("store_recent") and kv["pass"] == "2":
        win[(kv["impl"], int(kv["rows"]))].append((float(kv["lat_p50_us"]), float(kv["lat_p99_us"]),
                                                   float(kv["lat_mean_us"]), float(kv["msgs_returned_avg"]), None))
    elif rest.startswith("store_recent") and kv["pass"] == "0":
        win[(kv["impl"] + "#pass0", int(kv["rows"]))].append(float(kv["lat_p50_us"]))
    elif rest.startswith("store_build"):
        build[("python", int(kv["sessions"]), int(kv["messages"]))].append(
            (float(kv["rows_per_s"]), float(kv["bytes_per_msg"]), float(kv["seconds"])))


def med(v, fmt="{:,.0f}"):
    if not v:
        return "-"
    m = statistics.median(v)
    return fmt.format(m) + (f" ({fmt.format(min(v))}-{fmt.format(max(v))})" if len(v) > 1 else " (1 run)")


def m(v):
    return statistics.median(v) if v else float("nan")


print("## Appends (messages/s; median of runs, min-max in brackets)\n")
print("| per txn | sync | n | Python seed | raw C sqlite3 | mnemo | mnemo / raw C (medians) | mnemo / raw C, each run | mnemo / Python |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for per, sync, n in sorted({(k[2], k[1], k[3]) for k in app}, key=lambda x: (x[0], x[1])):
    p, c, mn = app.get(("python", sync, per, n), []), app.get(("c", sync, per, n), []), app.get(("mnemo", sync, per, n), [])
    runs = sorted({k[4] for k in byrun if k[1:4] == (sync, per, n)})
    each = ", ".join(f"{byrun[('mnemo', sync, per, n, r)] / byrun[('c', sync, per, n, r)]:.2f}" for r in runs
                     if ("mnemo", sync, per, n, r) in byrun and ("c", sync, per, n, r) in byrun) or "-"
    print(f"| {per} | {sync} | {n:,} | {med(p)} | {med(c)} | {med(mn)} | "
          f"{m(mn) / m(c):.2f} | {each} | {m(mn) / m(p):.2f} |")
print(f"\nruns per row: {', '.join(f'{k[0]}/{k[1]}/{k[2]}={len(v)}' for k, v in sorted(app.items()))}\n")

print("## Window / get-recent latency, 2,000 calls on random sessions, max_tokens 4,096, warm pass (µs)\n")
print("| rows | implementation | p50 | p99 | mean | msgs returned | cold-pass p50 |")
print("| --- | --- | --- | --- | --- | --- | --- |")
names = {"mnemo": "mnemo mn_context_build (window, openai)", "mnemo-history": "mnemo mn_history (newest 100, read only)",
         "c": "raw C sqlite3 (seed query, stops at budget)", "python": "Python seed get_recent_messages"}
for rows in sorted({k[1] for k in win}):
    for impl in ("mnemo", "mnemo-history", "c", "python"):
        v = win.get((impl, rows))
        if not v:
            continue
        p0 = [x[4] for x in v if x[4] is not None] or win.get((impl + "#pass0", rows), [])
        print(f"| {rows:,} | {names[impl]} | {med([x[0] for x in v])} | {med([x[1] for x in v])} | "
              f"{med([x[2] for x in v])} | {m([x[3] for x in v]):.1f} | {med(p0)} |")
print("\nlatency ratios (p50; < 1 means mnemo is faster):")
for rows in sorted({k[1] for k in win}):
    a, c, p = win.get(("mnemo", rows)), win.get(("c", rows)), win.get(("python", rows))
    if a and c and p:
        a50 = m([x[0] for x in a])
        print(f"  {rows:>9,} rows: mnemo / raw C = {a50 / m([x[0] for x in c]):.2f}, "
              f"mnemo / Python = {a50 / m([x[0] for x in p]):.2f}")

print("\n## Builds (S sessions x M messages, interleaved rounds) and bytes on disk\n")
print("| implementation | sessions x messages | rows/s | seconds | bytes per message (after checkpoint) |")
print("| --- | --- | --- | --- | --- |")
for k in sorted(build, key=lambda k: (k[1], k[0])):
    v = build[k]
    how = "one mn_append each, sync normal" if k[0] == "mnemo" else "1,000 per txn, sync NORMAL"
    print(f"| {k[0]} ({how}) | {k[1]:,} x {k[2]:,} | {med([x[0] for x in v])} | {med([x[2] for x in v], '{:,.1f}')} | "
          f"{med([x[1] for x in v], '{:,.1f}')} |")

if len(sys.argv) > 2:
    print("\n## Load notes\n")
    for line in open(sys.argv[2]):
        print("    " + line.rstrip())
