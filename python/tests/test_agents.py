"""mnemo.agents.MnemoSession against the OpenAI Agents SDK's Session protocol, item by item.

The openai-agents package cannot be installed here (no PyPI), so these tests check the protocol as
the SDK documents it (agents/memory/session.py: session_id, session_settings, async get_items(limit=None)
returning the latest `limit` items in chronological order, add_items, pop_item returning the most
recent item or None, clear_session) with items in the Responses input-item shapes the SDK
produces, and replay the SDK runner's use of a session (get_items before a turn, add_items after).
Items are stored as the TypeScript session (js/src/items.ts) stores them, so each reads what the
other wrote; tests/roundtrip runs the two on one database."""
import asyncio
import dataclasses
import inspect

import pytest

import mnemo
from mnemo.agents import MnemoSession, items_to_messages

USER = {"role": "user", "content": "List the repo"}
OUT_MSG = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "Looking.", "annotations": []}]}
CALL_A = {"type": "function_call", "call_id": "call_a", "name": "ls", "arguments": "{\"dir\":\".\"}",
          "id": "fc_1", "status": "completed"}
CALL_B = {"type": "function_call", "call_id": "call_b", "name": "cat", "arguments": "{\"f\":\"README\"}"}
OUT_A = {"type": "function_call_output", "call_id": "call_a", "output": "README src"}
OUT_B = {"type": "function_call_output", "call_id": "call_b", "output": "# mnemo"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}
TURN = [USER, OUT_MSG, REASONING, CALL_A, CALL_B, OUT_A, OUT_B,
        {"role": "assistant", "content": "A README and sources."}]
# every kind of item a Python run stores, with the ids and fields the SDK keeps
VARIED = [
    USER,
    {"role": "developer", "content": "Prefer short answers."},
    OUT_MSG,
    {"id": "rs_2", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Two files to read."}],
     "encrypted_content": "gAAAAB-r"},
    CALL_A,
    {"id": "fc_2", "type": "function_call", "call_id": "call_b", "name": "cat", "arguments": "{\"f\":\"README\"}",
     "status": "completed"},
    OUT_A,
    {"type": "function_call_output", "call_id": "call_b", "output": [{"type": "input_text", "text": "# mnemo"}]},
    {"id": "cmp_1", "type": "compaction", "encrypted_content": "gAAAAB-c"},
    {"id": "msg_2", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "A README ", "annotations": []},
                 {"type": "refusal", "refusal": "and sources."}]},
]


@dataclasses.dataclass
class Settings:
    """What the session reads of the SDK's agents.SessionSettings (a dataclass with `limit`)."""
    limit: object = None


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def session(mem):
    return MnemoSession(memory=mem, system_prompt="Be brief.")


def test_protocol_shape(session):
    assert isinstance(session.session_id, str) and len(session.session_id) == 36
    assert session.session_settings is None
    for name in ("get_items", "add_items", "pop_item", "clear_session"):
        assert inspect.iscoroutinefunction(getattr(session, name)), name
    assert inspect.signature(session.get_items).parameters["limit"].default is None
    assert list(inspect.signature(session.add_items).parameters) == ["items"]


def test_add_then_get_returns_the_items_as_added(session, mem):
    run(session.add_items(TURN))
    assert run(session.get_items(limit=100)) == TURN
    assert run(session.get_items(limit=3)) == TURN[-3:]
    assert run(session.get_items(limit=0)) == []
    assert run(session.get_items(limit=20000)) == TURN  # past history()'s largest limit (10000)
    # stored as chat messages: the two calls are one assistant message, results are tool messages
    h = mem.history(session.session_id)
    assert [m["role"] for m in h] == ["user", "assistant", "assistant", "assistant", "tool", "tool", "assistant"]
    assert [c["id"] for c in h[3]["tool_calls"]] == ["call_a", "call_b"]
    assert h[1]["content"] == "Looking." and h[4]["tool_call_id"] == "call_a"


