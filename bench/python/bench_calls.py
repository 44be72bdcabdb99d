#!/usr/bin/python3
"""What a Python call costs over the C call: microseconds per append and per context build, the
same work through the `mnemo` package (ctypes) and through C (c_calls.c), same machine, same kind
of database (a fresh SQLite file each, memory.durability=normal so that fsync does not hide the
call's own cost), same message text. Context builds run on the session the appends filled
(window strategy, budget 4096, openai format; the Python side parses the messages and the report
into dicts, as Memory.context always does).

    make                                            # build/libmnemo.so (release-like)
    /usr/bin/python3 bench/python/bench_calls.py    # [--append N] [--context N] [--runs R]

Builds c_calls with cc against build/libmnemo.so, runs each side R times alternately, prints
the median per call of each side and the difference. Figures: docs/python.md."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.environ.get("MNEMO_LIBRARY") or os.path.join(ROOT, "build", "libmnemo.so")
os.environ["MNEMO_LIBRARY"] = LIB
sys.path.insert(0, os.path.join(ROOT, "python"))
import mnemo  # noqa: E402

TEXT = "What did we decide about the parser in src/parse.c yesterday?"


def python_side(db, n_append, n_context):
    with mnemo.Memory(db, {"memory.durability": "normal"}) as mem:
        sid = mem.create_session()["id"]
        t0 = time.perf_counter()
        for i in range(n_append):
            mem.append(sid, "assistant" if i % 2 else "user", TEXT)
        t1 = time.perf_counter()
        for _ in range(n_context):
            mem.context(sid, max_tokens=4096)
        t2 = time.perf_counter()
    return {"append_us": (t1 - t0) / n_append * 1e6, "context_us": (t2 - t1) / n_context * 1e6}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", type=int, default=2000)
    ap.add_argument("--context", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mnemo-bench-py-")
    exe = os.path.join(tmp, "c_calls")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(ROOT, "bench", "python", "c_calls.c"),
                    "-I", os.path.join(ROOT, "include"), LIB, "-Wl,-rpath," + os.path.dirname(LIB)], check=True)
    c_runs, py_runs = [], []
    for r in range(a.runs):
        out = subprocess.run([exe, os.path.join(tmp, "c%d.db" % r), str(a.append), str(a.context)],
                             check=True, capture_output=True, text=True).stdout
        c_runs.append(json.loads(out))
        py_runs.append(python_side(os.path.join(tmp, "py%d.db" % r), a.append, a.context))
    print("library %s (%s), %d appends then %d contexts per run, median of %d runs" % (
        mnemo.version(), LIB, a.append, a.context, a.runs))
    print("%-8s %10s %10s %10s" % ("call", "C us", "Python us", "overhead"))
    for key, name in (("append_us", "append"), ("context_us", "context")):
        c = statistics.median(x[key] for x in c_runs)
        p = statistics.median(x[key] for x in py_runs)
        print("%-8s %10.1f %10.1f %+10.1f" % (name, c, p, p - c))


if __name__ == "__main__":
    main()
