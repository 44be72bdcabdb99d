// agents.test.mjs — MnemoSession with the real @openai/agents (pinned in js/package.json): an
// Agent with a tool, run through run(agent, input, { session }) over several turns with a
// scripted Model of our own; the history survives a restart of `mnemo serve` on the same
// database; getItems() returns the governed context when the history is over the budget, and
// getItems(limit) the newest raw items; items map to mnemo messages and back.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, run, tool, Usage, setTracingDisabled } from '@openai/agents';
import { z } from 'zod';
import { MnemoClient } from '@mnemo/client';
import { MnemoSession } from '@mnemo/client/agents';
import { dbTarget, startServer, stopServer } from './server.mjs';

setTracingDisabled(true);

// A Model that answers from a script: each step is the output items, or a function of the
// request that returns them (and may assert on what the model was sent). Records every input.
class ScriptedModel {
  constructor(steps) { this.steps = steps; this.inputs = []; this.n = 0; }
  async getResponse(request) {
    this.inputs.push(request.input);
    const step = this.steps.shift();
    assert.ok(step, 'the model was called more often than scripted');
    const output = typeof step === 'function' ? step(request) : step;
    return { usage: new Usage(), output, responseId: `resp_${++this.n}` };
  }
  async *getStreamedResponse(request) {
    const r = await this.getResponse(request);
    yield { type: 'response_done', response: { id: r.responseId, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, output: r.output } };
  }
}
const say = (text, id) => [{ type: 'message', id, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }];
const multiply = tool({
  name: 'multiply', description: 'a times b',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a * b),
});
const texts = (items) => items.map((i) => i.type === 'function_call' ? `call:${i.name}` : i.type === 'function_call_result' ? `result:${i.output?.text ?? i.output}` : `${i.role}:${typeof i.content === 'string' ? i.content : i.content.map((p) => p.text).join('')}`);

// A MnemoSession that remembers every item the runner gave it, to compare with what comes back.
class RecordingSession extends MnemoSession {
  given = [];
  async addItems(items) { this.given.push(...structuredClone(items)); return super.addItems(items); }
}

const db = dbTarget('agents');
let server = await startServer(db);
after(async () => { assert.equal(await stopServer(server.proc), 0); });

test('an Agent over several turns, a tool call, a server restart in between', async () => {
  const model = new ScriptedModel([
    [{ type: 'function_call', id: 'fc_a', callId: 'call_1', name: 'multiply', arguments: '{"a":6,"b":7}', status: 'completed' }],
    say('6 x 7 = 42.', 'msg_a'),
    (req) => {
      // after the restart the model still sees turn one, tool call and all
      assert.deepEqual(texts(req.input), ['user:What is 6 x 7?', 'call:multiply', 'result:42', 'assistant:6 x 7 = 42.', 'user:Add 1 to that.']);
      return say('43.', 'msg_b');
    },
    say('You are welcome.', 'msg_c'),
  ]);
  const agent = new Agent({ name: 'calc', instructions: 'Use the tools.', model, tools: [multiply] });
  const session = new RecordingSession({ baseURL: server.url });
  const sid = await session.getSessionId();
  const r1 = await run(agent, 'What is 6 x 7?', { session });
  assert.equal(r1.finalOutput, '6 x 7 = 42.');

  // mnemo's view: a tool call and its result as OpenAI-style messages
  const client = new MnemoClient({ baseURL: server.url });
  const stored = (await client.history(sid)).messages;
  assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
  assert.deepEqual(stored[1].tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'multiply', arguments: '{"a":6,"b":7}' } }]);
  assert.equal(stored[2].tool_call_id, 'call_1');
  assert.equal(stored[2].content, '42');
  assert.equal(stored[3].content, '6 x 7 = 42.');

  assert.equal(await stopServer(server.proc), 0);
  server = await startServer(db);
  const again = new RecordingSession({ baseURL: server.url, sessionId: sid });
  again.given = session.given;
  const r2 = await run(agent, 'Add 1 to that.', { session: again });
  assert.equal(r2.finalOutput, '43.');
  await run(agent, 'Thanks.', { session: again });

  // items come back exactly as the runner gave them, over three turns and a restart
  const items = await again.getItems();
  assert.equal(items.length, 8);
  assert.deepEqual(items, again.given);
  assert.equal(items[1].type, 'function_call');
  assert.equal(items[1].callId, 'call_1');
  assert.equal(items[2].type, 'function_call_result');
  assert.equal(items[2].callId, 'call_1');
  const newest = await again.getItems(2);
  assert.deepEqual(texts(newest), ['user:Thanks.', 'assistant:You are welcome.']);
  assert.deepEqual(newest, again.given.slice(-2));

  const popped = await again.popItem();
  assert.deepEqual(popped, again.given.at(-1));
  assert.equal((await again.getItems()).length, 7);
  await again.clearSession();
  assert.deepEqual(await again.getItems(), []);
  assert.equal(await again.getSessionId(), sid);
  await again.addItems([{ role: 'user', content: 'fresh start' }]);
  assert.deepEqual(texts(await again.getItems()), ['user:fresh start']);
});

