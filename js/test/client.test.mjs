// client.test.mjs — the typed client against a real `mnemo serve`: every operation group
// (sessions, messages, context, state, summary/compact/events, search, admin, export/import, the
// Conversations API), the typed errors with the server's code and message, API keys, and a check
// that every operation of the server's table was called at least once here.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { MnemoClient, OPERATIONS, NotFoundError, InvalidError, UnauthorizedError, ForbiddenError, TooBigError,
  MnemoConnectionError, MnemoError } from '@mnemo/client';
import { dbTarget, startServer, stopServer } from './server.mjs';

// Every request the clients send, as "METHOD path", to check coverage at the end.
const seen = [];
const recording = (req, init) => { seen.push(`${init.method} ${new URL(req).pathname}`); return fetch(req, init); };

const { url, proc } = await startServer(dbTarget('client'));
after(async () => { assert.equal(await stopServer(proc), 0); });
const client = new MnemoClient({ baseURL: url, fetch: recording, maxRetries: 0 });

test('sessions: create, get, list, update, resume, fork, delete', async () => {
  const { session } = await client.sessionCreate({ title: 'plan', namespace: 'js', metadata: { k: 'v' } });
  assert.match(session.id, /^[0-9a-f-]{36}$/);
  assert.equal(session.namespace, 'js');
  assert.deepEqual(session.metadata, { k: 'v' });
  assert.equal((await client.sessionGet(session.id)).session.title, 'plan');
  await client.sessionCreate({ namespace: 'js' });
  const page = await client.sessionList({ namespace: 'js', limit: 1 });
  assert.equal(page.sessions.length, 1);
  assert.equal(page.has_more, true);
  const rest = await client.sessionList({ namespace: 'js', limit: 1, offset: page.next_offset });
  assert.notEqual(rest.sessions[0].id, page.sessions[0].id);
  const upd = await client.sessionUpdate(session.id, { title: 'renamed' });
  assert.equal(upd.session.title, 'renamed');
  assert.equal((await client.sessionResume({ namespace: 'js', session_id: session.id })).session.id, session.id);
  await client.append(session.id, { role: 'user', content: 'hello' });
  const fork = await client.sessionFork(session.id, { upto_seq: 0 });
  assert.equal(fork.session.parent_id, session.id);
  assert.equal((await client.history(fork.session.id)).messages[0].content, 'hello');
  assert.deepEqual(await client.sessionDelete(fork.session.id), { deleted: fork.session.id });
  await assert.rejects(client.sessionGet(fork.session.id), NotFoundError);
});

