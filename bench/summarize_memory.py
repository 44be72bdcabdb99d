#!/usr/bin/env python3
"""bench/summarize_memory.py RESULTS_DIR — the Markdown tables of bench/README.md "Long-term memory"
from bench/results/memory_{recall,latency,append}.txt (medians over runs where there are several)."""
import json
import statistics
import sys
from collections import defaultdict


def lines(path):
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                yield json.loads(line)


def recall(d):
    print("| extractor | source | mode | query | current R@1 | current R@5 | current wrong@1 | as-of R@1 | as-of R@5 | as-of wrong@1 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = defaultdict(dict)
    keys = []
    for j in lines(f"{d}/memory_recall.txt"):
        if "question" not in j:
            continue
        k = (j["extractor"], j["source"], j["mode"], j["query"])
        if k not in rows:
            keys.append(k)
        rows[k][j["question"]] = j
    for k in keys:
        c, a = rows[k]["current"], rows[k]["as_of"]
        print("| " + " | ".join(k) + f" | {c['recall_at_1']:.2f} | {c['recall_at_5']:.2f} | {c['wrong_at_1']:.2f}"
              f" | {a['recall_at_1']:.2f} | {a['recall_at_5']:.2f} | {a['wrong_at_1']:.2f} |")
    print()
    print("Current value, R@1 per key (keyword mode):")
    print()
    print("| extractor | source | query | city | drink | deploy_key | editor |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for k in keys:
        if k[2] != "keyword":
            continue
        r = rows[k]
        print("| " + " | ".join((k[0], k[1], k[3])) + " | " +
              " | ".join(f"{r['current:' + n]['recall_at_1']:.2f}" for n in ("city", "drink", "deploy_key", "editor")) + " |")


def med(xs):
    return statistics.median(xs), min(xs), max(xs)


def latency(d):
    by = defaultdict(lambda: defaultdict(list))
    for j in lines(f"{d}/memory_latency.txt"):
        if "case" in j:
            by[j["case"]]["p50"].append(j["p50_ms"])
            by[j["case"]]["p99"].append(j["p99_ms"])
            by[j["case"]]["hits"].append(j["hits_avg"])
        elif j.get("op") == "memory_build":
            print(f"build: {j['memories']:,} memories in {j['seconds']:.1f} s ({j['adds_per_s']:,.0f} mn_memory_add/s)\n")
    print("| case | p50 ms (median, min-max) | p99 ms (median, min-max) | hits | runs |")
    print("| --- | --- | --- | --- | --- |")
    for c, v in by.items():
        p50, p99 = med(v["p50"]), med(v["p99"])
        print(f"| {c} | {p50[0]:.2f} ({p50[1]:.2f}-{p50[2]:.2f}) | {p99[0]:.1f} ({p99[1]:.1f}-{p99[2]:.1f}) | "
              f"{statistics.median(v['hits']):.1f} | {len(v['p50'])} |")


def append(d):
    by = defaultdict(lambda: defaultdict(list))
    for j in lines(f"{d}/memory_append.txt"):
        for f in ("msgs_per_s", "lat_p50_us", "lat_p99_us", "lat_mean_us", "catch_up_s", "memories", "facts"):
            by[j["extract"]][f].append(j[f])
    print("| memory.extract | appends/s | p50 µs | p99 µs | mean µs | catch-up s | memories / facts | runs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for x, v in by.items():
        m = {f: med(v[f]) for f in v}
        cu = "-" if x == "off" else f"{m['catch_up_s'][0]:.2f} ({m['catch_up_s'][1]:.2f}-{m['catch_up_s'][2]:.2f})"
        print(f"| {x} | {m['msgs_per_s'][0]:,.0f} ({m['msgs_per_s'][1]:,.0f}-{m['msgs_per_s'][2]:,.0f}) | "
              f"{m['lat_p50_us'][0]:.0f} ({m['lat_p50_us'][1]:.0f}-{m['lat_p50_us'][2]:.0f}) | "
              f"{m['lat_p99_us'][0]:,.0f} ({m['lat_p99_us'][1]:,.0f}-{m['lat_p99_us'][2]:,.0f}) | "
              f"{m['lat_mean_us'][0]:.0f} | {cu} | {min(v['memories'])}-{max(v['memories'])} / {v['facts'][0]} | {len(v['msgs_per_s'])} |")


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
    recall(d)
    print()
    latency(d)
    print()
    append(d)