test('getItems(): the governed context when the history is over the budget', async () => {
  const session = new MnemoSession({ baseURL: server.url, maxTokens: 300 });
  const old = [];
  for (let i = 0; i < 30; i++) {
    old.push({ role: 'user', content: `question ${i}: ${'tell me more about the weather '.repeat(4)}` });
    old.push({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `answer ${i}: ${'it is sunny and warm today '.repeat(4)}` }] });
  }
  await session.addItems(old);
  const sid = await session.getSessionId();
  const client = new MnemoClient({ baseURL: server.url });
  const ctx = await client.contextBuild(sid, { max_tokens: 300 });
  assert.ok(ctx.dropped > 0);

  const governed = await session.getItems();
  assert.ok(governed.length < 60, `${governed.length} items: nothing was dropped`);
  assert.equal(governed.length, ctx.messages.length);
  assert.deepEqual(texts(governed), ctx.messages.map((m) => `${m.role}:${m.content}`));
  assert.match(texts(governed).at(-1), /^assistant:answer 29: /);
  // the raw newest items, whatever the budget
  const raw = await session.getItems(50);
  assert.equal(raw.length, 50);
  assert.match(texts(raw)[0], /^user:question 5: /);

  // the runner sends the model the governed history plus the new input
  const model = new ScriptedModel([(req) => {
    assert.equal(req.input.length, governed.length + 1);
    assert.deepEqual(texts(req.input).at(-1), 'user:And tomorrow?');
    return say('Rain.');
  }]);
  const agent = new Agent({ name: 'weather', instructions: 'Answer.', model });
  const r = await run(agent, 'And tomorrow?', { session });
  assert.equal(r.finalOutput, 'Rain.');
  assert.deepEqual(texts(await session.getItems(2)), ['user:And tomorrow?', 'assistant:Rain.']);
});

