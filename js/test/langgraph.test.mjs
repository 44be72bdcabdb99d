// langgraph.test.mjs — MnemoSaver, the LangGraph.js checkpointer, against real `mnemo serve`s:
// LangGraph's conformance suite (langgraph_validation.spec.mjs, run by vitest); the same calls on
// MnemoSaver and on MemorySaver strictly equal; a thread as a mnemo session; real StateGraphs
// from @langchain/langgraph (pinned in js/package.json): docs/js.md's example as written, and an
// interrupted graph resumed by a second saver on another client.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt } from '@langchain/langgraph';
import { ERROR, INTERRUPT, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { MnemoClient } from '@mnemo/client';
import { MnemoSaver } from '@mnemo/client/langgraph';
import { dbTarget, startServer, stopServer } from './server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..'); // the built package (build.sh)

const { url, proc } = await startServer(dbTarget('langgraph'));
after(async () => { assert.equal(await stopServer(proc), 0); });

const fresh = (options = {}) => new MnemoSaver({ baseURL: url, namespace: `lg-${crypto.randomUUID()}`, ...options });

async function all(iterator) {
  const out = [];
  for await (const t of iterator) out.push(t);
  return out;
}

test('LangGraph\'s conformance suite for checkpointers passes on MnemoSaver', async () => {
  // vitest's own process, as the suite needs its runner; it starts a server of its own
  const child = spawn(join(pkg, 'node_modules', '.bin', 'vitest'), ['run', '--globals', '--root', here, 'langgraph_validation.spec.mjs'],
    { cwd: pkg, env: { ...process.env, CI: '1', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0, out);
  const tests = out.match(/^\s*Tests\s+(.*)$/m)?.[1];
  assert.match(tests ?? '', /^\d+ passed \(\d+\)$/, out); // nothing failed or skipped
});

const ids = Array.from({ length: 6 }, () => uuid6(0)); // ascending, as LangGraph's are
const checkpoint = (id, channel_values, v = 4) => ({
  ...emptyCheckpoint(), v, id, ts: '2026-11-29T12:00:00.000Z', channel_values,
  channel_versions: Object.fromEntries(Object.keys(channel_values).map((k) => [k, 1])),
});
const meta = (source, step, extra = {}) => ({ source, step, parents: {}, ...extra });
// the tuples of a list that spans threads or namespaces, in one order (MemorySaver goes thread by
// thread, the server by id)
const sorted = (tuples) => tuples.slice().sort((a, b) => {
  const key = (t) => [t.config.configurable.thread_id, t.config.configurable.checkpoint_ns, t.checkpoint.id].join('\n');
  return key(a) < key(b) ? -1 : 1;
});

// The same calls on any saver; what they returned.
async function script(saver) {
  const T = 'user-42-chat', U = 'team/a chat?';
  const big = 'x'.repeat(100_000); // base64 made in slices
  const c0 = await saver.put({ configurable: { thread_id: T } }, checkpoint(ids[0], { messages: ['hi'], big }),
    meta('input', -1, { user: 'ann' }), { messages: 1, big: 1 });
  await saver.putWrites(c0, [['messages', ['a']], [ERROR, 'boom']], 'task-b', 'path-2');
  // idx 0 of task-b is stored: kept; the error is a special channel's: replaced
  await saver.putWrites(c0, [['messages', ['b']], [ERROR, 'boom again']], 'task-b', 'path-2');
  await saver.putWrites(c0, [['messages', ['c']]], 'task-a'); // no path: first
  await saver.putWrites(c0, [[INTERRUPT, { value: 'approve?' }], ['extra', new Set([1, 2])]], 'task-c', 'path-1');
  const c1 = await saver.put(c0, checkpoint(ids[1], { messages: ['hi', 'a'], big, odd: { m: new Map([['k', 1]]), u: undefined } }),
    meta('loop', 0, { user: 'bob', note: undefined }), { messages: 2, odd: 1 });
  const c2 = await saver.put(c1, checkpoint(ids[2], { messages: ['hi', 'a', 'b'] }), meta('loop', 1, { user: 'ann', tags: ['x'] }), { messages: 3 });
  await saver.put({ configurable: { thread_id: T, checkpoint_ns: 'child:1' } }, checkpoint(ids[3], { x: 1 }), meta('input', -1), { x: 1 });
  await saver.put({ configurable: { thread_id: U } }, checkpoint(ids[4], {}), meta('input', -1, { user: 'ann' }), {});
  const root = { configurable: { thread_id: T, checkpoint_ns: '' } };
  const got = {
    latest: await saver.getTuple({ configurable: { thread_id: T } }),
    first: await saver.getTuple(c0),
    byThreadTs: await saver.getTuple({ configurable: { thread_id: T, thread_ts: ids[1] } }),
    sub: await saver.getTuple({ configurable: { thread_id: T, checkpoint_ns: 'child:1' } }),
    other: await saver.getTuple({ configurable: { thread_id: U } }),
    noThread: await saver.getTuple({ configurable: {} }),
    missingThread: await saver.getTuple({ configurable: { thread_id: 'nobody' } }),
    missingId: await saver.getTuple({ configurable: { thread_id: T, checkpoint_ns: '', checkpoint_id: ids[5] } }),
    thread: await all(saver.list(root)),
    before: await all(saver.list(root, { before: c2 })),
    limit: await all(saver.list(root, { limit: 2 })),
    noLimit: await all(saver.list(root, { limit: 0 })),
    byId: await all(saver.list({ configurable: { ...root.configurable, checkpoint_id: ids[1] } })),
    ann: sorted(await all(saver.list({}, { filter: { user: 'ann' } }))),
    annLimit: await all(saver.list(root, { filter: { user: 'ann' }, limit: 1 })),
    loop1: await all(saver.list({ configurable: { thread_id: T } }, { filter: { source: 'loop', step: 1 } })),
    emptyFilter: sorted(await all(saver.list({ configurable: { thread_id: T } }, { filter: {} }))),
    everything: sorted(await all(saver.list({}))),
    sub2: await all(saver.list({ configurable: { checkpoint_ns: 'child:1' } })),
  };
  await saver.deleteThread(U);
  await saver.deleteThread('never-made');
  got.afterDelete = sorted(await all(saver.list({})));
  got.deleted = await saver.getTuple({ configurable: { thread_id: U } });
  return got;
}

test('the same calls give what MemorySaver gives, strictly', async () => {
  const saver = fresh();
  const mine = await script(saver);
  const theirs = await script(new MemorySaver());
  assert.deepStrictEqual(mine, theirs);
  // and the cases are what they are meant to be
  assert.deepEqual(mine.first.pendingWrites.map(([task, channel, value]) => [task, channel, value instanceof Set ? [...value] : value]), [
    ['task-a', 'messages', ['c']],
    ['task-c', INTERRUPT, { value: 'approve?' }],
    ['task-c', 'extra', [1, 2]],
    ['task-b', ERROR, 'boom again'],
    ['task-b', 'messages', ['a']],
  ]);
  assert.deepEqual(mine.thread.map((t) => t.checkpoint.id), [ids[2], ids[1], ids[0]]);
  assert.deepEqual(mine.before.map((t) => t.checkpoint.id), [ids[1], ids[0]]);
  assert.deepEqual(mine.annLimit.map((t) => t.checkpoint.id), [ids[2]]);
  assert.deepEqual(mine.ann.map((t) => t.checkpoint.id).sort(), [ids[0], ids[2], ids[4]]);
  assert.equal(mine.everything.length, 5);
  assert.deepEqual(mine.afterDelete.map((t) => t.config.configurable.thread_id), ['user-42-chat', 'user-42-chat', 'user-42-chat', 'user-42-chat']);
  // a filter's object value matches an equal one (MemorySaver compares with ===: never)
  const tagged = await all(saver.list({ configurable: { thread_id: 'user-42-chat' } }, { filter: { tags: ['x'] } }));
  assert.deepEqual(tagged.map((t) => t.checkpoint.id), [ids[2]]);

  // each thread is a mnemo session with that string as its key, in the saver's namespace;
  // deleteThread leaves the session
  const client = new MnemoClient({ baseURL: url });
  for (const key of ['user-42-chat', 'team/a chat?']) {
    const { session } = await client.sessionResume({ namespace: saver.namespace, session_id: key });
    assert.deepEqual([session.key, session.namespace], [key, saver.namespace]);
  }
});

test('a thread id is the same thread in one namespace, another in the next', async () => {
  const a = fresh(), b = fresh();
  const config = await a.put({ configurable: { thread_id: 'shared' } }, checkpoint(uuid6(0), { n: 1 }), meta('input', -1), { n: 1 });
  const again = new MnemoSaver({ baseURL: url, namespace: a.namespace }); // another instance, another client
  assert.deepEqual((await again.getTuple({ configurable: { thread_id: 'shared' } })).checkpoint.channel_values, { n: 1 });
  assert.equal(await b.getTuple({ configurable: { thread_id: 'shared' } }), undefined);
  assert.deepEqual(await all(b.list({})), []);
  // a session's UUID names the thread too, and comes back as asked
  const { session } = await new MnemoClient({ baseURL: url }).sessionResume({ namespace: a.namespace, session_id: 'shared' });
  const byUuid = await a.getTuple({ configurable: { thread_id: session.id } });
  assert.deepEqual(byUuid.config, { configurable: { thread_id: session.id, checkpoint_id: config.configurable.checkpoint_id, checkpoint_ns: '' } });
});

// LangGraph saves a task's writes without waiting for the save of their checkpoint (its default
// "async" durability chains the puts, not the writes): they may arrive first, even before the
// thread's first checkpoint.
test('pending writes saved before their checkpoint (and their thread) are the checkpoint\'s once it is saved', async () => {
  const mine = fresh(), theirs = new MemorySaver();
  const run = async (saver) => {
    const first = { configurable: { thread_id: 'early', checkpoint_ns: '', checkpoint_id: ids[0] } };
    await saver.putWrites(first, [['a', 1]], 'task-1');
    await saver.put({ configurable: { thread_id: 'early' } }, checkpoint(ids[0], {}), meta('input', -1), {});
    await saver.putWrites({ configurable: { ...first.configurable, checkpoint_id: ids[1] } }, [['b', 2]], 'task-2');
    await saver.put(first, checkpoint(ids[1], {}), meta('loop', 0), {});
    return all(saver.list({ configurable: { thread_id: 'early' } }));
  };
  const got = await run(mine);
  assert.deepStrictEqual(got, await run(theirs));
  assert.deepEqual(got.map((t) => t.pendingWrites), [[['task-2', 'b', 2]], [['task-1', 'a', 1]]]);
});

test('a value the serializer writes as bytes comes back as bytes', async () => {
  const saver = fresh();
  const config = await saver.put({ configurable: { thread_id: 'raw' } }, checkpoint(uuid6(0), {}), meta('input', -1), {});
  await saver.putWrites(config, [['raw', new Uint8Array([0, 1, 255])]], 'task-1');
  assert.deepStrictEqual((await saver.getTuple(config)).pendingWrites, [['task-1', 'raw', new Uint8Array([0, 1, 255])]]);
});

test('options and config values of the wrong kind are refused, naming them', async () => {
  assert.throws(() => new MnemoSaver({ baseUrl: url }), (e) => e instanceof TypeError && /'baseUrl' \(did you mean 'baseURL'\?\)/.test(e.message));
  assert.throws(() => new MnemoSaver({ client: new MnemoClient({ baseURL: url }), baseURL: url }), /^TypeError: MnemoSaver: baseURL: options of the client/);
  assert.throws(() => new MnemoSaver({ baseURL: url, namespace: 5 }), /^TypeError: MnemoSaver: namespace must be a string, not 5$/);
  const saver = fresh();
  const cp = checkpoint(uuid6(0), {});
  await assert.rejects(saver.put({}, cp, meta('input', -1), {}), /^TypeError: MnemoSaver.put: configurable.thread_id must be a non-empty string, not undefined$/);
  await assert.rejects(saver.put({ configurable: { thread_id: 42 } }, cp, meta('input', -1), {}), /thread_id must be a non-empty string, not 42$/);
  await assert.rejects(saver.putWrites({ configurable: { thread_id: 't' } }, [['a', 1]], 'task'), /^TypeError: MnemoSaver.putWrites: configurable.checkpoint_id must be a non-empty string, not undefined$/);
  await assert.rejects(saver.deleteThread(''), /^TypeError: MnemoSaver.deleteThread: threadId must be a non-empty string, not ''$/);
  // a bad namespace is the server's to refuse
  await assert.rejects(new MnemoSaver({ baseURL: url, namespace: 'bad name!' }).put({ configurable: { thread_id: 't' } }, cp, meta('input', -1), {}),
    (e) => e.name === 'InvalidError' && /^namespace: 'bad name!' has a character outside/.test(e.message));
});

// docs/js.md: beside js/ in the source tree; under ctest the package is a copy in the build
// directory (build.sh), whose CMakeCache.txt names the source tree.
function docsPath() {
  const beside = join(pkg, '..', 'docs', 'js.md');
  if (existsSync(beside)) return beside;
  const cache = readFileSync(join(process.env.BUILD_DIR, 'CMakeCache.txt'), 'utf8');
  return join(cache.match(/^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$/m)[1], 'docs', 'js.md');
}

test('docs/js.md\'s example (LangGraph\'s own, its import and constructor changed) runs as written', async () => {
  const blocks = [...readFileSync(docsPath(), 'utf8').matchAll(/^<!-- example: langgraph -->\n\s*```ts\n([\s\S]*?)^```/gm)];
  assert.equal(blocks.length, 1, 'docs/js.md marks one LangGraph example');
  // TypeScript without types: node runs it as a module whose imports resolve in the package
  execFileSync(process.execPath, ['--input-type=module', '-e', blocks[0][1]], { cwd: pkg, env: { ...process.env, MNEMO_BASE_URL: url }, stdio: 'inherit' });
  const history = await all(new MnemoSaver({ baseURL: url }).list({ configurable: { thread_id: '1' } }));
  assert.deepEqual(history.map((t) => [t.metadata.source, t.metadata.step]), [['loop', 2], ['loop', 1], ['loop', 0], ['input', -1]]);
  const { foo, bar } = history[0].checkpoint.channel_values;
  assert.deepEqual({ foo, bar }, { foo: 'b', bar: ['a', 'b'] });
});

// A graph that asks before it acts, then acts in two parallel nodes (one step, two tasks' writes).
const State = Annotation.Root({
  steps: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  answer: Annotation(),
});
const builder = new StateGraph(State)
  .addNode('ask', () => ({ steps: ['ask'], answer: interrupt('approve?') }))
  .addNode('left', (s) => ({ steps: [`left:${s.answer}`] }))
  .addNode('right', async (s) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { steps: [`right:${s.answer}`] };
  })
  .addEdge(START, 'ask').addEdge('ask', 'left').addEdge('ask', 'right').addEdge('left', END).addEdge('right', END);

// Runs the graph to its interrupt with `first`, resumes it with `second`; what LangGraph reports
// (an interrupt's id is a hash of ids made afresh each run: left out).
async function interrupted(first, second) {
  const config = { configurable: { thread_id: 'user-42-chat' } };
  const noIds = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'id' && typeof x === 'string' ? undefined : x)));
  const stopped = await builder.compile({ checkpointer: first }).invoke({ steps: ['start'] }, config);
  const graph = builder.compile({ checkpointer: second });
  const waiting = await graph.getState(config);
  const done = await graph.invoke(new Command({ resume: 'yes' }), config);
  const history = [];
  for await (const s of graph.getStateHistory(config)) history.push([s.metadata.source, s.metadata.step, s.values, s.next]);
  return noIds({ stopped, next: waiting.next, interrupts: waiting.tasks.map((t) => t.interrupts), done, history });
}

test('a StateGraph interrupted with one MnemoSaver is resumed by another, as with MemorySaver', async () => {
  const namespace = `lg-${crypto.randomUUID()}`;
  const mine = await interrupted(new MnemoSaver({ baseURL: url, namespace }), new MnemoSaver({ client: new MnemoClient({ baseURL: url }), namespace }));
  const memory = new MemorySaver();
  assert.deepStrictEqual(mine, await interrupted(memory, memory));
  assert.deepEqual(mine.stopped, { steps: ['start'], __interrupt__: [{ value: 'approve?' }] });
  assert.deepEqual(mine.done, { steps: ['start', 'ask', 'left:yes', 'right:yes'], answer: 'yes' });
  assert.equal(mine.history.length, 4);
});