def test_any_string_is_a_session_id(mem):
    """The SDK's own sessions take the app's ids ("user-42-chat"); so does MnemoSession: the
    string becomes the session's key, in its namespace, and the session's id stays a UUID."""
    a = MnemoSession("user-42-chat", memory=mem)
    run(a.add_items([{"role": "user", "content": "hello"}]))
    assert run(MnemoSession("user-42-chat", memory=mem).get_items()) == [{"role": "user", "content": "hello"}]
    stored = mem.get_session("user-42-chat")
    assert stored["key"] == "user-42-chat" and stored["id"] != "user-42-chat"
    assert mem.resolve_session("user-42-chat") == stored["id"]
    # the same string in another namespace is another session
    b = MnemoSession("user-42-chat", memory=mem, namespace="tenant-b")
    assert run(b.get_items()) == []
    run(b.add_items([{"role": "user", "content": "b's"}]))
    assert run(b.get_items()) == [{"role": "user", "content": "b's"}]
    assert run(a.get_items()) == [{"role": "user", "content": "hello"}]
    assert run(b.pop_item()) == {"role": "user", "content": "b's"}
    run(a.clear_session())
    assert run(a.get_items()) == []
    run(a.add_items([{"role": "user", "content": "again"}]))
    assert mem.get_session("user-42-chat")["id"] == stored["id"]  # cleared, the same session
    with pytest.raises(mnemo.NotFound):
        mem.resolve_session("no-such-chat")


def test_get_items_limit_from_the_argument_else_session_settings(mem):
    s = MnemoSession(memory=mem)
    five = [{"role": ("user", "assistant")[i % 2], "content": "item %d" % i} for i in range(5)]
    run(s.add_items(five))
    assert run(s.get_items(limit=3)) == five[-3:]
    s.session_settings = Settings(limit=3)
    assert run(s.get_items()) == five[-3:]
    assert run(s.get_items(limit=2)) == five[-2:]  # the argument comes first
    assert run(s.get_items(limit=0)) == []
    s.session_settings = Settings()  # limit None: every item
    assert run(s.get_items()) == five
    assert run(MnemoSession(s.session_id, memory=mem, session_settings=Settings(limit=4)).get_items()) == five[-4:]
    assert run(MnemoSession(s.session_id, memory=mem, session_settings={"limit": 1}).get_items()) == five[-1:]
    for bad in ("3", 2.5, True):  # a string or float limit slipped past the comparisons before
        with pytest.raises(TypeError, match="limit must be a whole number"):
            run(s.get_items(limit=bad))
    s.session_settings = Settings(limit="3")
    with pytest.raises(TypeError, match="limit must be a whole number"):
        run(s.get_items())


def test_items_come_back_exactly_as_added(mem):
    s = MnemoSession(memory=mem)
    run(s.add_items(VARIED[:6]))  # a turn's calls come in one add_items (they share a message)
    run(s.add_items(VARIED[6:]))
    # within the budget and nothing added (no system prompt): get_items() is the stored list
    assert run(s.get_items()) == VARIED
    assert run(s.get_items(limit=len(VARIED))) == VARIED
    assert run(s.get_items(limit=4)) == VARIED[-4:]
    assert run(MnemoSession(s.session_id, memory=mem).get_items()) == VARIED


def test_items_are_stored_as_the_typescript_session_stores_them(mem):
    """One message per item with the item under metadata "agents_item" (js/src/items.ts), except
    that consecutive function calls share one assistant message (metadata "agents_items"): the
    context builder sends a tool result only right after the message with its call."""
    s = MnemoSession(memory=mem)
    run(s.add_items(VARIED))
    h = mem.history(s.session_id)
    got = [(m["role"], m["content"], m["tool_calls"], m["tool_call_id"], m["metadata"]) for m in h]
    calls = [{"id": "call_a", "type": "function", "function": {"name": "ls", "arguments": "{\"dir\":\".\"}"}},
             {"id": "call_b", "type": "function", "function": {"name": "cat", "arguments": "{\"f\":\"README\"}"}}]
    one = lambda i: {"agents_item": VARIED[i]}  # noqa: E731
    assert got == [
        ("user", "List the repo", None, None, one(0)),
        ("system", "Prefer short answers.", None, None, one(1)),
        ("assistant", "Looking.", None, None, one(2)),
        ("assistant", "", None, None, one(3)),
        ("assistant", None, calls, None, {"agents_items": VARIED[4:6]}),
        ("tool", "README src", None, "call_a", one(6)),
        ("tool", "# mnemo", None, "call_b", one(7)),
        ("assistant", "", None, None, one(8)),
        ("assistant", "A README and sources.", None, None, one(9)),
    ]
    run(s.clear_session())
    run(s.add_items([CALL_A, OUT_A]))  # a single call is a message of its own, as TypeScript's
    assert mem.history(s.session_id)[0]["metadata"] == {"agents_item": CALL_A}