test('items written by other clients come back as items', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  const { session: s } = await client.sessionCreate();
  await client.append(s.id, { messages: [
    { role: 'user', content: 'list files' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c9', content: 'a.c b.c' },
    { role: 'assistant', content: 'Two files.' },
  ] });
  const items = await new MnemoSession({ baseURL: server.url, sessionId: s.id }).getItems();
  assert.deepEqual(items, [
    { type: 'message', role: 'user', content: 'list files' },
    { type: 'function_call', callId: 'c9', name: 'ls', arguments: '{}', status: 'completed' },
    { type: 'function_call_result', callId: 'c9', name: '', status: 'completed', output: 'a.c b.c' },
    { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Two files.' }] },
  ]);
});

test('namespace with a given sessionId: the session it creates is in that namespace', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  const sid = crypto.randomUUID();
  const session = new MnemoSession({ baseURL: server.url, sessionId: sid, namespace: 'tenant-a' });
  await session.addItems([{ role: 'user', content: 'hello' }]);
  assert.equal((await client.sessionGet(sid)).session.namespace, 'tenant-a');
  await session.addItems([{ role: 'user', content: 'again' }]);
  assert.deepEqual(texts(await session.getItems()), ['user:hello', 'user:again']);
  // cleared, the next write makes it again in the same namespace
  await session.clearSession();
  await session.addItems([{ role: 'user', content: 'fresh' }]);
  assert.equal((await client.sessionGet(sid)).session.namespace, 'tenant-a');
  // without a sessionId: created by getSessionId() in the namespace, and again after a clear
  const anon = new MnemoSession({ baseURL: server.url, namespace: 'tenant-b' });
  await anon.addItems([{ role: 'user', content: 'hi' }]);
  const aid = await anon.getSessionId();
  assert.equal((await client.sessionGet(aid)).session.namespace, 'tenant-b');
  await anon.clearSession();
  await anon.addItems([{ role: 'user', content: 'hi again' }]);
  assert.equal((await client.sessionGet(aid)).session.namespace, 'tenant-b');
});

test('namespace: another writer creating the session first (a 409 on create) is no error', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  const sid = crypto.randomUUID();
  // a fetch that lets a rival create the session just before this one's create arrives
  let raced = 0;
  const racing = async (req, init) => {
    if (init.method === 'POST' && new URL(req).pathname === '/v1/sessions' && !raced++) {
      await client.sessionCreate({ id: sid, namespace: 'tenant-c' });
    }
    return fetch(req, init);
  };
  const session = new MnemoSession({ baseURL: server.url, fetch: racing, sessionId: sid, namespace: 'tenant-c' });
  await session.addItems([{ role: 'user', content: 'first' }]);
  assert.equal(raced, 1);
  assert.equal((await client.sessionGet(sid)).session.namespace, 'tenant-c');
  assert.deepEqual(texts(await session.getItems()), ['user:first']);
});

// The SDK's own sessions take the application's ids (new MemorySession({ sessionId: 'user-42-chat' })):
// so does MnemoSession. mnemo keeps such a string as the session's key (docs/http-api.md, "Session
// keys"); its id stays a UUID.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('any string is a session id: made on the first write, the same session for every instance of it', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  const a = new MnemoSession({ baseURL: server.url, sessionId: 'user-42-chat' });
  assert.equal(await a.getSessionId(), 'user-42-chat');
  assert.deepEqual(await a.getItems(), []);
  assert.equal(await a.popItem(), undefined);
  await a.clearSession(); // nothing to clear: no error
  await a.addItems([{ role: 'user', content: 'hello' }]);
  const b = new MnemoSession({ baseURL: server.url, sessionId: 'user-42-chat' });
  await b.addItems([{ role: 'user', content: 'again' }]);
  assert.deepEqual(texts(await a.getItems()), ['user:hello', 'user:again']);
  const { session } = await client.sessionGet('user-42-chat');
  assert.deepEqual([session.key, session.namespace], ['user-42-chat', 'default']);
  assert.match(session.id, UUID);
  assert.equal((await client.sessionList({ namespace: 'default', limit: 10000 })).sessions.filter((s) => s.key === 'user-42-chat').length, 1);
  assert.deepEqual(texts([await b.popItem()]), ['user:again']);
  assert.deepEqual(texts(await a.getItems(5)), ['user:hello']);
  await a.clearSession();
  assert.deepEqual(await b.getItems(), []);
  await b.addItems([{ role: 'user', content: 'fresh' }]);
  assert.deepEqual(texts(await a.getItems()), ['user:fresh']);
  assert.equal((await client.sessionGet('user-42-chat')).session.key, 'user-42-chat');
});

