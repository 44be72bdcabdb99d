#!/usr/bin/env python3
"""rawbody.py — requests whose bodies a normal client would never send, for `mnemo serve`'s
body limits (tests/cli/t1281-serve-bodies.sh). Talks to 127.0.0.x only; every wait is bounded.

  rawbody.py URL send PATH HEADER...      sends a POST with these extra header lines and the body
                                          from stdin; prints the reply's status line
  rawbody.py URL expect PATH LENGTH HEADER...
                                          headers with "Expect: 100-continue", Content-Length
                                          LENGTH and these, no body; prints the first status line
  rawbody.py URL trickle PATH SECONDS     declares a 10,000-byte body and sends a byte every
                                          0.25 s; prints "closed" once the server ends the
                                          connection, "open" if it has not after SECONDS
  rawbody.py URL hold PATH N LENGTH SENT READY
                                          opens N connections, each sends headers declaring
                                          LENGTH and SENT bytes of body, then creates the file
                                          READY and holds them until killed (or 300 s)
"""
import os, socket, sys, time, urllib.parse

url, mode, path = sys.argv[1:4]
args = sys.argv[4:]
u = urllib.parse.urlsplit(url)
if not (u.hostname or "").startswith("127."):
    sys.exit("rawbody.py: loopback targets only")


def connect():
    return socket.create_connection((u.hostname, u.port), timeout=60)


def head(length, extra=()):
    lines = ["POST %s HTTP/1.1" % path, "Host: 127.0.0.1", "Content-Type: application/json"]
    if length is not None:
        lines.append("Content-Length: %d" % length)
    return ("\r\n".join(lines + list(extra)) + "\r\n\r\n").encode()


def status_line(s):
    got = b""
    while b"\r\n" not in got:
        chunk = s.recv(4096)
        if not chunk:
            return "closed"
        got += chunk
    return got.split(b"\r\n")[0].decode()


if mode == "send":
    body = sys.stdin.buffer.read()
    s = connect()
    s.sendall(head(None, args) + body)
    print(status_line(s))
elif mode == "expect":
    s = connect()
    s.sendall(head(int(args[0]), ["Expect: 100-continue"] + args[1:]))
    print(status_line(s))
elif mode == "trickle":
    s = connect()
    s.sendall(head(10000))
    s.setblocking(False)
    end = time.monotonic() + float(args[0])
    state = "open"
    while time.monotonic() < end and state == "open":
        try:
            if s.recv(4096) == b"":
                state = "closed"
        except BlockingIOError:
            pass
        except OSError:
            state = "closed"
        if state == "open":
            try:
                s.send(b"x")
            except OSError:
                state = "closed"
            time.sleep(0.25)
    print(state)
elif mode == "hold":
    n, length, sent, ready = int(args[0]), int(args[1]), int(args[2]), args[3]
    socks = []
    for _ in range(n):
        s = connect()
        s.sendall(head(length) + b"x" * sent)
        socks.append(s)
    open(ready, "w").close()
    time.sleep(300)
else:
    sys.exit("rawbody.py: unknown mode %s" % mode)