test('messages: append one and a batch, idempotency keys, history pages, delete, files', async () => {
  const { session } = await client.sessionCreate();
  const one = await client.append(session.id, { role: 'user', content: 'read a.c', files: ['src/a.c'] });
  assert.equal(one.messages[0].seq, 1);
  assert.equal(one.messages[0].role, 'user');
  const batch = await client.append(session.id, {
    messages: [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a.c"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'int main(void) { return 0; }' },
      { role: 'assistant', content: 'It returns 0.' },
    ],
  });
  assert.deepEqual(batch.messages.map((m) => m.seq), [2, 3, 4]);
  assert.equal(batch.messages[0].tool_calls[0].function.name, 'read');
  // the same key twice stores once, through the field and through the header
  const k1 = await client.append(session.id, { role: 'user', content: 'once', idempotency_key: 'k-1' });
  const k2 = await client.append(session.id, { role: 'user', content: 'once', idempotency_key: 'k-1' });
  assert.equal(k2.messages[0].id, k1.messages[0].id);
  const h1 = await client.append(session.id, { role: 'user', content: 'twice' }, { headers: { 'Idempotency-Key': 'k-2' } });
  const h2 = await client.append(session.id, { role: 'user', content: 'twice' }, { headers: { 'Idempotency-Key': 'k-2' } });
  assert.equal(h2.messages[0].id, h1.messages[0].id);
  const all = await client.history(session.id);
  assert.deepEqual(all.messages.map((m) => m.seq), [1, 2, 3, 4, 5, 6]);
  const pageA = await client.history(session.id, { limit: 4 });
  assert.equal(pageA.has_more, true);
  const pageB = await client.history(session.id, { after: pageA.next_after, limit: 4 });
  assert.deepEqual(pageB.messages.map((m) => m.seq), [5, 6]);
  const tail = await client.history(session.id, { tail: true, limit: 2 });
  assert.deepEqual(tail.messages.map((m) => m.content), ['once', 'twice']);
  const last = tail.messages[1];
  assert.deepEqual(await client.messageDelete(session.id, last.id), { deleted: last.id });
  assert.equal((await client.history(session.id)).messages.length, 5);
  assert.deepEqual((await client.sessionFiles(session.id)).files, ['src/a.c']);
  const edited = await client.messageEdit(session.id, one.messages[0].id, { content: 'read b.c', metadata: { fixed: true } });
  assert.deepEqual([edited.message.seq, edited.message.content, edited.message.metadata], [1, 'read b.c', { fixed: true }]);
  assert.deepEqual(await client.messagePin(session.id, one.messages[0].id), { id: one.messages[0].id, pinned: true });
  assert.equal((await client.history(session.id)).messages[0].pinned, true);
  assert.deepEqual(await client.messagePin(session.id, one.messages[0].id, { pinned: false }), { id: one.messages[0].id, pinned: false });
  await client.append(session.id, { role: 'user', content: 'and c.c', files: ['src/c.c'] });
  assert.deepEqual((await client.sessionFiles(session.id, { limit: 1 })).files, ['src/c.c']);
  const hand = await client.threadSummaryGet(session.id, { files: 1 });
  assert.deepEqual([hand.thread_id, hand.files], [session.id, ['src/c.c']]);
  assert.match(hand.text, /^## Conversation Context/);
  const created = await client.append(crypto.randomUUID(), { role: 'user', content: 'new', create: true });
  assert.equal(created.messages[0].seq, 1);
});

test('context: formats, a budget, the report', async () => {
  const { session } = await client.sessionCreate({ system_prompt: 'Be brief.' });
  for (let i = 0; i < 20; i++) {
    await client.append(session.id, { role: i % 2 ? 'assistant' : 'user', content: `turn ${i} ${'words '.repeat(20)}` });
  }
  const full = await client.contextBuild(session.id, { max_tokens: 100000 });
  assert.equal(full.format, 'openai');
  assert.equal(full.messages[0].role, 'system');
  assert.equal(full.messages.length, 21);
  const small = await client.contextBuild(session.id, { max_tokens: 120 });
  assert.ok(small.tokens <= 120, `tokens ${small.tokens} over the budget`);
  assert.ok(small.dropped > 0);
  assert.equal(small.report.messages.dropped, small.dropped);
  assert.match(small.messages.at(-1).content, /^turn 19 /);
  const text = await client.contextBuild(session.id, { format: 'text', max_tokens: 120 });
  assert.equal(typeof text.text, 'string');
  const anth = await client.contextBuild(session.id, { format: 'anthropic', max_tokens: 120 });
  assert.ok(anth.system !== undefined);
});

test('state, compaction, summary, events', async () => {
  const { session } = await client.sessionCreate();
  const merged = await client.stateMergeParams(session.id, { params: { city: 'Paris', n: 2 } });
  assert.equal(merged.state.params.city, 'Paris');
  await client.stateMergeParams(session.id, { params: { n: null } });
  assert.deepEqual((await client.stateGet(session.id)).state.params, { city: 'Paris' });
  await assert.rejects(client.summaryGet(session.id), NotFoundError); // nothing folded yet
  for (let i = 0; i < 12; i++) await client.append(session.id, { role: 'user', content: `fact number ${i}: the sky is blue on day ${i}.` });
  const { event } = await client.compact(session.id);
  assert.equal(event.kind, 'compaction');
  assert.equal(event.outcome, 'ok');
  const { summary } = await client.summaryGet(session.id);
  assert.equal(summary.session_id, session.id);
  assert.ok(summary.covers_upto > 0);
  const { events } = await client.events(session.id, { limit: 10 });
  assert.ok(events.some((e) => e.kind === 'compaction'));
});

test('the ask-user state flow, file dedup, clear and the turn limit', async () => {
  const { session } = await client.sessionCreate();
  assert.equal((await client.stateSetWaiting(session.id, { param: 'order_id' })).state.waiting_for_param, 'order_id');
  assert.equal((await client.stateUnwait(session.id)).state.waiting_for_param, null);
  const r = await client.stateSetResult(session.id, { intent_id: 'lookup', result: { found: true } });
  assert.deepEqual([r.state.last_intent_id, r.state.last_result], ['lookup', { found: true }]);
  assert.deepEqual((await client.stateSetPlan(session.id, { plan: ['a', 'b'] })).state.plan_execution, ['a', 'b']);
  assert.equal((await client.stateClear(session.id)).state.plan_execution, null);
  assert.equal((await client.fileShouldInclude(session.id, { path: 'a.c', content: 'x' })).include, true);
  assert.equal((await client.fileShouldInclude(session.id, { path: 'a.c', content: 'x' })).include, false);
  await client.append(session.id, { role: 'user', content: 'one' });
  await client.append(session.id, { role: 'user', content: 'two' });
  assert.equal((await client.sessionSetMaxTurns(session.id, { max_turns: 1 })).session.max_turns, 1);
  assert.equal((await client.sessionClear(session.id)).cleared, 1);
  await assert.rejects(client.stateSetWaiting(session.id, { param: 'x', wiat: 1 }), InvalidError); // misspelt: refused
});

test('search, stats, gc, prune', async () => {
  const { session } = await client.sessionCreate();
  await client.append(session.id, { role: 'user', content: 'the zanzibar protocol handshake' });
  const found = await client.search({ q: 'zanzibar', mode: 'keyword', top_k: 5 });
  assert.equal(found.mode, 'keyword');
  assert.equal(found.hits[0].message.session_id, session.id);
  assert.match(found.hits[0].message.content, /zanzibar/);
  await client.append(session.id, { role: 'user', content: 'zanzibar again', metadata: { topic: 'travel' } });
  const tagged = await client.search({ q: 'zanzibar', mode: 'keyword', metadata: { topic: 'travel' }, since: 1 });
  assert.deepEqual(tagged.hits.map((h) => h.message.content), ['zanzibar again']);
  const stats = await client.stats();
  assert.ok(stats.sessions >= 1 && stats.messages >= 1, JSON.stringify(stats));
  assert.equal(typeof (await client.gc()).purged, 'number');
  assert.equal((await client.prune({ days: 3650 })).deleted, 0);
});

test('namespace forget: every session and memory of it, for real', async () => {
  const { session } = await client.sessionCreate({ namespace: 'js-gone' });
  await client.memoryAdd({ text: 'a fact of js-gone', namespace: 'js-gone' });
  assert.deepEqual(await client.namespaceForget('js-gone'), { sessions: 1, memories: 1 });
  await assert.rejects(client.sessionGet(session.id), NotFoundError);
});

test('export and import: JSON Lines into another server', async () => {
  const { session } = await client.sessionCreate({ title: 'moved' });
  await client.append(session.id, { role: 'user', content: 'carried over' });
  const lines = await client.export({ ids: session.id });
  assert.equal(typeof lines, 'string');
  assert.ok(lines.trim().split('\n').length >= 2);
  const other = await startServer(dbTarget('client-import'));
  try {
    const c2 = new MnemoClient({ baseURL: other.url, fetch: recording });
    const r = await c2.import(lines);
    assert.deepEqual(r, { sessions_added: 1, sessions_skipped: 0, messages_added: 1, messages_skipped: 0 });
    assert.equal((await c2.history(session.id)).messages[0].content, 'carried over');
    assert.equal((await c2.import(lines)).sessions_skipped, 1);
  } finally {
    assert.equal(await stopServer(other.proc), 0);
  }
});

test('conversations: the OpenAI-shaped operations', async () => {
  const conv = await client.conversationCreate({ metadata: { topic: 'x' }, items: [{ role: 'user', content: 'hi' }] });
  assert.match(conv.id, /^conv_/);
  assert.equal((await client.conversationGet(conv.id)).id, conv.id);
  assert.deepEqual((await client.conversationUpdate(conv.id, { metadata: { topic: 'y' } })).metadata, { topic: 'y' });
  const added = await client.conversationItemsCreate(conv.id, { items: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }] });
  assert.equal(added.data[0].type, 'function_call');
  const list = await client.conversationItemsList(conv.id, { order: 'asc' });
  assert.equal(list.data.length, 2);
  assert.equal((await client.conversationItemGet(conv.id, list.data[1].id)).type, 'function_call');
  assert.equal((await client.conversationItemDelete(conv.id, list.data[1].id)).id, conv.id);
  assert.equal((await client.conversationDelete(conv.id)).deleted, true);
  const e = await client.conversationGet(conv.id).catch((x) => x);
  assert.ok(e instanceof NotFoundError);
  assert.equal(e.code, 'not_found');
});

