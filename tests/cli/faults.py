#!/usr/bin/env python3
"""faults.py — the fault suite of several `mnemo serve` nodes on one PostgreSQL database: runs
one scenario (client threads append while a fault is injected), records every append with its
outcome, then checks the history read back through every node. Standard library only; the
database is reached through psql. Used by tests/cli/t1550-nodes-faults.sh (a few seconds a
scenario) and bench/faults/run.sh (long runs); docs/scale-out.md has the table it makes.

  faults.py SCENARIO --mnemo BIN --base URL --pgdir DIR --work DIR [--seconds S] [--long]

SCENARIO: terminate (pg_terminate_backend of a node's connections), commit-lost (the answer to a
COMMIT lost with its connection), sigstop (a node paused while it holds session locks), busy
(another client holds a session's lock past the busy wait), sigkill, sigterm (a node killed or
stopped, then started again), pg-fast, pg-immediate (PostgreSQL restarted). --base is the URL
of a throwaway server (tests/pg/pgctl.sh start prints it; each scenario leaves a database there),
--pgdir its pgctl directory (the pg-* scenarios restart it). Without --long a scenario injects
its fault once or for --seconds; with --long it repeats it for --seconds. Prints one JSON object:

  sent, acknowledged      appends sent once each (a keyed client retries one on the other
                          node until it is acknowledged), and those answered 201
  lost                    acknowledged but not stored
  duplicated              extra copies of a message stored more than once
  gaps                    seq numbers missing from a session's 1..n
  order_violations        a message stored before (lower seq) one acknowledged before it was sent
  diverged                sessions whose history reads differently through another node
  ack_mismatch            a 201 that names another message than the one stored
  error_but_stored        answered with an HTTP error, yet stored (the answer must be the outcome)
  indeterminate           no answer (the node died or the connection broke): either outcome is
                          correct, and a keyed client retried it
  statuses                every answer by status (and error code), "conn" for no answer
  recovery_ms             per fault: from its end to the next acknowledged append; the longest
  max_latency_ms          the slowest acknowledged append
plus the scenario's own observations (see each scenario below).
"""
import argparse, bisect, http.client, json, os, random, signal, subprocess, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("scenario")
ap.add_argument("--mnemo", required=True)
ap.add_argument("--base", required=True)
ap.add_argument("--pgdir", required=True)
ap.add_argument("--work", required=True)
ap.add_argument("--seconds", type=float, default=4)
ap.add_argument("--long", action="store_true")
args = ap.parse_args()
WORK = os.path.abspath(args.work)
os.makedirs(WORK, exist_ok=True)
PGCTL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg", "pgctl.sh")


def log(msg):
    print("faults: %s" % msg, file=sys.stderr, flush=True)


# ---- the database --------------------------------------------------------------------------------

def db_url(name, app=None):
    """The base URL with its database replaced by name (and an application_name: pg_stat_activity
    tells one node's connections from the other's)."""
    head, _, query = args.base.partition("?")
    url = head.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else "")
    if app:
        url += ("&" if "?" in url else "?") + "application_name=" + app
    return url