test('a string id with namespace: made and found in it; the same string in two namespaces is two sessions', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  const inNs = (namespace) => new MnemoSession({ baseURL: server.url, sessionId: 'chat-7', namespace });
  const found = async (namespace) => (await client.sessionResume({ namespace, session_id: 'chat-7' })).session;
  const x = inNs('tenant-x');
  assert.deepEqual(await x.getItems(), []);
  // an Agent run, as with the SDK's own sessions
  const model = new ScriptedModel([say('Hello, x.', 'msg_x')]);
  await run(new Agent({ name: 'greeter', instructions: 'Greet.', model }), 'hi from x', { session: x });
  await inNs('tenant-y').addItems([{ role: 'user', content: 'y says' }]);
  await new MnemoSession({ baseURL: server.url, sessionId: 'chat-7' }).addItems([{ role: 'user', content: 'default says' }]);
  assert.deepEqual(texts(await inNs('tenant-x').getItems()), ['user:hi from x', 'assistant:Hello, x.']);
  assert.deepEqual(texts(await inNs('tenant-y').getItems()), ['user:y says']);
  assert.deepEqual(texts(await new MnemoSession({ baseURL: server.url, sessionId: 'chat-7' }).getItems()), ['user:default says']);
  const [sx, sy] = [await found('tenant-x'), await found('tenant-y')];
  assert.deepEqual([sx.namespace, sx.key, sy.namespace, sy.key], ['tenant-x', 'chat-7', 'tenant-y', 'chat-7']);
  assert.notEqual(sx.id, sy.id);
  assert.notEqual(sx.id, (await found('default')).id);

  // another instance of the same string adds to it; popItem and clearSession
  const x2 = inNs('tenant-x');
  await x2.addItems([{ role: 'user', content: 'noted?' }]);
  assert.deepEqual(texts([await x.popItem()]), ['user:noted?']);
  assert.deepEqual(texts(await x2.getItems(5)), ['user:hi from x', 'assistant:Hello, x.']);
  await x.clearSession();
  assert.deepEqual(await x2.getItems(), []);
  assert.deepEqual(texts(await inNs('tenant-y').getItems()), ['user:y says']);
  await x2.addItems([{ role: 'user', content: 'x again' }]);
  assert.deepEqual(texts(await x.getItems()), ['user:x again']);
  assert.deepEqual([(await found('tenant-x')).namespace, (await found('tenant-x')).key], ['tenant-x', 'chat-7']);

  // an instance that found the session before another one cleared it, and a third made it again
  await inNs('tenant-x').clearSession();
  await inNs('tenant-x').addItems([{ role: 'user', content: 'made anew' }]);
  assert.deepEqual(texts(await x.getItems()), ['user:made anew']);
  await x.addItems([{ role: 'user', content: 'and more' }]);
  assert.deepEqual(texts(await inNs('tenant-x').getItems()), ['user:made anew', 'user:and more']);
  assert.equal((await client.sessionList({ namespace: 'tenant-x', limit: 10000 })).sessions.filter((s) => s.key === 'chat-7').length, 1);
});

test('a string id with namespace: another writer creating it first (a 409 on create) is no error', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  let raced = 0;
  const racing = async (req, init) => {
    if (init.method === 'POST' && new URL(req).pathname === '/v1/sessions' && !raced++) {
      await client.sessionCreate({ key: 'raced-chat', namespace: 'tenant-c' });
    }
    return fetch(req, init);
  };
  const session = new MnemoSession({ baseURL: server.url, fetch: racing, sessionId: 'raced-chat', namespace: 'tenant-c' });
  await session.addItems([{ role: 'user', content: 'first' }]);
  assert.equal(raced, 1);
  assert.deepEqual(texts(await session.getItems()), ['user:first']);
  const { session: s } = await client.sessionResume({ namespace: 'tenant-c', session_id: 'raced-chat' });
  assert.deepEqual((await client.history(s.id)).messages.map((m) => m.content), ['first']);
});

