#!/usr/bin/env python3
# catchup_stall.py PORT N: one append of N messages to `mnemo serve` (MNEMO_EMBEDDER=hash), then the
# latency of POST /v1/sessions every 50 ms for 20 s while the embedder catches its index up.
# bench/server/README.md, "A slower machine": the index catch-up held the store lock (6f3dbf9).
# one batch of N messages, then the latency of session creations while the embedder catches up
import http.client, json, sys, time
port = int(sys.argv[1]); n = int(sys.argv[2])
def req(m, p, b=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request(m, p, body=json.dumps(b) if b is not None else None, headers={"Content-Type": "application/json"})
    r = c.getresponse(); d = r.read(); c.close(); return r.status, d
st, d = req("POST", "/v1/sessions", {})
sid = json.loads(d)["session"]["id"]
t = time.time()
st, _ = req("POST", f"/v1/sessions/{sid}/messages", {"messages": [{"role": "user", "content": f"message number {i} about topic{i%97}"} for i in range(n)]})
print("batch", st, round(time.time() - t, 2), "s")
lat = []
end = time.time() + 20
while time.time() < end:
    t = time.time(); req("POST", "/v1/sessions", {}); lat.append(time.time() - t)
    time.sleep(0.05)
lat.sort()
print("creates", len(lat), "p50 %.1f ms p99 %.1f ms max %.1f ms" % (lat[len(lat)//2]*1e3, lat[int(len(lat)*0.99)]*1e3, lat[-1]*1e3))
