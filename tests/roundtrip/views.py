"""The Python side of the round trip (roundtrip.mjs runs it in the package's venv):

    views.py write DB DATA   writes DATA's session (data.json) with mnemo.Memory; prints
                             {"session_id", "first_id", "retry_id"} (retry_id: the id the append
                             retried with the same idempotency key returned)
    views.py read DB SID DATA
                             prints what Python reads of the session, in the shape roundtrip.mjs
                             compares: session, sessions (its namespace), history, state, export,
                             and per context of DATA the rendered text, report and counts, per
                             search of DATA the hits
    views.py agents-write DB KEY DATA
                             a new mnemo.agents.MnemoSession given DATA's agents items KEY
                             ("python" or "typescript"); prints {"session_id"}
    views.py agents-read DB SID DATA
                             prints what MnemoSession reads of session SID: {"items"
                             (get_items()), "tail" (get_items(limit=3)), "history"}
    views.py agents-pop DB SID N DATA
                             pops N items of session SID with MnemoSession; prints {"popped"}
"""
import asyncio
import json
import sys

import mnemo
from mnemo.agents import MnemoSession


def write(db, data):
    with mnemo.Memory(db) as mem:
        s = mem.create_session(**data["session"])
        first = mem.append_message(s["id"], data["first"])
        retry = mem.append_message(s["id"], data["first"])
        for m in data["rest"]:
            mem.append_message(s["id"], m)
        mem.merge_params(s["id"], data["state"])
        return {"session_id": s["id"], "first_id": first["id"], "retry_id": retry["id"]}


def context_key(c):
    return "%s@%s" % (c["format"], c.get("max_tokens", 0))


def read(db, sid, data):
    with mnemo.Memory(db) as mem:
        session = mem.get_session(sid)
        out = {
            "session": session,
            "sessions": mem.list_sessions(namespace=session["namespace"]),
            "history": mem.history(sid),
            "state": mem.state(sid),
            "export": mem.export([sid]),
            "context": {},
            "search": {},
        }
        for c in data["contexts"]:
            ctx = mem.context(sid, format=c["format"], max_tokens=c.get("max_tokens"))
            out["context"][context_key(c)] = {"rendered": ctx.rendered, "report": ctx.report, "tokens": ctx.tokens,
                                              "kept": ctx.kept, "dropped": ctx.dropped}
        for q in data["searches"]:
            out["search"][q] = list(mem.search(q, session_id=sid))
        return out


def agents_write(db, key, data):
    with mnemo.Memory(db) as mem:
        s = MnemoSession(memory=mem)
        asyncio.run(s.add_items(data["agents"][key]))
        return {"session_id": s.session_id}


def agents_read(db, sid):
    with mnemo.Memory(db) as mem:
        s = MnemoSession(sid, memory=mem)
        return {"items": asyncio.run(s.get_items()), "tail": asyncio.run(s.get_items(limit=3)),
                "history": mem.history(sid)}


def agents_pop(db, sid, n):
    with mnemo.Memory(db) as mem:
        s = MnemoSession(sid, memory=mem)
        return {"popped": [asyncio.run(s.pop_item()) for _ in range(n)]}


def main(argv):
    with open(argv[-1], encoding="utf-8") as f:
        data = json.load(f)
    if argv[1] == "write":
        result = write(argv[2], data)
    elif argv[1] == "read":
        result = read(argv[2], argv[3], data)
    elif argv[1] == "agents-write":
        result = agents_write(argv[2], argv[3], data)
    elif argv[1] == "agents-read":
        result = agents_read(argv[2], argv[3])
    elif argv[1] == "agents-pop":
        result = agents_pop(argv[2], argv[3], int(argv[4]))
    else:
        raise SystemExit("views.py: unknown command %r" % argv[1])
    json.dump(result, sys.stdout)  # ASCII: no dependence on the locale's encoding


if __name__ == "__main__":
    main(sys.argv)