# Items of the TypeScript SDK (@openai/agents) and the messages js/src/items.ts stores them as
JS_ITEMS = [
    {"type": "message", "role": "user", "content": "What is 6 x 7?"},
    {"type": "reasoning", "id": "rs_9", "content": [{"type": "input_text", "text": "multiply"}]},
    {"type": "function_call", "id": "fc_a", "callId": "call_1", "name": "multiply",
     "arguments": "{\"a\":6,\"b\":7}", "status": "completed"},
    {"type": "function_call_result", "callId": "call_1", "name": "multiply", "status": "completed",
     "output": {"type": "text", "text": "42"}},
    {"type": "message", "id": "msg_a", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "6 x 7 = 42."}], "providerData": {"k": [1, None]}},
]
JS_MESSAGES = [
    {"role": "user", "content": "What is 6 x 7?", "metadata": {"agents_item": JS_ITEMS[0]}},
    {"role": "assistant", "content": "", "metadata": {"agents_item": JS_ITEMS[1]}},
    {"role": "assistant", "content": None, "metadata": {"agents_item": JS_ITEMS[2]},
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "multiply", "arguments": "{\"a\":6,\"b\":7}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "tool_name": "multiply", "content": "42",
     "metadata": {"agents_item": JS_ITEMS[3]}},
    {"role": "assistant", "content": "6 x 7 = 42.", "metadata": {"agents_item": JS_ITEMS[4]}},
]


def test_reads_what_the_typescript_session_wrote(mem):
    sid = mem.create_session()["id"]
    mem.append_batch(sid, JS_MESSAGES)
    s = MnemoSession(sid, memory=mem)
    assert run(s.get_items()) == JS_ITEMS
    assert run(s.get_items(limit=2)) == JS_ITEMS[-2:]
    assert run(s.pop_item()) == JS_ITEMS[-1]
    # and writing those items here stores the messages TypeScript stores
    assert items_to_messages(JS_ITEMS) == JS_MESSAGES


def test_pop_item_returns_the_newest_exact_item(mem):
    s = MnemoSession(memory=mem)
    run(s.add_items(VARIED))
    for n in range(len(VARIED), 0, -1):
        assert run(s.pop_item()) == VARIED[n - 1]
        assert run(s.get_items(limit=100)) == VARIED[:n - 1]
    assert run(s.pop_item()) is None


def test_get_items_without_limit_is_the_governed_context(session):
    run(session.add_items(TURN))
    items = run(session.get_items())
    assert items == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "List the repo"},
        {"role": "assistant", "content": "Looking."},
        {"role": "assistant", "content": ""},  # the reasoning item's message, as the context has it
        {"type": "function_call", "call_id": "call_a", "name": "ls", "arguments": "{\"dir\":\".\"}"},
        {"type": "function_call", "call_id": "call_b", "name": "cat", "arguments": "{\"f\":\"README\"}"},
        {"type": "function_call_output", "call_id": "call_a", "output": "README src"},
        {"type": "function_call_output", "call_id": "call_b", "output": "# mnemo"},
        {"role": "assistant", "content": "A README and sources."},
    ]


def test_governed_context_stays_within_the_budget(mem):
    s = MnemoSession(memory=mem, max_tokens=200)
    for i in range(30):
        run(s.add_items([{"role": "user", "content": "question %d about the parser" % i},
                         {"role": "assistant", "content": "answer %d: keep it small" % i}]))
    raw = run(s.get_items(limit=1000))
    governed = run(s.get_items())
    assert len(raw) == 60 and 0 < len(governed) < 60
    assert governed[-1] == raw[-1]
    assert mem.context(s.session_id, max_tokens=200).tokens <= 200
    # with the summary strategy, older turns come back folded into a summary (and the room it
    # leaves holds the newest of them verbatim)
    summ = MnemoSession(s.session_id, memory=mem, max_tokens=2000, strategy="summary")
    items = run(summ.get_items())
    assert any("Summary of" in (i.get("content") or "") for i in items) and items[-1] == raw[-1]


def test_governed_context_never_starts_on_a_tool_result(mem):
    s = MnemoSession(memory=mem, max_tokens=60)
    run(s.add_items([USER, CALL_A, {"type": "function_call_output", "call_id": "call_a", "output": "x" * 400},
                     {"role": "assistant", "content": "done"}]))
    items = run(s.get_items())
    assert items and items[0].get("type") != "function_call_output"
    calls = {i["call_id"] for i in items if i.get("type") == "function_call"}
    outs = {i["call_id"] for i in items if i.get("type") == "function_call_output"}
    assert calls == outs