// Two first appends of one key at once: the server makes the session for one, and the other's
// create finds the key taken and answers 404 (or 409); that writer appends again.
test('first writes of one string id at once: one session holds them all', async () => {
  for (let round = 0; round < 8; round++) {
    const namespace = round % 2 ? 'tenant-burst' : undefined;
    const sessionId = `burst-${round}`;
    await Promise.all([0, 1, 2, 3, 4, 5].map((i) => new MnemoSession({ baseURL: server.url, sessionId, namespace }).addItems([{ role: 'user', content: `w${i}` }])));
    const items = await new MnemoSession({ baseURL: server.url, sessionId, namespace }).getItems(10);
    assert.deepEqual(texts(items).sort(), ['user:w0', 'user:w1', 'user:w2', 'user:w3', 'user:w4', 'user:w5'], sessionId);
  }
});

test('string ids a URL path cannot carry as they are ("a/b", ".", "..") and other characters', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  for (const sessionId of ['team/a', '.', '..', '../x', 'a b', 'café ☕', '50%', '%2F', 'q?x#y', 'a\\b', 'a+b']) {
    for (const namespace of [undefined, 'tenant-z']) {
      const s = new MnemoSession({ baseURL: server.url, sessionId, namespace });
      await s.addItems([{ role: 'user', content: `in ${sessionId}` }, { role: 'user', content: 'two' }]);
      const again = new MnemoSession({ baseURL: server.url, sessionId, namespace });
      assert.deepEqual(texts(await again.getItems()), [`user:in ${sessionId}`, 'user:two'], sessionId);
      assert.equal((await client.sessionResume({ namespace, session_id: sessionId })).session.key, sessionId);
      assert.deepEqual(texts([await again.popItem()]), ['user:two']);
      await s.clearSession();
      assert.deepEqual(await again.getItems(), [], sessionId);
    }
  }
});

test('a string id with an API key bound to a namespace: made and found in the key\'s namespace', async () => {
  const keyed = await startServer(dbTarget('agents-keys'), ['--api-key-env', 'JS_KEY', '--key-namespace', 'team'], { JS_KEY: 'secret-1' });
  try {
    const opts = { baseURL: keyed.url, apiKey: 'secret-1', sessionId: 'user-1' };
    await new MnemoSession(opts).addItems([{ role: 'user', content: 'one' }]);
    await new MnemoSession({ ...opts, namespace: 'team' }).addItems([{ role: 'user', content: 'two' }]);
    assert.deepEqual(texts(await new MnemoSession(opts).getItems()), ['user:one', 'user:two']);
    const { session } = await new MnemoClient({ baseURL: keyed.url, apiKey: 'secret-1' }).sessionGet('user-1');
    assert.deepEqual([session.key, session.namespace], ['user-1', 'team']);
    // another namespace is not the key's to use
    const e = await new MnemoSession({ ...opts, namespace: 'not-team' }).getItems().catch((x) => x);
    assert.equal(e.status, 403, String(e));
  } finally {
    assert.equal(await stopServer(keyed.proc), 0);
  }
});

test('getSessionId(): a failed create is not cached, the next call tries again', async () => {
  let down = true;
  const flaky = (req, init) => down ? Promise.reject(new TypeError('fetch failed', { cause: 'connect ECONNREFUSED' })) : fetch(req, init);
  const session = new MnemoSession({ baseURL: server.url, fetch: flaky, maxRetries: 0 });
  await assert.rejects(session.getSessionId(), /ECONNREFUSED/);
  await assert.rejects(session.getSessionId(), /ECONNREFUSED/); // still down: tried again, failed again
  down = false;
  const id = await session.getSessionId();
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.equal(await session.getSessionId(), id); // a success is kept
  await session.addItems([{ role: 'user', content: 'back' }]);
  assert.deepEqual(texts(await session.getItems()), ['user:back']);
});

