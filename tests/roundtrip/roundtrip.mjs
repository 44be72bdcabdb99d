// roundtrip.mjs — the cross-language round trip (ctest interop/roundtrip, pg/interop/roundtrip):
// one database, one real `mnemo serve` on it, and four readers that must agree:
//   Python     mnemo.Memory over libmnemo (views.py, run in the package's venv)
//   CLI        the built `mnemo` command (--json outputs)
//   REST       the server's raw HTTP answers (context bytes)
//   TypeScript @mnemo/client's typed methods over that server
// Python writes data.json's session and all four read it identically; the TypeScript client
// writes the same session through the server and all four read that identically; and both
// sessions hold the same thing (ids and timestamps aside). Compared: the session, the session
// list of its namespace, the history (every field of every message), the state, the context
// (rendered bytes for openai/anthropic/text, with and without a budget, the report and its
// counts), search hits and the export (JSON Lines, byte for byte). And the OpenAI Agents SDK
// sessions (python/mnemo/agents.py, js/src/agents.ts): each reads back exactly the items the
// other wrote, and both store the same items as the same messages.
//
// Environment (run.sh): MNEMO, MNEMO_JS_DIR (the built package), MNEMO_VENV_PYTHON,
// MNEMO_PY_PRELOAD / MNEMO_PY_ASAN_OPTIONS (python only, ASan builds), MNEMO_TEST_TMP,
// MNEMO_TEST_PG_URL in the pg/ variant (a fresh database on the fixture's server).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { MNEMO, MNEMO_JS_DIR, MNEMO_VENV_PYTHON } = process.env;
assert.ok(MNEMO && MNEMO_JS_DIR && MNEMO_VENV_PYTHON, 'MNEMO, MNEMO_JS_DIR and MNEMO_VENV_PYTHON must be set (run.sh)');
const { MnemoClient } = await import(pathToFileURL(join(MNEMO_JS_DIR, 'dist', 'index.js')).href);
// the js package's own test helpers: a scratch HOME, a fresh database, `mnemo serve` on port 0
const { tmp, dbTarget, startServer, stopServer } = await import(pathToFileURL(join(MNEMO_JS_DIR, 'test', 'server.mjs')).href);

const DATA_FILE = join(here, 'data.json');
const data = JSON.parse(readFileSync(DATA_FILE, 'utf8'));
const db = dbTarget('roundtrip');

const baseEnv = { ...process.env, HOME: tmp, XDG_CONFIG_HOME: join(tmp, 'cfg'), XDG_DATA_HOME: join(tmp, 'data') };
for (const k of Object.keys(baseEnv)) if (k.startsWith('MNEMO_') && k !== 'MNEMO_TEST_TMP') delete baseEnv[k];
delete baseEnv.LD_PRELOAD;
const pyEnv = { ...baseEnv, MNEMO_LIBRARY: process.env.MNEMO_LIBRARY };
if (process.env.MNEMO_PY_PRELOAD) {
  pyEnv.LD_PRELOAD = process.env.MNEMO_PY_PRELOAD;
  pyEnv.ASAN_OPTIONS = process.env.MNEMO_PY_ASAN_OPTIONS;
}

