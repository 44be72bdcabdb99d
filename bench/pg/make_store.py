"""make_store.py SESSIONS MESSAGES — the export bench/pg/run.sh and profile.sh load into both
backends: SESSIONS sessions of MESSAGES messages each (~200-byte texts), as mnemo-export JSON Lines
on standard output."""
import json, sys, uuid
ns, nm = int(sys.argv[1]), int(sys.argv[2])
print(json.dumps({"format": "mnemo-export", "version": 1}))
mid = 0
for s in range(ns):
    sid = str(uuid.UUID(int=(0x0190 << 112) | (0x7 << 76) | (0x8 << 60) | s))
    t = 1700000000000 + s * 1000
    print(json.dumps({"type": "session", "id": sid, "namespace": "default", "title": "bench %d" % s,
                      "system_prompt": None, "metadata": {}, "tool_name": None, "parent_id": None,
                      "created_at": t, "updated_at": t + nm, "expires_at": 0, "ttl_ms": 0, "max_turns": 0}))
    for k in range(nm):
        mid += 1
        print(json.dumps({"type": "message", "id": mid, "session_id": sid, "seq": k + 1,
                          "role": "user" if k % 2 == 0 else "assistant",
                          "content": "message %d of session %d: " % (k, s) + "lorem ipsum " * 16,
                          "tool_calls": None, "tool_call_id": None, "name": None, "tool_name": None,
                          "model": None, "files": None, "metadata": {}, "idempotency_key": None,
                          "tokens": 60, "pinned": False, "created_at": t + k, "active": True}))
