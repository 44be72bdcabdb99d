#!/usr/bin/env python3
"""slowloris.py — a bounded slowloris against a local `mnemo serve`, with /healthz probes.

Opens SOCKETS connections from SOURCE (a loopback address: 127.0.0.2 stands for another
client than the prober's 127.0.0.1), each sending a request's headers one byte every INTERVAL
seconds and never finishing them; with --reconnect a socket the server closes is opened again.
Meanwhile a prober asks GET /healthz from 127.0.0.1 every 0.1 s on a new connection. Stops by
itself after DURATION seconds and prints one JSON object: sockets opened, refused or closed by
the server, and the probes' outcome and latency (ms). Talks to 127.0.0.x only.

  python3 tests/cli/slowloris.py --url http://127.0.0.1:8765 --sockets 2000 --duration 30
"""
import argparse, json, selectors, socket, sys, threading, time, urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True)
ap.add_argument("--sockets", type=int, default=100)
ap.add_argument("--source", default="127.0.0.2")
ap.add_argument("--interval", type=float, default=2.0)
ap.add_argument("--duration", type=float, default=10.0)
ap.add_argument("--reconnect", action="store_true")
ap.add_argument("--until-closed", action="store_true", help="stop early once the server closed every socket")
a = ap.parse_args()
u = urllib.parse.urlsplit(a.url)
if not (u.hostname or "").startswith("127."):
    sys.exit("slowloris.py: loopback targets only")
HEAD = b"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000

stats = {"opened": 0, "refused": 0, "closed_by_server": 0}
probes = []
stop = threading.Event()


def open_one():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.bind((a.source, 0))
        s.connect((u.hostname, u.port))
        s.setblocking(False)
        stats["opened"] += 1
        return [s, 0]
    except OSError:
        stats["refused"] += 1
        s.close()
        return None


def prober():
    while not stop.is_set():
        t0 = time.monotonic()
        ok = False
        try:
            s = socket.create_connection((u.hostname, u.port), timeout=5, source_address=("127.0.0.1", 0))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            ok = s.recv(64).startswith(b"HTTP/1.1 200")
            s.close()
        except OSError:
            pass
        probes.append((ok, (time.monotonic() - t0) * 1000))
        stop.wait(0.1)


conns = [c for c in (open_one() for _ in range(a.sockets)) if c]
th = threading.Thread(target=prober, daemon=True)  # never outlives a failed run
th.start()
end = time.monotonic() + a.duration
next_byte = time.monotonic()
while time.monotonic() < end:
    live = [c for c in conns if c[0]]
    if a.until_closed and not live:
        break
    # a socket the server closed reads as readable with b"" (or an error); epoll: no fd limit
    sel = selectors.DefaultSelector()
    for c in live:
        sel.register(c[0], selectors.EVENT_READ)
    r = {k.fileobj for k, _ in sel.select(0.05)} if live else set()
    sel.close()
    for c in live:
        if c[0] in r:
            try:
                data = c[0].recv(4096)
            except OSError:
                data = b""
            if not data or data.startswith(b"HTTP/"):
                stats["closed_by_server"] += 1
                c[0].close()
                c[0] = None
                if a.reconnect:
                    n = open_one()
                    if n:
                        c[0], c[1] = n
    if time.monotonic() >= next_byte:
        next_byte += a.interval
        for c in conns:
            if c[0]:
                try:
                    c[0].send(HEAD[c[1] % len(HEAD):c[1] % len(HEAD) + 1])
                    c[1] += 1
                except OSError:
                    pass
stop.set()
th.join()
for c in conns:
    if c[0]:
        c[0].close()
lat = sorted(ms for ok, ms in probes if ok)
pct = lambda p: round(lat[min(len(lat) - 1, int(p * len(lat)))], 1) if lat else None
stats["still_open"] = sum(1 for c in conns if c[0])
stats["healthz"] = {"probes": len(probes), "ok": len(lat), "failed": len(probes) - len(lat),
                    "p50_ms": pct(0.5), "p99_ms": pct(0.99), "max_ms": round(lat[-1], 1) if lat else None}
print(json.dumps(stats))
