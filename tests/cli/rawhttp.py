#!/usr/bin/env python3
"""rawhttp.py — raw sockets against a local `mnemo serve`, for what curl will not send or hold:
requests framed two ways (tests/cli/t1285-serve-framing.sh) and many connections at once
(tests/cli/t1286-serve-conn-limits.sh). Talks to 127.0.0.x and ::1 only; every wait is bounded.

  rawhttp.py URL raw            sends stdin as it is (CRLFs and all) on one connection; prints
                                the status code of every response read until the server closes
                                the connection (or 30 s pass), space-separated, then "closed"
                                or "open"
  rawhttp.py URL evict N        opens N idle connections (batch A), then N more (batch B), from
                                127.0.0.2-9; prints JSON: how many of each the server closed,
                                and the GET /healthz statuses on batch B's connections
  rawhttp.py URL flood N SECS   keeps N idle connections from 127.0.0.2-9 for SECS seconds,
                                opening another whenever the server closes one; meanwhile
                                127.0.0.1 asks GET /healthz and GET /v1/sessions on new
                                connections, and /metrics for mnemo_http_connections; prints
                                JSON: the probes' statuses, the reconnects, the most connections
                                /metrics reported
  rawhttp.py URL prefix N PATH  opens N connections from each of 127.0.0.2-9 and 127.0.1.2, then
                                sends GET PATH on each; prints JSON: how many got each status
  rawhttp.py URL bodies N PATH FILE
                                N connections at once each POST FILE's bytes (JSON) to PATH,
                                asking first (Expect: 100-continue), again after a 503 until
                                another answer; prints JSON: how many got each final status,
                                and how many 503s came
"""
import json, os, socket, sys, threading, time, urllib.parse

url, mode = sys.argv[1:3]
args = sys.argv[3:]
u = urllib.parse.urlsplit(url)
if not ((u.hostname or "").startswith("127.") or u.hostname in ("::1", "localhost")):
    sys.exit("rawhttp.py: loopback targets only")
SOURCES = ["127.0.0.%d" % i for i in range(2, 10)]


def connect(source=None, timeout=30):
    s = socket.create_connection((u.hostname, u.port), timeout=timeout,
                                 source_address=(source, 0) if source else None)
    return s


def statuses(data):
    """The status codes of the responses in data, read one after another by their framing
    (Content-Length or chunked; the answers of this server have one or the other)."""
    out = []
    while data.startswith(b"HTTP/1."):
        end = data.find(b"\r\n\r\n")
        if end < 0:
            out.append(data[9:12].decode())
            break
        head = data[:end].split(b"\r\n")
        out.append(head[0][9:12].decode())
        data = data[end + 4:]
        fields = {}
        for line in head[1:]:
            k, _, v = line.partition(b":")
            fields[k.strip().lower()] = v.strip().lower()
        if head[0][9:10] == b"1":  # an interim answer (100 Continue): no body
            continue
        if fields.get(b"transfer-encoding") == b"chunked":
            while True:
                nl = data.find(b"\r\n")
                if nl < 0:
                    return out
                size = int(data[:nl].split(b";")[0], 16)
                data = data[nl + 2 + size + 2:]
                if size == 0:
                    break
        else:
            data = data[int(fields.get(b"content-length", b"0")):]
    return out


def read_until_closed(s, limit):
    data, state = b"", "open"
    end = time.monotonic() + limit
    while time.monotonic() < end:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except OSError:
            state = "closed"
            break
        if not chunk:
            state = "closed"
            break
        data += chunk
    return data, state


def closed_by_server(s):
    """True when the server has closed s (EOF or reset), without waiting."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def ask(s, path, limit=30):
    """GET path on s (kept alive); the status, or "closed"."""
    try:
        s.settimeout(limit)
        s.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path.encode())
        got = b""
        while b"\r\n\r\n" not in got:
            chunk = s.recv(65536)
            if not chunk:
                return "closed"
            got += chunk
        st = statuses(got)
        return st[0] if st else "closed"
    except OSError:
        return "closed"


def probe(path, source="127.0.0.1", keep=None):
    """GET path on a new connection: the status ("refused": no connection); with keep, the
    response's body goes into keep[0]."""
    try:
        s = connect(source, timeout=20)
        s.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path.encode())
        data, _ = read_until_closed(s, 20)
        s.close()
        st = statuses(data)
        if keep is not None:
            keep[0] = data.partition(b"\r\n\r\n")[2]
        return st[0] if st else "closed"
    except OSError:
        return "refused"