const run = (exe, args, env) => execFileSync(exe, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
const python = (...args) => JSON.parse(run(MNEMO_VENV_PYTHON, [join(here, 'views.py'), ...args, DATA_FILE], pyEnv));
const cli = (...args) => run(MNEMO, ['--db', db, ...args], baseEnv);
const contextKey = (c) => `${c.format}@${c.max_tokens ?? 0}`;

const { url, proc } = await startServer(db);
after(async () => { assert.equal(await stopServer(proc), 0, 'mnemo serve exits 0 on SIGTERM'); });
const client = new MnemoClient({ baseURL: url, maxRetries: 0 });

/** What the CLI reads of session sid. */
function cliViews(sid) {
  const session = JSON.parse(cli('session', 'show', sid, '--json'));
  const v = {
    session,
    sessions: JSON.parse(cli('session', 'list', '--namespace', session.namespace, '--json')),
    history: JSON.parse(cli('history', sid, '--json')),
    state: JSON.parse(cli('state', sid)),
    export: cli('export', sid),
    context: {},
    search: {},
  };
  for (const c of data.contexts) {
    const opts = ['--format', c.format, ...(c.max_tokens ? ['--max-tokens', String(c.max_tokens)] : [])];
    const out = cli('context', sid, ...opts);
    const withReport = cli('context', sid, ...opts, '--report', '--json');
    // JSON formats: RENDERED + "\n"; text: the text as it is (docs/cli.md#context)
    const rendered = c.format === 'text' ? out : out.replace(/\n$/, '');
    const report = c.format === 'text'
      ? JSON.parse(withReport.slice(withReport.lastIndexOf('--- report\n') + '--- report\n'.length))
      : JSON.parse(withReport).report;
    if (c.format !== 'text') assert.deepEqual(JSON.parse(withReport).messages, JSON.parse(rendered), `CLI ${contextKey(c)}: --report's messages are the rendered ones`);
    v.context[contextKey(c)] = { rendered, report, tokens: report.tokens, kept: report.messages.kept, dropped: report.messages.dropped };
  }
  for (const q of data.searches) v.search[q] = JSON.parse(cli('search', q, '--session', sid, '--json'));
  return v;
}

/** The rendered context inside the server's raw answer to POST …/context, byte for byte. */
function renderedOf(raw, format) {
  const end = raw.lastIndexOf(',"report":');
  if (format === 'text') return JSON.parse(raw).text;
  const prefix = `{"format":"${format}",`;
  assert.ok(raw.startsWith(prefix) && end > 0, `REST ${format}: an answer of an unexpected shape: ${raw.slice(0, 80)}`);
  if (format === 'openai') {
    assert.ok(raw.startsWith(prefix + '"messages":'));
    return raw.slice(prefix.length + '"messages":'.length, end);
  }
  return `{${raw.slice(prefix.length, end)}}`; // anthropic: the rendered object's members join the answer's
}

/** What the server (raw REST for the context bytes) and the TypeScript client read of session sid. */
async function serverViews(sid) {
  const { session } = await client.sessionGet(sid);
  const v = {
    session,
    sessions: (await client.sessionList({ namespace: session.namespace })).sessions,
    history: (await client.history(sid, { limit: 10000 })).messages,
    state: (await client.stateGet(sid)).state,
    export: await client.export({ ids: sid }),
    context: {},
    search: {},
  };
  for (const c of data.contexts) {
    const params = { format: c.format, ...(c.max_tokens ? { max_tokens: c.max_tokens } : {}) };
    const raw = await client.request('POST', new URL(`${url}/v1/sessions/${encodeURIComponent(sid)}/context`),
      { 'content-type': 'application/json', accept: 'application/json' }, JSON.stringify(params), true);
    const rendered = renderedOf(raw, c.format);
    const typed = await client.context(sid, params);
    // the typed answer carries what the bytes say
    if (c.format === 'text') assert.equal(typed.text, rendered);
    else if (c.format === 'openai') assert.deepEqual(typed.messages, JSON.parse(rendered), `TS ${contextKey(c)}: messages`);
    else {
      const { messages, system } = JSON.parse(rendered);
      assert.deepEqual(typed.messages, messages, `TS ${contextKey(c)}: messages`);
      assert.deepEqual(typed.system, system, `TS ${contextKey(c)}: system`);
    }
    v.context[contextKey(c)] = { rendered, report: typed.report, tokens: typed.tokens, kept: typed.kept, dropped: typed.dropped };
  }
  for (const q of data.searches) v.search[q] = (await client.search({ q, session_id: sid })).hits;
  return v;
}

/** Asserts that two readers' views agree, one aspect at a time so that a failure names it. */
function sameViews(a, b, what) {
  for (const k of ['session', 'sessions', 'history', 'state', 'export']) assert.deepEqual(b[k], a[k], `${what}: ${k}`);
  for (const k of Object.keys(a.context)) assert.deepEqual(b.context[k], a.context[k], `${what}: context ${k}`);
  for (const k of Object.keys(a.search)) assert.deepEqual(b.search[k], a.search[k], `${what}: search "${k}"`);
}

/** What was stored is what data.json says, and the budgets did drop messages. */
function storedAsWritten(v) {
  const want = [data.first, ...data.rest];
  assert.equal(v.history.length, want.length, 'one message per append; the retried key stored nothing new');
  want.forEach((m, i) => {
    const got = v.history[i];
    assert.equal(got.seq, i + 1);
    for (const [k, val] of Object.entries(m)) assert.deepEqual(got[k], val, `message ${i + 1}: ${k}`);
  });
  for (const [k, val] of Object.entries(data.session)) assert.deepEqual(v.session[k], val, `session: ${k}`);
  for (const [k, val] of Object.entries(data.state)) assert.deepEqual(v.state.params[k], val, `state.params.${k}`);
  for (const c of data.contexts.filter((x) => x.max_tokens)) {
    const ctx = v.context[contextKey(c)];
    assert.ok(ctx.dropped > 0, `${contextKey(c)}: the budget drops messages (raise or lower it in data.json)`);
  }
  for (const q of data.searches) assert.ok(v.search[q].length > 0, `search "${q}" finds something`);
  assert.equal(v.export.split('\n').filter(Boolean).length, 2 + want.length, 'export: a header, a session line and one per message');
}

// Ids and timestamps differ between two writers; everything else must not.
const VOLATILE = new Set(['id', 'session_id', 'created_at', 'updated_at', 'query_message_id']);
const strip = (x) => Array.isArray(x) ? x.map(strip)
  : x && typeof x === 'object' ? Object.fromEntries(Object.entries(x).filter(([k]) => !VOLATILE.has(k)).map(([k, v]) => [k, strip(v)]))
    : x;

let pySid, tsSid;

test('Python writes; the CLI, the REST server and the TypeScript client read what Python reads', async () => {
  const w = python('write', db);
  pySid = w.session_id;
  assert.equal(w.retry_id, w.first_id, 'Python: a retried idempotency key returns the first message');
  const py = python('read', db, pySid);
  storedAsWritten(py);
  sameViews(py, cliViews(pySid), 'CLI vs Python');
  sameViews(py, await serverViews(pySid), 'REST/TypeScript vs Python');
});

test('the TypeScript client writes through the server; Python and the CLI read what the server reads', async () => {
  const { session } = await client.sessionCreate(data.session);
  tsSid = session.id;
  const first = (await client.append(tsSid, data.first)).messages[0];
  const retry = (await client.append(tsSid, data.first)).messages[0];
  assert.equal(retry.id, first.id, 'TypeScript: a retried idempotency key returns the first message');
  await client.append(tsSid, { messages: data.rest });
  await client.stateMerge(tsSid, { params: data.state });
  const srv = await serverViews(tsSid);
  storedAsWritten(srv);
  sameViews(srv, python('read', db, tsSid), 'Python vs REST/TypeScript');
  sameViews(srv, cliViews(tsSid), 'CLI vs REST/TypeScript');
});

test('both writers stored the same session (ids and timestamps aside)', () => {
  assert.ok(pySid && tsSid, 'the two tests above ran');
  const a = python('read', db, pySid);
  const b = python('read', db, tsSid);
  for (const k of ['session', 'history', 'state']) assert.deepEqual(strip(b[k]), strip(a[k]), k);
  assert.deepEqual(strip(b.context), strip(a.context), 'context: rendered bytes, report and counts (the retrieved ids aside)');
  for (const q of data.searches) assert.deepEqual(strip(b.search[q]), strip(a.search[q]), `search "${q}"`);
  const lines = (text) => text.split('\n').filter(Boolean).map((l) => strip(JSON.parse(l)));
  assert.deepEqual(lines(b.export), lines(a.export), 'export');
});

// Each package writes its own SDK's item shapes (call_id / callId, function_call_output /
// function_call_result). Both store parallel function calls as one assistant message (metadata
// "agents_items"), read back as the calls, and pop the newest call of one alike.
test('agents sessions: each package reads back exactly the items the other wrote', async () => {
  const { MnemoSession } = await import(pathToFileURL(join(MNEMO_JS_DIR, 'dist', 'agents.js')).href);
  const { python: pyItems, typescript: tsItems } = data.agents;
  const fromPython = python('agents-write', db, 'python').session_id;
  const reader = new MnemoSession({ client, sessionId: fromPython });
  assert.deepEqual(await reader.getItems(), pyItems, 'TypeScript getItems() of the items Python added');
  assert.deepEqual(await reader.getItems(3), pyItems.slice(-3), 'TypeScript getItems(3) of the items Python added');
  assert.deepEqual(python('agents-read', db, fromPython).items, pyItems, 'Python get_items() of its own items');

  const writer = new MnemoSession({ client });
  await writer.addItems(structuredClone(tsItems));
  const fromTs = python('agents-read', db, await writer.getSessionId());
  assert.deepEqual(fromTs.items, tsItems, 'Python get_items() of the items TypeScript added');
  assert.deepEqual(fromTs.tail, tsItems.slice(-3), 'Python get_items(limit=3) of the items TypeScript added');

  const sameItems = python('agents-write', db, 'typescript').session_id;
  assert.deepEqual(strip(python('agents-read', db, sameItems).history), strip(fromTs.history),
    'the TypeScript items added by Python are the messages TypeScript stored');

  // the answer, two results, then the last of two parallel calls: the message keeps the first
  assert.deepEqual(python('agents-pop', db, sameItems, '4').popped, tsItems.slice(-4).reverse(), 'Python pop_item()');
  const popped = [];
  for (let i = 0; i < 4; i++) popped.push(await writer.popItem());
  assert.deepEqual(popped, tsItems.slice(-4).reverse(), 'TypeScript popItem()');
  assert.deepEqual(strip(python('agents-read', db, sameItems).history), strip(python('agents-read', db, await writer.getSessionId()).history),
    'a call popped from a call group leaves the same message in both');
});