test('errors: typed, with the server\'s status, code and message', async () => {
  const missing = crypto.randomUUID();
  const nf = await client.history(missing).catch((e) => e);
  assert.ok(nf instanceof NotFoundError && nf instanceof MnemoError);
  assert.equal(nf.status, 404);
  assert.equal(nf.code, 'not_found');
  assert.match(nf.message, new RegExp(missing));
  const { session } = await client.sessionCreate();
  const inv = await client.history(session.id, { limit: 10001 }).catch((e) => e);
  assert.ok(inv instanceof InvalidError);
  assert.equal(inv.status, 400);
  assert.equal(inv.code, 'invalid');
  assert.match(inv.message, /limit: 10001 is out of range 1\.\.10000/);
  const bad = await client.append(session.id, { role: 'tool', content: 'no call id' }).catch((e) => e);
  assert.ok(bad instanceof InvalidError);
  assert.match(bad.message, /tool_call_id/);
  const dead = new MnemoClient({ baseURL: 'http://127.0.0.1:1', maxRetries: 0 });
  const conn = await dead.stats().catch((e) => e);
  assert.ok(conn instanceof MnemoConnectionError);
  assert.equal(conn.status, undefined);
});

test('options: a misspelt option name is a TypeError naming it, never ignored', async () => {
  const e = (() => { try { new MnemoClient({ baseUrl: url }); } catch (x) { return x; } })();
  assert.ok(e instanceof TypeError, String(e));
  assert.match(e.message, /baseUrl/);
  assert.match(e.message, /baseURL/); // the known names are listed
  assert.throws(() => new MnemoClient({ baseURL: url, maxRetry: 0 }), /maxRetry\b/);
  // per-call options too: a misspelt one is refused before anything is sent
  const sent = seen.length;
  await assert.rejects(client.stats({ timeout: 5 }), (x) => x instanceof TypeError && /timeout/.test(x.message) && /timeoutMs/.test(x.message));
  assert.equal(seen.length, sent);
  // undefined values of known names are fine (the defaults apply)
  assert.equal(new MnemoClient({ baseURL: url, apiKey: undefined }).baseURL, url);
});

