#!/usr/bin/env python3
"""Summarise bench/vec/results/filter/filter.runN.txt (vecfilter_mnemo output): per selectivity and
mode, median QPS over runs (each run's figure is the median of its timed passes), min-max, recall,
and how the searches were answered.  usage: python3 bench/vec/summarize_filter.py bench/vec/results/filter"""
import collections, glob, os, re, statistics, sys

d = sys.argv[1] if len(sys.argv) > 1 else 'bench/vec/results/filter'
kv = lambda line: dict(re.findall(r'(\w+)=([^ ]+)', line.strip()))
rows = collections.defaultdict(list)
for p in sorted(glob.glob(os.path.join(d, '*.txt'))):
    for l in open(p):
        if l.startswith('filtered '):
            r = kv(l)
            rows[(r['selectivity'], r['mode'])].append(r)
print(f"## mnemo filtered search: runs={max((len(v) for v in rows.values()), default=0)} (k=10, ef=64)")
for (sel, mode), v in rows.items():
    q = [float(x['qps_median']) for x in v]
    r = v[0]
    print(f"  selectivity={sel} matching={r['matching']} mode={mode:<6} recall={statistics.median(float(x['recall']) for x in v):.4f} "
          f"qps={statistics.median(q):.0f} (min {min(q):.0f}, max {max(q):.0f}) exact_path={r['exact_path']}/{r['nq']} "
          f"fell_back={r['fell_back']} short={r['short']} mean_visited={r['mean_visited']}")