test('popItem() on a message another client wrote: only its last item goes', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  const { session: s } = await client.sessionCreate();
  await client.append(s.id, { messages: [
    { role: 'user', content: 'check both' },
    { role: 'assistant', content: 'Checking.', model: 'm-1', tool_calls: [
      { id: 'x1', type: 'function', function: { name: 'one', arguments: '{"n":1}' } },
      { id: 'x2', type: 'function', function: { name: 'two', arguments: '{"n":2}' } },
    ] },
  ] });
  const session = new MnemoSession({ baseURL: server.url, sessionId: s.id });
  const popped = await session.popItem();
  assert.deepEqual(popped, { type: 'function_call', callId: 'x2', name: 'two', arguments: '{"n":2}', status: 'completed' });
  assert.deepEqual(await session.getItems(10), [
    { type: 'message', role: 'user', content: 'check both' },
    { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Checking.' }] },
    { type: 'function_call', callId: 'x1', name: 'one', arguments: '{"n":1}', status: 'completed' },
  ]);
  // one message still, the other client's fields kept, less the popped call
  const stored = (await client.history(s.id)).messages;
  assert.deepEqual(stored.map((m) => [m.role, m.content, m.model, m.tool_calls?.map((c) => c.id) ?? null]),
    [['user', 'check both', null, null], ['assistant', 'Checking.', 'm-1', ['x1']]]);
  assert.equal((await session.popItem()).callId, 'x1');
  assert.deepEqual(texts([await session.popItem()]), ['assistant:Checking.']);
  assert.deepEqual(texts([await session.popItem()]), ['user:check both']);
  assert.equal(await session.popItem(), undefined);
});

// Parallel calls: one model turn asking for several tools. The context builder sends tool results
// only right after the message holding all their calls, so the calls share one assistant message
// (metadata "agents_items", as python/mnemo/agents.py stores them).
test('parallel function calls: one assistant message, read back exactly, popped one by one', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  const session = new MnemoSession({ baseURL: server.url });
  const call = (n, name) => ({ type: 'function_call', id: `fc_${n}`, callId: `call_${n}`, name, arguments: `{"n":${n}}`, status: 'completed', providerData: { n } });
  const result = (n, name, text) => ({ type: 'function_call_result', callId: `call_${n}`, name, status: 'completed', output: { type: 'text', text } });
  const calls = [call(1, 'weather'), call(2, 'time'), call(3, 'news')];
  const given = [
    { type: 'message', role: 'user', content: 'Weather, time and news?' },
    ...calls,
    result(1, 'weather', 'sunny'), result(2, 'time', 'noon'), result(3, 'news', 'none'),
    { type: 'message', id: 'msg_p', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Sunny, noon, no news.' }] },
  ];
  await session.addItems(structuredClone(given));
  const sid = await session.getSessionId();
  const stored = () => client.history(sid).then((h) => h.messages);
  let msgs = await stored();
  assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
  assert.deepEqual(msgs[1].tool_calls, calls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.arguments } })));
  assert.equal(msgs[1].content, null);
  assert.deepEqual(msgs[1].metadata, { agents_items: calls });
  assert.deepEqual(await session.getItems(), given);
  assert.deepEqual(await session.getItems(6), given.slice(-6)); // counts the calls, not their message
  // the context keeps the call group with its results (three one-call messages were dropped as
  // calls without their results)
  const ctx = await client.contextBuild(sid);
  assert.equal(ctx.dropped, 0);
  assert.deepEqual(ctx.messages.map((m) => m.tool_calls?.map((c) => c.id) ?? m.tool_call_id ?? m.role),
    ['user', ['call_1', 'call_2', 'call_3'], 'call_1', 'call_2', 'call_3', 'assistant']);

  for (let i = 0; i < 4; i++) assert.deepEqual(await session.popItem(), given.at(-1 - i)); // the answer, the results
  // the newest item is the group's last call: the message keeps the others, as Python's pop_item
  assert.deepEqual(await session.popItem(), calls[2]);
  msgs = await stored();
  assert.deepEqual(msgs.map((m) => m.tool_calls?.map((c) => c.id) ?? m.role), ['user', ['call_1', 'call_2']]);
  assert.deepEqual(msgs[1].metadata, { agents_items: calls.slice(0, 2) });
  // (getItems() would be the context, which leaves out calls still waiting for their results)
  assert.deepEqual(await session.getItems(10), given.slice(0, 3));
  assert.deepEqual(await session.popItem(), calls[1]);
  msgs = await stored();
  assert.deepEqual(msgs[1].tool_calls.map((c) => c.id), ['call_1']);
  assert.deepEqual(msgs[1].metadata, { agents_item: calls[0] }); // one call: stored as a single item is
  assert.deepEqual(await session.getItems(10), given.slice(0, 2));
  assert.deepEqual(await session.popItem(), calls[0]);
  assert.deepEqual((await stored()).map((m) => m.role), ['user']);

  // calls split by another item stay apart; a single call keeps the single form
  const split = [calls[0], result(1, 'weather', 'sunny'), calls[1], calls[2]];
  await session.addItems(structuredClone(split));
  msgs = (await stored()).slice(1);
  assert.deepEqual(msgs.map((m) => m.tool_calls?.map((c) => c.id) ?? m.role), [['call_1'], 'tool', ['call_2', 'call_3']]);
  assert.deepEqual(msgs[0].metadata, { agents_item: calls[0] });
  assert.deepEqual(msgs[2].metadata, { agents_items: calls.slice(1) });
  assert.deepEqual(await session.getItems(10), [given[0], ...split]);
});