test('options: a value of the wrong type or out of range is refused naming the option, not coerced', async () => {
  const refused = (options, Err, message) => assert.throws(() => new MnemoClient({ baseURL: url, ...options }),
    (e) => e.constructor === Err && message.test(e.message), JSON.stringify(options));
  refused({ maxRetries: '3' }, TypeError, /^MnemoClient: maxRetries must be a whole number from 0 to \d+, not '3'$/);
  refused({ maxRetries: true }, TypeError, /maxRetries must be a whole number .*, not true$/);
  refused({ maxRetries: 1.5 }, RangeError, /maxRetries must be a whole number .*, not 1\.5$/);
  refused({ maxRetries: -1 }, RangeError, /maxRetries must be a whole number from 0 /);
  refused({ timeoutMs: '100' }, TypeError, /timeoutMs must be a whole number from 1 to \d+, not '100'$/);
  refused({ timeoutMs: 0 }, RangeError, /timeoutMs must be a whole number from 1 /);
  refused({ maxRetryDelayMs: '5' }, TypeError, /maxRetryDelayMs must be a whole number/);
  refused({ maxRetryDelayMs: -5 }, RangeError, /maxRetryDelayMs must be a whole number from 0 /);
  refused({ baseURL: 5 }, TypeError, /^MnemoClient: baseURL must be an http or https URL, not 5$/);
  refused({ baseURL: 'localhost:8765' }, TypeError, /baseURL must be an http or https URL, not 'localhost:8765'$/);
  refused({ apiKey: 5 }, TypeError, /apiKey must be a string, not 5$/);
  refused({ defaultHeaders: 'x' }, TypeError, /defaultHeaders must be an object of header names to strings, not 'x'$/);
  refused({ defaultHeaders: { 'x-n': 5 } }, TypeError, /defaultHeaders must be an object of header names to strings/);
  refused({ defaultHeaders: new Headers({ 'x-n': '5' }) }, TypeError, /defaultHeaders must be an object of header names to strings/);
  refused({ fetch: 'x' }, TypeError, /fetch must be a function, not 'x'$/);
  // per-call options too, before anything is sent
  const sent = seen.length;
  const callRefused = (options, Err, message) => assert.rejects(client.stats(options),
    (e) => e.constructor === Err && message.test(e.message), JSON.stringify(options));
  await callRefused({ maxRetries: '3' }, TypeError, /^stats: the per-call options: maxRetries must be a whole number from 0 to \d+, not '3'$/);
  await callRefused({ timeoutMs: '100' }, TypeError, /timeoutMs must be a whole number from 1 /);
  await callRefused({ timeoutMs: -1 }, RangeError, /timeoutMs must be a whole number from 1 /);
  await callRefused({ headers: 'x' }, TypeError, /headers must be an object of header names to strings, not 'x'$/);
  await callRefused({ signal: 'x' }, TypeError, /signal must be an AbortSignal, not 'x'$/);
  assert.equal(seen.length, sent);
  // the right types still work; null is absent, as undefined
  const ok = new MnemoClient({ baseURL: `${url}/`, fetch: recording, maxRetries: 0, timeoutMs: 5000, maxRetryDelayMs: 0, apiKey: null, defaultHeaders: { 'x-a': 'b' } });
  assert.equal(ok.baseURL, url);
  assert.equal(typeof (await ok.stats({ timeoutMs: 5000, maxRetries: 1, headers: { 'x-b': 'c' }, signal: new AbortController().signal })).messages, 'number');
});