def test_pop_item_removes_exactly_the_last_item(session):
    assert run(session.pop_item()) is None
    run(session.add_items([USER, CALL_A, CALL_B]))
    assert run(session.pop_item()) == CALL_B
    assert run(session.get_items(limit=10)) == [USER, CALL_A]
    assert run(session.pop_item()) == CALL_A
    assert run(session.pop_item()) == USER
    assert run(session.pop_item()) is None
    run(session.add_items([USER, REASONING, OUT_MSG]))
    assert run(session.pop_item()) == OUT_MSG
    assert run(session.get_items(limit=10)) == [USER, REASONING]


def test_clear_session_keeps_the_session(session, mem):
    run(session.add_items(TURN))
    run(session.clear_session())
    assert run(session.get_items()) == [{"role": "system", "content": "Be brief."}]
    assert run(session.get_items(limit=5)) == []
    assert mem.get_session(session.session_id)["system_prompt"] == "Be brief."
    run(session.add_items([USER]))
    assert run(session.get_items(limit=5)) == [USER]


def test_named_session_is_created_on_first_add(mem):
    sid = "0190a5b4-0000-7000-8000-00000000a9e7"
    s = MnemoSession(sid, memory=mem, namespace="agents")
    assert run(s.get_items()) == [] and run(s.pop_item()) is None
    run(s.add_items([USER]))
    assert mem.get_session(sid)["namespace"] == "agents"


def test_messages_from_other_front_ends_are_converted(mem):
    sid = mem.create_session()["id"]
    mem.append(sid, "user", "hi")
    mem.append(sid, "assistant", None, tool_calls=[{"id": "c1", "type": "function",
                                                    "function": {"name": "ls", "arguments": "{}"}}])
    mem.append(sid, "tool", "out", tool_call_id="c1")
    s = MnemoSession(sid, memory=mem)
    assert run(s.get_items(limit=10)) == [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "out"}]


def test_pop_item_of_another_clients_message_with_text_and_calls(mem):
    sid = mem.create_session()["id"]
    calls = [{"id": "c%d" % i, "type": "function", "function": {"name": "ls", "arguments": "{}"}} for i in (1, 2)]
    mem.append(sid, "assistant", "Let me look.", tool_calls=calls, model="gpt-4o", metadata={"k": 1})
    s = MnemoSession(sid, memory=mem)
    assert run(s.pop_item()) == {"type": "function_call", "call_id": "c2", "name": "ls", "arguments": "{}"}
    (m,) = mem.history(sid)  # the message again, less its last call
    assert (m["content"], m["tool_calls"], m["model"], m["metadata"]) == ("Let me look.", calls[:1], "gpt-4o", {"k": 1})
    assert run(s.pop_item())["call_id"] == "c1"
    assert run(s.pop_item()) == {"role": "assistant", "content": "Let me look."}
    assert run(s.pop_item()) is None


def test_a_runner_over_several_turns_survives_a_reopen(db_path):
    """What the SDK's Runner does with a session: read the history, run the model on history +
    new input, then save the input and the model's new items. Replayed with a scripted model."""

    def scripted_model(items):
        asked = items[-1]["content"]
        n = sum(1 for i in items if i.get("role") == "user")
        return [{"id": "msg_%d" % n, "type": "message", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "turn %d: %s" % (n, asked), "annotations": []}]}]

    async def turn(session, text):
        history = await session.get_items()
        new_input = [{"role": "user", "content": text}]
        output = scripted_model(history + new_input)
        await session.add_items(new_input + output)
        return output[0]["content"][0]["text"]

    with mnemo.Memory(db_path) as mem:
        s = MnemoSession(memory=mem)
        assert run(turn(s, "one")) == "turn 1: one"
        assert run(turn(s, "two")) == "turn 2: two"
        sid = s.session_id
    s2 = MnemoSession(sid, db=db_path)  # a new process would do the same
    try:
        assert run(turn(s2, "three")) == "turn 3: three"
        items = run(s2.get_items(limit=100))
        assert [i.get("content") if i.get("role") == "user" else i["content"][0]["text"] for i in items] == [
            "one", "turn 1: one", "two", "turn 2: two", "three", "turn 3: three"]
    finally:
        s2.close()