test('an Agent calling two tools at once: the runner\'s items stored as one call group', async () => {
  const model = new ScriptedModel([
    [{ type: 'function_call', id: 'fc_x', callId: 'call_x', name: 'multiply', arguments: '{"a":2,"b":3}', status: 'completed' },
     { type: 'function_call', id: 'fc_y', callId: 'call_y', name: 'multiply', arguments: '{"a":4,"b":5}', status: 'completed' }],
    say('6 and 20.', 'msg_x'),
    (req) => {
      assert.deepEqual(texts(req.input), ['user:2x3 and 4x5?', 'call:multiply', 'call:multiply', 'result:6', 'result:20', 'assistant:6 and 20.', 'user:Thanks.']);
      return say('Welcome.', 'msg_y');
    },
  ]);
  const agent = new Agent({ name: 'calc', instructions: 'Use the tools.', model, tools: [multiply] });
  const session = new RecordingSession({ baseURL: server.url });
  assert.equal((await run(agent, '2x3 and 4x5?', { session })).finalOutput, '6 and 20.');
  const msgs = (await new MnemoClient({ baseURL: server.url }).history(await session.getSessionId())).messages;
  assert.deepEqual(msgs.map((m) => m.tool_calls?.map((c) => c.id) ?? m.role), ['user', ['call_x', 'call_y'], 'tool', 'tool', 'assistant']);
  await run(agent, 'Thanks.', { session });
  assert.deepEqual(await session.getItems(), session.given);
});

test('getItems(limit) counts items, not messages', async () => {
  const client = new MnemoClient({ baseURL: server.url });
  const { session: s } = await client.sessionCreate();
  await client.append(s.id, { messages: [
    { role: 'user', content: 'check both' },
    { role: 'assistant', content: 'Checking.', tool_calls: [
      { id: 'x1', type: 'function', function: { name: 'one', arguments: '{}' } },
      { id: 'x2', type: 'function', function: { name: 'two', arguments: '{}' } },
    ] },
  ] });
  const session = new MnemoSession({ baseURL: server.url, sessionId: s.id });
  assert.deepEqual(texts(await session.getItems(2)), ['call:one', 'call:two']);
  assert.deepEqual(texts(await session.getItems(4)), ['user:check both', 'assistant:Checking.', 'call:one', 'call:two']);
});