test('query-string parameters keep their JSON types: a wrong type is refused as in a JSON body', async () => {
  const { session } = await client.sessionCreate();
  await client.append(session.id, { role: 'user', content: 'typed query' });
  // in a JSON body (a POST) the server refuses a string for an integer ...
  const posted = await client.contextBuild(session.id, { max_tokens: '100' }).catch((x) => x);
  assert.ok(posted instanceof InvalidError, String(posted));
  assert.match(posted.message, /^max_tokens: must be an integer/);
  // ... and so does the client in a query string (a GET), where the server only sees text
  const sent = seen.length;
  const cases = [
    [() => client.history(session.id, { limit: '5' }), /^limit: must be an integer, got string$/],
    [() => client.history(session.id, { limit: [5] }), /^limit: must be an integer, got array$/],
    [() => client.history(session.id, { tail: 1 }), /^tail: must be true or false, got number$/],
    [() => client.history(session.id, { tail: 'false' }), /^tail: must be true or false, got string$/],
    [() => client.search({ q: ['typed', 'query'] }), /^q: must be a string, got array$/],
    [() => client.search({ q: 'typed', top_k: '3' }), /^top_k: must be an integer, got string$/],
    [() => client.search({ q: 'typed', min_similarity: '0.5' }), /^min_similarity: must be a number, got string$/],
    [() => client.sessionList({ limit: '1' }), /^limit: must be an integer, got string$/],
    [() => client.events(session.id, { limit: '1' }), /^limit: must be an integer, got string$/],
    [() => client.memoryList({ limit: '1' }), /^limit: must be an integer, got string$/],
  ];
  for (const [call, message] of cases) {
    const e = await call().catch((x) => x);
    assert.ok(e instanceof InvalidError, String(e));
    assert.equal(e.code, 'invalid');
    assert.equal(e.status, undefined);
    assert.match(e.message, message);
  }
  assert.equal(seen.length, sent);
  // the right types pass, and each second form the table declares (metadata as JSON text)
  assert.deepEqual((await client.history(session.id, { limit: 5, tail: true })).messages.map((m) => m.content), ['typed query']);
  assert.equal((await client.search({ q: 'typed', mode: 'keyword', metadata: '{}', min_similarity: 0 })).mode, 'keyword');
  // out of range stays the server's refusal
  const range = await client.history(session.id, { limit: 0 }).catch((x) => x);
  assert.equal(range.status, 400);
  assert.match(range.message, /^limit: 0 is out of range 1\.\.10000/);
});

