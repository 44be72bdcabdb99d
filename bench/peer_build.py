#!/usr/bin/env python3
"""peer_build.py - builds the seed-design Python store (shared/bench/storage/baseline_store.py) with
S sessions x M messages, exactly like `bench_store.py build` (which is fixed at 1,000 x 1,000):
M rounds, each giving every session one message in a shuffled order, 1,000 messages per
transaction, synchronous NORMAL, sessions "sess-0000".., same TextGen (seed 7) and shuffle (seed 11).

usage: python3 bench/peer_build.py PEERDIR DB SESSIONS MESSAGES
  PEERDIR = the folder holding bench_store.py and baseline_store.py (shared/bench/storage)
Prints one key=value line like bench_store.py (plus bytes_per_msg).
"""
import os
import random
import sys
import time

peer, db, S, M = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, peer)
from baseline_store import SQLiteStore  # noqa: E402
from bench_store import TextGen, ensure_sessions  # noqa: E402

for suf in ("", "-wal", "-shm"):
    if os.path.exists(db + suf):
        os.remove(db + suf)
st = SQLiteStore(db, synchronous="NORMAL")
gen, r = TextGen(), random.Random(11)
sids = [f"sess-{i:04d}" for i in range(S)]
ensure_sessions(st, sids)
t, n = time.perf_counter(), 0
for rnd in range(M):
    order = sids[:]
    r.shuffle(order)
    role = "user" if rnd % 2 == 0 else "assistant"
    for s in order:
        st.save_message(s, role, gen.content(role), autocommit=False)
        n += 1
        if n % 1000 == 0:
            st.commit()
st.commit()
dt = time.perf_counter() - t
st.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
st.close()
size = os.path.getsize(db)
print(f"store_build impl=python sessions={S} messages={M} rows={n} seconds={dt:.2f} rows_per_s={n / dt:.0f} "
      f"db_bytes={size} bytes_per_msg={size / n:.1f}")