test('getItems(): the long-term memory block of the context is part of it', async () => {
  const mem = await startServer(dbTarget('agents-memory'), [], { MNEMO_MEMORY_CONTEXT: 'true' });
  try {
    const client = new MnemoClient({ baseURL: mem.url });
    await client.memoryAdd({ text: 'The user is called Ada.', pinned: true });
    const session = new MnemoSession({ baseURL: mem.url });
    await session.addItems([{ role: 'user', content: 'hello' }, { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi.' }] }]);
    const ctx = await client.contextBuild(await session.getSessionId());
    assert.match(ctx.messages[0].content, /^LONG-TERM MEMORY/);
    const items = await session.getItems();
    assert.equal(items.length, 3);
    assert.equal(items[0].role, 'system');
    assert.match(items[0].content, /^LONG-TERM MEMORY[^]*The user is called Ada\./);
    assert.deepEqual(texts(items.slice(1)), ['user:hello', 'assistant:Hi.']);
    // getItems(limit) stays the raw stored items
    assert.deepEqual(texts(await session.getItems(5)), ['user:hello', 'assistant:Hi.']);
  } finally {
    assert.equal(await stopServer(mem.proc), 0);
  }
});

test('options: a misspelt option name is a TypeError naming it', () => {
  assert.throws(() => new MnemoSession({ baseURL: server.url, sesionId: crypto.randomUUID() }),
    (e) => e instanceof TypeError && /sesionId/.test(e.message) && /sessionId/.test(e.message));
  assert.throws(() => new MnemoSession({ baseUrl: server.url }), (e) => e instanceof TypeError && /baseUrl/.test(e.message));
  assert.throws(() => new MnemoSession({ baseURL: server.url, maxToken: 10 }), /maxToken\b/);
  // client options next to a shared client would be ignored: refused, named
  const client = new MnemoClient({ baseURL: server.url });
  assert.throws(() => new MnemoSession({ client, apiKey: 'k' }), (e) => e instanceof TypeError && /apiKey/.test(e.message));
  assert.equal(new MnemoSession({ client, maxTokens: 10 }).client, client);
});

test('options: a value of the wrong type is refused naming the option, not ignored', async () => {
  const refused = (options, Err, message) => assert.throws(() => new MnemoSession({ baseURL: server.url, ...options }),
    (e) => e.constructor === Err && message.test(e.message), JSON.stringify(options));
  // an empty or non-string sessionId was dropped: a new session was made instead
  refused({ sessionId: '' }, TypeError, /^MnemoSession: sessionId must be a non-empty string \(a session's UUID or your own name for it\), not ''$/);
  refused({ sessionId: 0 }, TypeError, /sessionId must be a non-empty string \(a session's UUID or your own name for it\), not 0$/);
  refused({ maxTokens: '100' }, TypeError, /^MnemoSession: maxTokens must be a whole number from 0 to 100000000, not '100'$/);
  refused({ maxTokens: 1.5 }, RangeError, /maxTokens must be a whole number from 0 to 100000000, not 1\.5$/);
  refused({ strategy: 5 }, TypeError, /strategy must be a string, not 5$/);
  // a namespace of the wrong type was never sent when the session existed: refused all the same
  const { session: s } = await new MnemoClient({ baseURL: server.url }).sessionCreate();
  refused({ sessionId: s.id, namespace: 5 }, TypeError, /^MnemoSession: namespace must be a string, not 5$/);
  // null is absent, as undefined
  const session = new MnemoSession({ baseURL: server.url, sessionId: s.id, namespace: null, maxTokens: null, strategy: null });
  await session.addItems([{ role: 'user', content: 'hi' }]);
  assert.deepEqual(texts(await session.getItems()), ['user:hi']);
});

test('getItems(limit): a limit that is not a whole number is refused, not read as "every item"', async () => {
  const session = new MnemoSession({ baseURL: server.url });
  await session.addItems([{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }]);
  for (const limit of ['1', 'abc', NaN, true, 1.5, Infinity]) {
    await assert.rejects(session.getItems(limit), (e) => e instanceof TypeError &&
      /^MnemoSession\.getItems: limit must be a whole number, not /.test(e.message), String(limit));
  }
  assert.deepEqual(texts(await session.getItems(1)), ['user:two']);
  assert.deepEqual(await session.getItems(0), []); // none, as the Python package's get_items(0)
  assert.deepEqual(await session.getItems(-1), []);
  assert.deepEqual(texts(await session.getItems(null)), ['user:one', 'user:two']); // null: no limit
});