test('session keys: any string in place of the id; one a URL path cannot carry is refused before sending', async () => {
  const key = 'café chat #1 ?x=1&y 50%';
  await client.append(key, { create: true, role: 'user', content: 'hi' });
  const { session } = await client.sessionGet(key);
  assert.equal(session.key, key);
  assert.deepEqual((await client.history(key)).messages.map((m) => m.content), ['hi']);
  assert.deepEqual((await client.history(session.id)).messages.map((m) => m.content), ['hi']);
  // "/", "." and "..": fetch or the server would read them as path syntax (another route)
  const sent = seen.length;
  for (const bad of ['team/a', '.', '..']) {
    const e = await client.history(bad).catch((x) => x);
    assert.ok(e instanceof InvalidError, String(e));
    assert.equal(e.status, undefined);
    assert.equal(e.message, `session_id: '${bad}' cannot be sent in a URL path ("/", "." and ".." are path syntax); the session's UUID can be (sessionResume({ session_id }) finds it)`);
  }
  assert.equal(seen.length, sent);
  // a query or a body carries any key
  const made = (await client.sessionCreate({ key: 'team/a' })).session;
  assert.equal((await client.sessionResume({ session_id: 'team/a' })).session.id, made.id);
});

test('errors: a body over --max-body is TooBigError', async () => {
  const small = await startServer(dbTarget('client-small'), ['--max-body', '1024']);
  try {
    const c = new MnemoClient({ baseURL: small.url, fetch: recording });
    const { session } = await c.sessionCreate();
    const e = await c.append(session.id, { role: 'user', content: 'x'.repeat(4096) }).catch((x) => x);
    assert.ok(e instanceof TooBigError, String(e));
    assert.equal(e.status, 413);
    assert.equal(e.code, 'too_big');
  } finally {
    assert.equal(await stopServer(small.proc), 0);
  }
});

test('API keys: Bearer sent, 401 and 403 typed', async () => {
  const keyed = await startServer(dbTarget('client-keys'), ['--api-key-env', 'JS_KEY', '--key-namespace', 'team'], { JS_KEY: 'secret-1' });
  try {
    const good = new MnemoClient({ baseURL: keyed.url, apiKey: 'secret-1', fetch: recording });
    const { session } = await good.sessionCreate();
    assert.equal(session.namespace, 'team');
    const e401 = await new MnemoClient({ baseURL: keyed.url, apiKey: 'wrong' }).stats().catch((x) => x);
    assert.ok(e401 instanceof UnauthorizedError);
    assert.equal(e401.code, 'unauthorized');
    const none = await new MnemoClient({ baseURL: keyed.url }).sessionGet(session.id).catch((x) => x);
    assert.ok(none instanceof UnauthorizedError);
    const e403 = await good.stats().catch((x) => x);
    assert.ok(e403 instanceof ForbiddenError);
    assert.equal(e403.status, 403);
    // a key bound to a namespace may forget only its own
    assert.ok((await good.namespaceForget('not-team').catch((x) => x)) instanceof ForbiddenError);
    assert.equal((await good.sessionGet(session.id)).session.id, session.id);
  } finally {
    assert.equal(await stopServer(keyed.proc), 0);
  }
});

test('long-term memories: remember, list, recall, get, update, history, delete, forget', async () => {
  const { memory } = await client.memoryAdd({ text: 'The user prefers tea over coffee', kind: 'preference' });
  assert.equal(memory.text, 'The user prefers tea over coffee');
  const id = memory.id;
  assert.ok((await client.memoryList()).memories.some((m) => m.id === id));
  assert.ok((await client.memorySearch({ q: 'tea', mode: 'keyword' })).memories.some((m) => m.id === id));
  assert.equal((await client.memoryGet(id)).memory.text, 'The user prefers tea over coffee');
  await client.memoryUpdate(id, { text: 'The user prefers green tea', reason: 'corrected' });
  assert.equal((await client.memoryGet(id)).memory.text, 'The user prefers green tea');
  assert.ok((await client.memoryHistory(id)).versions.length >= 2, 'both versions are kept');
  await client.memoryDelete(id, { reason: 'no longer true' });
  assert.ok(!(await client.memoryList()).memories.some((m) => m.id === id), 'a deleted fact is not current');
  assert.equal((await client.memoryForget(id)).forgotten, id);
  await assert.rejects(client.memoryHistory(id), NotFoundError);

  // extraction from a session's turns, once: a second run reads nothing new
  const { session } = await client.sessionCreate({ namespace: 'ts-extract' });
  await client.append(session.id, { role: 'user', content: 'Remember that the build runs on Fridays.' });
  const x = await client.memoryExtract(session.id, { extractor: 'offline' });
  assert.deepEqual([x.messages, x.added], [1, 1]);
  assert.deepEqual([(await client.memoryExtract(session.id)).messages], [0]);
});