def wait_all_closed(socks, limit):
    end = time.monotonic() + limit
    while time.monotonic() < end and not all(closed_by_server(s) for s in socks):
        time.sleep(0.05)
    return sum(1 for s in socks if closed_by_server(s))


if mode == "raw":
    s = connect()
    s.sendall(sys.stdin.buffer.read())
    data, state = read_until_closed(s, 30)
    print(" ".join(statuses(data) + [state]))
elif mode == "evict":
    n = int(args[0])
    a = [connect(SOURCES[i % len(SOURCES)]) for i in range(n)]
    b = [connect(SOURCES[i % len(SOURCES)]) for i in range(n)]
    a_closed = wait_all_closed(a, 60)
    b_closed = sum(1 for s in b if closed_by_server(s))
    b_status = [ask(s, "/healthz") for s in b]
    print(json.dumps({"a_closed": a_closed, "b_closed": b_closed,
                      "b_healthz": {k: b_status.count(k) for k in set(b_status)}}))
elif mode == "flood":
    n, secs = int(args[0]), float(args[1])
    socks = [None] * n
    stats = {"opened": 0, "reconnects": 0, "failed_connects": 0}

    def keep(i):
        try:
            socks[i] = connect(SOURCES[i % len(SOURCES)], timeout=5)
            stats["opened"] += 1
        except OSError:
            socks[i] = None
            stats["failed_connects"] += 1

    for i in range(n):
        keep(i)
    # The prober is a process of its own: in a thread it would wait for the interpreter's lock
    # between its connect and its request while this loop reconnects, and a connection that
    # sends nothing for 64 of the flood's connects is rightly the oldest idle one.
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        for s in socks:  # the flood's sockets are the parent's
            if s:
                s.close()
        probes, most = [], 0
        end_probe = time.monotonic() + secs
        while time.monotonic() < end_probe:
            probes.append(("healthz", probe("/healthz")))
            probes.append(("sessions", probe("/v1/sessions")))
            body = [b""]
            if probe("/metrics", keep=body) == "200":
                for line in body[0].decode().splitlines():
                    if line.startswith("mnemo_http_connections "):
                        most = max(most, int(float(line.split()[1])))
            time.sleep(0.1)
        os.write(wfd, json.dumps({"probes": probes, "most": most}).encode())
        os._exit(0)
    os.close(wfd)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for i in range(n):
            if socks[i] is None or closed_by_server(socks[i]):
                if socks[i] is not None:
                    socks[i].close()
                    stats["reconnects"] += 1
                keep(i)
        time.sleep(0.02)
    got = b""
    while True:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        got += chunk
    os.close(rfd)
    os.waitpid(pid, 0)
    for s in socks:
        if s:
            s.close()
    child = json.loads(got)
    out = {}
    for kind, st in child["probes"]:
        out.setdefault(kind, {}).setdefault(st, 0)
        out[kind][st] += 1
    stats["probes"] = out
    stats["most_connections"] = child["most"]
    print(json.dumps(stats))
elif mode == "prefix":
    n, path = int(args[0]), args[1]
    socks = []
    for src in SOURCES + ["127.0.1.2"]:
        for _ in range(n):
            try:
                socks.append(connect(src))
            except OSError:
                pass
    got = [ask(s, path) for s in socks]
    print(json.dumps({k: got.count(k) for k in sorted(set(got))}))
elif mode == "bodies":
    n, path, body = int(args[0]), args[1], open(args[2], "rb").read()
    head = (b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n" % (path.encode(), len(body)))
    final, retried = [], [0]
    go = threading.Barrier(n)

    def post():
        """Asks first (Expect: 100-continue): a 503 comes before the body is sent."""
        go.wait()
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                s = connect()
                s.sendall(head)
                got = b""
                while b"\r\n\r\n" not in got:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    got += chunk
                if got.startswith(b"HTTP/1.1 100"):
                    s.sendall(body)
                    data, _ = read_until_closed(s, 60)
                    got = got[got.index(b"\r\n\r\n") + 4:] + data
                s.close()
                st = statuses(got)
                st = st[0] if st else "closed"
            except OSError:
                st = "error"
            if st != "503":
                final.append(st)
                return
            retried[0] += 1
            time.sleep(0.05)
        final.append("gave up")

    threads = [threading.Thread(target=post) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"final": {k: final.count(k) for k in sorted(set(final))}, "retried": retried[0]}))
else:
    sys.exit("rawhttp.py: unknown mode %s" % mode)