def psql(url, sql, timeout=60):
    """Rows of sql (columns split on |); raises on failure."""
    r = subprocess.run(["psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", url, "-c", sql], capture_output=True,
                       text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if r.returncode:
        raise RuntimeError("psql: %s" % r.stderr.strip())
    return [l.split("|") for l in r.stdout.splitlines() if l]


def pgctl(*a):
    subprocess.run(["sh", PGCTL] + list(a), check=True, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def pg_stop_immediate():
    """pg_ctl stop -m immediate (pgctl.sh halts with a fast shutdown only): a crash, for the
    database; its restart runs recovery, which first syncs the data directory: with syncfs in one
    call instead of file by file (seconds, on a loaded machine)."""
    psql(ADMIN, "ALTER SYSTEM SET recovery_init_sync_method = syncfs")
    bindir = sorted(d for d in os.listdir("/usr/lib/postgresql"))[-1]
    cmd = ["/usr/lib/postgresql/%s/bin/pg_ctl" % bindir, "-D", os.path.join(args.pgdir, "data"), "-m", "immediate",
           "-w", "stop"]
    if os.getuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    subprocess.run(cmd, check=True, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


# ---- nodes ---------------------------------------------------------------------------------------

NODES = []  # every node started, stopped at the end whatever happens


class Node:
    """A `mnemo serve` on the scenario's database, started as tests/cli/serve.sh's node_start
    does: --listen 127.0.0.1:0, the URL is the first line it prints."""

    def __init__(self, name, env=None):
        self.name, self.env, self.proc, self.url, self.exits = name, env or {}, None, None, []
        NODES.append(self)

    def start(self):
        out = os.path.join(WORK, "node-%s.out" % self.name)
        env = dict(os.environ, **self.env)
        # a SIGKILLed node's leak scan is moot, and a node paused mid-transaction is one too
        env["ASAN_OPTIONS"] = "detect_leaks=0"
        with open(out, "w") as o, open(os.path.join(WORK, "node-%s.err" % self.name), "a") as e:
            self.proc = subprocess.Popen([args.mnemo, "--db", db_url(DBNAME, "mnemo-" + self.name), "serve", "--listen",
                                          "127.0.0.1:0"], stdout=o, stderr=e, stdin=subprocess.DEVNULL, env=env)
        give_up = time.time() + 120
        while time.time() < give_up and self.proc.poll() is None:
            with open(out) as f:
                line = f.readline()
            if line.endswith("\n"):
                self.url = line.strip()
                return
            time.sleep(0.05)
        raise RuntimeError("node %s did not print its URL" % self.name)

    def send(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM):
        """Stops it and waits; the exit status is kept (SIGTERM must give 0)."""
        if self.proc and self.proc.poll() is None:
            if sig == signal.SIGTERM:
                self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(sig)
        if self.proc:
            self.exits.append((sig, self.proc.wait(timeout=300)))


# ---- HTTP ----------------------------------------------------------------------------------------

def call(conn_box, url, method, path, body=None, headers=None, timeout=120):
    """(status, parsed JSON or None); status "refused" (not sent) or "conn" (sent, no answer)."""
    host = url.split("//", 1)[1]
    if conn_box[0] is None or conn_box[1] != host:
        h, p = host.rsplit(":", 1)
        conn_box[:] = [http.client.HTTPConnection(h, int(p), timeout=timeout), host]
    c = conn_box[0]
    data = json.dumps(body).encode() if body is not None else None
    hdr = dict(headers or {})
    if data is not None:
        hdr["Content-Type"] = "application/json"
    sent = False
    try:
        c.connect() if c.sock is None else None
        sent = True
        c.request(method, path, body=data, headers=hdr)
        r = c.getresponse()
        raw = r.read()
        try:
            return r.status, json.loads(raw) if raw else None
        except ValueError:
            return r.status, None
    except (OSError, http.client.HTTPException):
        c.close()
        conn_box[0] = None
        return ("conn" if sent else "refused"), None


def get_all(url, session):
    """Every message of a session (the inactive ones too), through url, oldest first."""
    box, out, after = [None, None], [], 0
    while True:
        st, j = call(box, url, "GET", "/v1/sessions/%s/messages?all=true&limit=10000&after=%d" % (session, after))
        if st != 200:
            raise RuntimeError("history of %s through %s: %s %s" % (session, url, st, j))
        out += [(m["seq"], m["id"], m["content"]) for m in j["messages"]]
        if not j.get("has_more"):
            return out
        after = j["next_after"]


# ---- the load ------------------------------------------------------------------------------------

class Client(threading.Thread):
    """Appends unique messages to one session, one at a time, through its nodes (the first one
    first). keyed: each carries an idempotency key and is retried on the next node until it is
    acknowledged (or the run ends); else it is sent once whatever the answer."""

    def __init__(self, run, i, session, nodes, keyed):
        super().__init__(daemon=True)
        self.run_, self.i, self.session, self.nodes, self.keyed = run, i, session, nodes, keyed

    def run(self):
        boxes = {}
        k = 0
        while not self.run_.stop.is_set():
            k += 1
            rec = {"client": self.i, "session": self.session, "content": "c%d n%d" % (self.i, k),
                   "key": "c%d-%d-%s" % (self.i, k, DBNAME) if self.keyed else None, "answers": []}
            with self.run_.lock:
                self.run_.records.append(rec)
            n = 0
            while True:
                node = self.nodes[n % len(self.nodes)]
                url = node.url
                t0 = time.time()
                st, j = call(boxes.setdefault(url, [None, None]), url, "POST",
                             "/v1/sessions/%s/messages" % self.session, {"role": "user", "content": rec["content"]},
                             {"Idempotency-Key": rec["key"]} if rec["key"] else None)
                t1 = time.time()
                code = (j or {}).get("error", {}).get("code") if isinstance(j, dict) else None
                rec["answers"].append({"node": node.name, "t_send": t0, "t_recv": t1, "status": st, "code": code})
                if st == 201:
                    m = j["messages"][0]
                    rec["ack"] = {"seq": m["seq"], "id": m["id"], "t_recv": t1}
                    break
                if not self.keyed or self.run_.stop.is_set():
                    time.sleep(0.05)
                    break
                n += 1
                time.sleep(0.05)


class Run:
    def __init__(self):
        self.records, self.lock, self.stop = [], threading.Lock(), threading.Event()
        self.fault_ends, self.notes = [], {}

    def clients(self, spec):
        """spec: (session, [nodes], keyed, count) tuples."""
        self.threads = []
        for session, nodes, keyed, count in spec:
            for _ in range(count):
                self.threads.append(Client(self, len(self.threads) + 1, session, nodes, keyed))
        for t in self.threads:
            t.start()

    def acked(self, since=0.0, session=None, node=None):
        with self.lock:
            return sum(1 for r in self.records if "ack" in r and r["ack"]["t_recv"] >= since and
                       (session is None or r["session"] == session) and
                       (node is None or r["answers"][-1]["node"] == node))

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=300)


def wait_for(what, cond, limit=120):
    give_up = time.time() + limit
    while not cond():
        if time.time() > give_up:
            raise RuntimeError("gave up after %d s waiting for %s" % (limit, what))
        time.sleep(0.02)


# ---- the checker ---------------------------------------------------------------------------------

def check(run, nodes, sessions):
    views = {n.name: {s: get_all(n.url, s) for s in sessions} for n in nodes}
    first = views[nodes[0].name]
    rep = {"diverged": sum(1 for s in sessions for n in nodes if views[n.name][s] != first[s])}
    stored = {}  # content -> [(session, seq, id)]
    gaps = 0
    for s in sessions:
        seqs = sorted(seq for seq, _, _ in first[s])
        gaps += (seqs[-1] - len(set(seqs))) if seqs else 0
        for seq, mid, content in first[s]:
            stored.setdefault(content, []).append((s, seq, mid))
    rep["gaps"] = gaps
    recs = run.records
    known = set(r["content"] for r in recs)
    rep["phantoms"] = sum(len(v) for c, v in stored.items() if c not in known)
    rep["sent"] = len(recs)
    rep["acknowledged"] = sum(1 for r in recs if "ack" in r)
    rep["lost"] = sum(1 for r in recs if "ack" in r and not stored.get(r["content"]))
    rep["duplicated"] = sum(max(0, len(stored.get(r["content"], [])) - 1) for r in recs)
    rep["ack_mismatch"] = sum(1 for r in recs if "ack" in r and len(stored.get(r["content"], [])) == 1 and
                              stored[r["content"]][0][1:] != (r["ack"]["seq"], r["ack"]["id"]))
    # the last answer is the outcome the client was left with
    rep["error_but_stored"] = sum(1 for r in recs if "ack" not in r and r["answers"] and
                                  isinstance(r["answers"][-1]["status"], int) and stored.get(r["content"]))
    rep["indeterminate"] = sum(1 for r in recs if "ack" not in r and r["answers"] and
                               r["answers"][-1]["status"] == "conn")
    statuses = {}
    for r in recs:
        for a in r["answers"]:
            k = str(a["status"]) + ("/" + a["code"] if a.get("code") else "")
            statuses[k] = statuses.get(k, 0) + 1
    rep["statuses"] = statuses
    # real-time order: an append acknowledged before another was sent has the lower seq
    violations = 0
    for s in sessions:
        seq_of = {c: v[0][1] for c, v in stored.items() if v[0][0] == s}
        acks = sorted((r["ack"]["t_recv"], seq_of[r["content"]]) for r in recs
                      if r["session"] == s and "ack" in r and r["content"] in seq_of)
        sends = sorted((r["answers"][0]["t_send"], seq_of[r["content"]]) for r in recs
                       if r["session"] == s and r["answers"] and r["content"] in seq_of)
        top, i = 0, 0
        for t_send, seq in sends:
            while i < len(acks) and acks[i][0] < t_send:
                top = max(top, acks[i][1])
                i += 1
            violations += top > seq
    rep["order_violations"] = violations
    ack_times = sorted(r["ack"]["t_recv"] for r in recs if "ack" in r)
    waits = []
    for end in run.fault_ends:
        i = bisect.bisect_left(ack_times, end)
        waits.append(round((ack_times[i] - end) * 1000) if i < len(ack_times) else None)
    rep["recovery_ms"] = max(waits) if waits and None not in waits else None
    lat = [r["ack"]["t_recv"] - r["answers"][0]["t_send"] for r in recs if "ack" in r]
    rep["max_latency_ms"] = round(max(lat) * 1000) if lat else None
    return rep


# ---- scenarios -----------------------------------------------------------------------------------

def new_session(node):
    st, j = call([None, None], node.url, "POST", "/v1/sessions", {"title": "faults"})
    if st != 201:
        raise RuntimeError("session create: %s %s" % (st, j))
    return j["session"]["id"]


def sleep_until(t):
    while time.time() < t:
        time.sleep(0.01)


def terminate(run):
    """The issue's first case: one node, one session, 8 clients without keys; the node's database
    connections are closed (pg_terminate_backend) every 30-100 ms (--long: 200-600 ms)."""
    a = Node("a")
    a.start()
    s = new_session(a)
    run.clients([(s, [a], False, 8)])
    wait_for("a first acknowledged append", lambda: run.acked() > 0)
    end = time.time() + args.seconds
    kills = 0
    lo, hi = (0.2, 0.6) if args.long else (0.03, 0.1)
    while time.time() < end:
        kills += int(psql(ADMIN, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                 " WHERE application_name = 'mnemo-a'")[0][0])
        time.sleep(random.uniform(lo, hi))
    run.fault_ends.append(time.time())
    wait_for("an acknowledged append after the kills", lambda: run.acked(since=run.fault_ends[-1]) > 0)
    run.notes["backends_terminated"] = kills
    return [a], [s]


def commit_lost(run):
    """A commit whose answer is lost: with synchronous_standby_names naming a standby that never
    comes, a COMMIT is durable locally and then waits; terminating its server process then drops
    the connection before the answer. The node must find out that it committed and answer 201,
    once (--long: every 2 s)."""
    a = Node("a")
    a.start()
    s = new_session(a)
    run.clients([(s, [a], False, 4)])
    end = time.time() + args.seconds
    lost = 0
    while True:
        since = time.time()
        wait_for("appends through node a", lambda: run.acked(since=since) > 2)
        psql(ADMIN, "ALTER SYSTEM SET synchronous_standby_names = 'mnemo_nobody'")
        psql(ADMIN, "SELECT pg_reload_conf()")
        waiting = "FROM pg_stat_activity WHERE application_name = 'mnemo-a' AND wait_event = 'SyncRep'"
        wait_for("a commit waiting for the standby", lambda: int(psql(ADMIN, "SELECT count(*) " + waiting)[0][0]) > 0)
        lost += int(psql(ADMIN, "SELECT count(pg_terminate_backend(pid)) " + waiting)[0][0])
        psql(ADMIN, "ALTER SYSTEM RESET synchronous_standby_names")
        psql(ADMIN, "SELECT pg_reload_conf()")
        run.fault_ends.append(time.time())
        if not args.long or time.time() + 2 > end:
            break
        sleep_until(run.fault_ends[-1] + 2)
    wait_for("appends after the lost answers", lambda: run.acked(since=run.fault_ends[-1]) > 0)
    run.notes["answers_lost"] = lost
    return [a], [s]


HELD = ("SELECT s.id FROM pg_stat_activity a JOIN sessions s ON s.xmax = a.backend_xid"
        " WHERE a.application_name = 'mnemo-a' AND a.state = 'idle in transaction'")


def pause_holding(a):
    """SIGSTOPs node a at a moment its open transaction holds session row locks (it is resumed
    and stopped again until that is so); returns the sessions it holds."""
    give_up = time.time() + 120
    while time.time() < give_up:
        a.send(signal.SIGSTOP)
        held = [r[0] for r in psql(DB, HELD)]
        if held:
            return held
        a.send(signal.SIGCONT)
        time.sleep(random.uniform(0, 0.02))
    raise RuntimeError("node a was never caught holding a session lock")


def sigstop(run):
    """The issue's second case: node a paused while it holds session locks. Through node b,
    appends go on to those sessions and to others; each must be acknowledged (a's transaction is
    ended by postgres.idle_in_transaction_timeout_ms, within memory.busy_timeout_ms). The pause
    lasts until b has answered an append sent after it to every held session (--long: 30 s,
    every 40 s)."""
    a, b = Node("a"), Node("b")
    a.start()
    b.start()
    sessions = [new_session(a) for _ in range(6)]
    run.clients([(s, [a], False, 2) for s in sessions[:4]] + [(s, [b], False, 1) for s in sessions])
    wait_for("appends through both nodes", lambda: run.acked(node="a") > 0 and run.acked(node="b") > 0)
    b_errors, held_all, end = 0, set(), time.time() + args.seconds
    while True:
        held = pause_holding(a)
        t_stop = time.time()
        held_all.update(held)

        def answered_all():
            with run.lock:
                return all(any(r["session"] == s and x["node"] == "b" and x["t_send"] > t_stop for r in run.records
                               for x in r["answers"]) for s in held)

        if args.long:
            sleep_until(t_stop + 30)
        else:
            wait_for("node b to answer appends to the sessions node a holds", answered_all)
        a.send(signal.SIGCONT)
        t_cont = time.time()
        run.fault_ends.append(t_cont)
        with run.lock:
            b_errors += sum(1 for r in run.records for x in r["answers"]
                            if x["node"] == "b" and t_stop <= x["t_send"] <= t_cont and x["status"] != 201)
        if not args.long or time.time() + 40 > end:
            break
        sleep_until(t_cont + 10)
    wait_for("node a to acknowledge appends again", lambda: run.acked(since=run.fault_ends[-1], node="a") > 0)
    run.notes.update({"held_sessions": len(held_all), "b_errors_while_paused": b_errors})
    return [a, b], sessions


def busy(run):
    """Another client (psql) holds one session's row lock for longer than the busy wait (1 s on
    node b here): b's appends to it answer 503 busy, its appends to other sessions go on."""
    b = Node("b", {"MNEMO_BUSY_TIMEOUT_MS": "1000"})
    b.start()
    sessions = [new_session(b) for _ in range(4)]
    held = sessions[0]
    run.clients([(held, [b], False, 1)] + [(s, [b], False, 1) for s in sessions[1:]])
    wait_for("appends through node b", lambda: run.acked() > 0)
    end = time.time() + (args.seconds if args.long else 0)
    while True:
        hold_s = 4 if not args.long else 8
        env = dict(os.environ, PGAPPNAME="mnemo-holder")
        t_lock = time.time()  # the lock is taken after this, so it is held until hold_s later at least
        holder = subprocess.Popen(["psql", "-X", "-q", DB, "-c", "BEGIN; SELECT id FROM sessions WHERE id = '%s'"
                                   " FOR UPDATE; SELECT pg_sleep(%d); COMMIT;" % (held, hold_s)], env=env,
                                  stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        wait_for("the lock holder", lambda: psql(ADMIN, "SELECT count(*) FROM pg_stat_activity WHERE application_name"
                                                        " = 'mnemo-holder' AND wait_event = 'PgSleep'")[0][0] == "1")
        t0 = time.time()
        holder.wait()
        run.fault_ends.append(time.time())
        if not args.long or time.time() + 12 > end:
            break
        sleep_until(run.fault_ends[-1] + 4)
    wait_for("an acknowledged append to the held session after the hold",
             lambda: run.acked(since=run.fault_ends[-1], session=held) > 0)
    with run.lock:
        during = [(r, x) for r in run.records for x in r["answers"]
                  if t0 <= x["t_send"] and x["t_recv"] <= t_lock + hold_s]
        run.notes["held_answers"] = sorted(set("%s%s" % (x["status"], "/" + x["code"] if x["code"] else "")
                                               for r, x in during if r["session"] == held))
        run.notes["other_errors_while_held"] = sum(1 for r, x in during if r["session"] != held and x["status"] != 201)
        waits = [x["t_recv"] - x["t_send"] for r, x in during if r["session"] == held and x["status"] == 503]
        run.notes["busy_answer_ms"] = round(max(waits) * 1000) if waits else None
    return [b], sessions


def restart_node(run, sig):
    """sigkill / sigterm: node a (with clients with keys, retried through b, and without) is
    killed or stopped, then started again; once (--long: every 5 s)."""
    a, b = Node("a"), Node("b")
    a.start()
    b.start()
    sessions = [new_session(a) for _ in range(3)]
    run.clients([(s, [a, b], True, 2) for s in sessions] + [(s, [b, a], True, 1) for s in sessions] +
                [(sessions[0], [a], False, 2)])
    end = time.time() + args.seconds
    while True:
        since = time.time()
        wait_for("appends through node a", lambda: run.acked(since=since, node="a") > 2)
        time.sleep(random.uniform(0, 0.3))
        a.stop(sig)
        a.start()  # a new port: the clients read the node's url at each try
        run.fault_ends.append(time.time())
        if not args.long or time.time() + 5 > end:
            break
        sleep_until(run.fault_ends[-1] + random.uniform(3, 6))
    wait_for("node a to acknowledge appends again", lambda: run.acked(since=run.fault_ends[-1], node="a") > 0)
    run.notes["node_a_exits"] = [rc for _, rc in a.exits]
    return [a, b], sessions


def health(node):
    """(status of GET /healthz, its JSON, the readiness gauges of GET /metrics)."""
    st, j = call([None, None], node.url, "GET", "/healthz", timeout=10)
    h, p = node.url.split("//", 1)[1].rsplit(":", 1)
    c = http.client.HTTPConnection(h, int(p), timeout=10)
    try:
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
    except (OSError, http.client.HTTPException):
        text = ""
    finally:
        c.close()
    gauges = {l.split()[0]: l.split()[1] for l in text.splitlines()
              if l.startswith(("mnemo_ready ", "mnemo_database_reachable "))}
    return st, j, gauges


def pg_restart(run, immediate):
    """pg-fast / pg-immediate: PostgreSQL stops (fast shutdown, or immediate: a crash) under load
    from two nodes, stays down until node b reports itself degraded (its /healthz 503, naming the
    database), and comes back; both nodes must then report ready again. Once (--long: every 8 s,
    down 0.5 s)."""
    a, b = Node("a"), Node("b")
    a.start()
    b.start()
    sessions = [new_session(a) for _ in range(3)]
    run.clients([(s, [a, b], True, 1) for s in sessions] + [(s, [a], False, 2) for s in sessions] +
                [(s, [b], False, 1) for s in sessions])
    end = time.time() + args.seconds
    while True:
        since = time.time()
        wait_for("appends through both nodes", lambda: run.acked(since=since, node="a") > 2 and
                 run.acked(since=since, node="b") > 2)
        if immediate:
            pg_stop_immediate()
        else:
            pgctl("halt", args.pgdir)
        if args.long:
            time.sleep(0.5)
        else:
            seen = []
            wait_for("node b to report the database unreachable", lambda: seen.append(health(b)) or (
                seen[-1][0] == 503 and (seen[-1][1] or {}).get("database", "").startswith("unreachable")), 30)
            st, j, gauges = seen[-1]
            run.notes["degraded"] = {"database": (j or {}).get("database", "")[:11], "gauges": gauges}
        pgctl("resume", args.pgdir)
        run.fault_ends.append(time.time())
        if not args.long or time.time() + 8 > end:
            break
        sleep_until(run.fault_ends[-1] + random.uniform(6, 10))
    wait_for("appends after the restart", lambda: run.acked(since=run.fault_ends[-1]) > 0)
    if not args.long:
        wait_for("both nodes to report ready again", lambda: health(a)[0] == 200 and health(b)[0] == 200, 30)
        run.notes["ready_again"] = True
    with run.lock:  # no 500, no hang: the database's absence is a 503
        answers = set(str(x["status"]) + ("/" + x["code"] if x["code"] else "")
                      for r in run.records for x in r["answers"])
    run.notes["other_answers"] = sorted(answers - {"201", "503/unavailable"})
    return [a, b], sessions


SCENARIOS = {
    "terminate": terminate,
    "commit-lost": commit_lost,
    "sigstop": sigstop,
    "busy": busy,
    "sigkill": lambda run: restart_node(run, signal.SIGKILL),
    "sigterm": lambda run: restart_node(run, signal.SIGTERM),
    "pg-fast": lambda run: pg_restart(run, False),
    "pg-immediate": lambda run: pg_restart(run, True),
}

if args.scenario not in SCENARIOS:
    sys.exit("faults.py: unknown scenario %s (%s)" % (args.scenario, " ".join(SCENARIOS)))
DBNAME = "faults_%s_%d" % (args.scenario.replace("-", "_"), os.getpid())
ADMIN = db_url("postgres")
DB = db_url(DBNAME)
psql(ADMIN, "CREATE DATABASE %s" % DBNAME)  # left behind: the server is a throwaway
run = Run()
try:
    t_start = time.time()
    nodes, sessions = SCENARIOS[args.scenario](run)
    time.sleep(0.3)  # a little load after the last fault
    run.finish()
    rep = {"scenario": args.scenario, "seconds": round(time.time() - t_start, 1)}
    rep.update(check(run, nodes, sessions))
    rep.update(run.notes)
finally:
    run.stop.set()
    for n in NODES:
        n.stop()
# each node's last stop is a SIGTERM: it drains and exits 0
rep["clean_exits"] = all(n.exits and n.exits[-1] == (signal.SIGTERM, 0) for n in NODES)
print(json.dumps(rep, sort_keys=True))