test('extraction jobs: queue, then poll the job until it ends', async () => {
  const { session } = await client.sessionCreate({ namespace: 'ts-jobs' });
  await client.append(session.id, { role: 'user', content: 'My name is Ada' });
  await client.append(session.id, { role: 'user', content: 'I live in Paris' });
  const queued = await client.memoryExtractQueue(session.id, { data: { ticket: 7 } });
  assert.deepEqual([queued.session_id, queued.namespace, queued.data, queued.upto_seq, queued.error],
    [session.id, 'ts-jobs', { ticket: 7 }, 2, null]);
  let job = queued;
  for (let i = 0; i < 2400 && ['pending', 'running'].includes(job.state); i++) {
    await new Promise((r) => setTimeout(r, 50));
    job = await client.memoryExtractJob(queued.id);
  }
  assert.equal(job.state, 'done', JSON.stringify(job));
  assert.ok(job.finished_at >= job.queued_at);
  assert.deepEqual((await client.memoryList({ namespace: 'ts-jobs' })).memories.map((m) => m.text).sort(),
    ['User lives in Paris', "User's name is Ada"]);
  await assert.rejects(client.memoryExtractJob('not-a-job'), (e) => e instanceof InvalidError && /job_id/.test(e.message));
  await assert.rejects(client.memoryExtractJob('0190a000-0000-7000-8000-000000000000'), NotFoundError);
});

test('the Mem0-shaped operations (docs/memory.md)', async () => {
  assert.equal((await client.mem0Ping()).status, 'ok');
  const added = await client.mem0Add({ messages: [{ role: 'user', content: 'My editor is vim.' }], user_id: 'ts-u' });
  assert.equal(added[0].event, 'ADD');
  const id = added[0].id;
  assert.equal((await client.mem0List({ filters: { user_id: 'ts-u' } })).count, 1);
  assert.equal((await client.mem0Search({ query: 'editor', filters: { user_id: 'ts-u' } })).results[0].id, id);
  assert.equal((await client.mem0Get(id)).memory, "User's editor is vim");
  assert.equal((await client.mem0Update(id, { text: 'User edits in vim' })).version, 2);
  assert.deepEqual((await client.mem0History(id)).map((h) => h.event), ['ADD', 'UPDATE']);
  assert.equal((await client.mem0Delete(id)).message, 'Memory deleted successfully!');
  await assert.rejects(client.mem0Get(id), NotFoundError);
  await client.mem0Add({ messages: [{ role: 'user', content: 'I prefer dark mode.' }], user_id: 'ts-u' });
  assert.equal((await client.mem0DeleteAll({ user_id: 'ts-u' })).deleted, 1);
  // an async add: its event at once, PENDING; polled until the background extraction ends
  const queued = await client.mem0Add({ messages: [{ role: 'user', content: 'My terminal is kitty.' }], user_id: 'ts-a', async_mode: true });
  assert.equal(queued.status, 'PENDING');
  let event = await client.mem0Event(queued.event_id);
  for (let i = 0; i < 600 && ['PENDING', 'RUNNING'].includes(event.status); i++) {
    await new Promise((r) => setTimeout(r, 50));
    event = await client.mem0Event(queued.event_id);
  }
  assert.equal(event.status, 'SUCCEEDED', JSON.stringify(event));
  assert.deepEqual(event.results.map((r) => r.memory), ["User's terminal is kitty"]);
  // entities and batches
  const [one, two] = await Promise.all(['My shell is zsh.', 'My desk is oak.'].map(async (content) =>
    (await client.mem0Add({ messages: [{ role: 'user', content }], user_id: 'ts-b', infer: false }))[0].id));
  assert.ok((await client.mem0Entities()).results.some((e) => e.name === 'ts-b' && e.type === 'user'));
  await client.mem0BatchUpdate({ memories: [{ memory_id: one, text: 'My shell is fish.' }] });
  assert.equal((await client.mem0Get(one)).memory, 'My shell is fish.');
  await client.mem0BatchDelete({ memories: [{ memory_id: one }] });
  await assert.rejects(client.mem0Get(one), NotFoundError);
  await client.mem0EntityDelete('user', 'ts-b');
  await assert.rejects(client.mem0Get(two), NotFoundError);
});

test('checkpoints: put, put writes, get, list, delete a thread', async () => {
  const thread_id = 'cp-thread';
  // writes may come before their checkpoint (LangGraph saves them as a step makes them)
  await client.checkpointPutWrites({ thread_id, checkpoint_id: '1', writes: [{ task_id: 't', idx: 0, channel: 'c', type: 'json', value: btoa('1') }] });
  await client.checkpointPut({ thread_id, checkpoint_id: '1', type: 'json', checkpoint: btoa('{}'), metadata: { step: -1 } });
  assert.equal((await client.checkpointGet({ thread_id })).checkpoint.pending_writes.length, 1);
  assert.equal((await client.checkpointList({ thread_id, filter: { step: -1 } })).checkpoints.length, 1);
  assert.equal((await client.checkpointList({ thread_id, filter: { step: 0 } })).checkpoints.length, 0);
  assert.equal((await client.checkpointDeleteThread({ thread_id })).deleted, 1);
  await assert.rejects(client.checkpointGet({ thread_id }), NotFoundError);
});

test('documents: put, get, search, paths, delete', async () => {
  const put = await client.documentPut({ path: 'users.alice', key: 'prefs', value: { theme: 'dark' }, ttl_ms: 60_000, namespace: 'js' });
  assert.deepEqual([put.document.path, put.document.key, put.document.value], ['users.alice', 'prefs', { theme: 'dark' }]);
  assert.equal((await client.documentGet({ path: 'users.alice', key: 'prefs', refresh_ttl: false, namespace: 'js' })).document.value.theme, 'dark');
  assert.deepEqual((await client.documentSearch({ prefix: 'users', filter: { theme: 'dark' }, namespace: 'js' })).documents.map((d) => d.key), ['prefs']);
  assert.deepEqual((await client.documentPaths({ prefix: 'users', max_depth: 1, namespace: 'js' })).paths, ['users']);
  assert.deepEqual(await client.documentDelete({ path: 'users.alice', key: 'prefs', namespace: 'js' }), { deleted: 1 });
  await assert.rejects(client.documentGet({ path: 'users.alice', key: 'prefs', namespace: 'js' }), NotFoundError);
});

test('older method names (docs/names.md) are deprecated aliases of the same operations', async () => {
  assert.ok(!('context' in OPERATIONS) && 'context_build' in OPERATIONS, 'OPERATIONS names each operation once');
  const { session } = await client.sessionCreate({ namespace: 'js-names' });
  await client.append(session.id, { role: 'user', content: 'hi' });
  assert.deepEqual(await client.context(session.id, { max_tokens: 100 }), await client.contextBuild(session.id, { max_tokens: 100 }));
  assert.equal((await client.sessionLimit(session.id, { max_turns: 3 })).session.max_turns, 3);
  assert.deepEqual((await client.stateMerge(session.id, { params: { a: 1 } })).state.params, { a: 1 });
  const { memory } = await client.remember({ text: 'an alias wrote this', namespace: 'js-names' });
  assert.equal((await client.recall({ q: 'alias', mode: 'keyword', namespace: 'js-names' })).memories[0].id, memory.id);
  assert.equal((await client.forget(memory.id)).forgotten, memory.id);
});

test('every operation of the server was called by these tests', () => {
  const missing = Object.entries(OPERATIONS).filter(([, op]) => {
    const re = new RegExp(`^${op.method} ${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    return !seen.some((s) => re.test(s));
  }).map(([name]) => name);
  assert.deepEqual(missing, [], `operations no test calls: ${missing.join(', ')}`);
});
