// langgraph_store.test.mjs — MnemoStore, the LangGraph.js store, against a real `mnemo serve`
// (MNEMO_EMBEDDER=hash, for the searches by meaning): the same calls on MnemoStore and on
// LangGraph's InMemoryStore strictly equal (orders compared where the two agree); documents kept
// across a restart of the server; ranking by meaning, `index`, time to live; a real StateGraph
// whose nodes use the store; docs/js.md's example as written; options refused by name.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { END, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { InMemoryStore, InvalidNamespaceError } from '@langchain/langgraph-checkpoint';
import { MnemoClient } from '@mnemo/client';
import { MnemoStore } from '@mnemo/client/langgraph';
import { z } from 'zod/v4';
import { dbTarget, startServer, stopServer } from './server.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..'); // the built package (build.sh)
const db = dbTarget('langgraph-store');
const EMBEDDER = { MNEMO_EMBEDDER: 'hash' };
let server = await startServer(db, [], EMBEDDER);
after(async () => { assert.equal(await stopServer(server.proc), 0); });

const fresh = (options = {}) => new MnemoStore({ baseURL: server.url, namespace: `lgs-${crypto.randomUUID()}`, ...options });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// An item as compared across stores: its times replaced by whether they are Dates (InMemoryStore
// returns its live objects: a copy, made when the call returns).
const shape = (x) => (Array.isArray(x) ? x.map(shape) : x && typeof x === 'object'
  ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, v instanceof Date ? 'Date' : v])) : x);
const id = (item) => `${item.namespace.join('/')}#${item.key}`;
// a search without a query, in one order (InMemoryStore's is insertion, mnemo's newest first)
const set = (items) => items.map(shape).sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));

const U42 = ['users', 'user-42', 'memories'];

// The same calls on any store; what they returned.
async function script(store) {
  await store.put(U42, 'm1', { text: 'likes pizza', n: 1, tag: 'food', nested: { a: [1, 'x', null], é: true } });
  await store.put(U42, 'm2', { text: 'lives in Paris', n: 2, tag: 'place' });
  await store.put(['users', 'user-42', 'prefs'], 'theme', { text: 'dark', n: 5 });
  await store.put(['users', 'user-7', 'memories'], 'm1', { text: 'likes tea', n: 3, tag: 'food' });
  await store.put(['a'], 'k', { n: 1 });
  await store.put(['ab'], 'k', { n: 2, tag: 'food' });
  await store.put(['a', 'b'], 'k', { n: 3 });
  await store.put(['a', 'b'], 'untagged', { n: 4 });
  const got = {
    m1: shape(await store.get(U42, 'm1')),
    missingKey: await store.get(U42, 'nobody'),
    missingNs: await store.get(['users', 'user-43', 'memories'], 'm1'),
    one: set(await store.search(['users', 'user-7'])),
    all: set(await store.search([], { limit: 100 })),
    a: set(await store.search(['a'])), // a and a.b, not ab
    ab: set(await store.search(['ab'])),
    users: set(await store.search(['users'])),
    exact: set(await store.search(U42)),
    limited: (await store.search([], { limit: 3 })).length,
    offsetEnd: (await store.search([], { offset: 7 })).length,
    none: await store.search([], { limit: 0 }),
    food: set(await store.search([], { filter: { tag: 'food' } })),
    gt: set(await store.search([], { filter: { n: { $gt: 2 } } })),
    range: set(await store.search([], { filter: { n: { $gte: 2, $lt: 4 } } })),
    eq: set(await store.search([], { filter: { n: { $eq: 2 } } })),
    in: set(await store.search([], { filter: { n: { $in: [1, 3] } } })),
    ne: set(await store.search([], { filter: { tag: { $ne: 'food' } } })), // and without a tag
    nin: set(await store.search([], { filter: { tag: { $nin: ['food', 'place'] } } })),
    both: set(await store.search(['users'], { filter: { tag: 'food', n: { $lte: 1 } } })),
    lte: set(await store.search([], { filter: { n: { $lte: 2 } } })),
    nested: set(await store.search([], { filter: { text: 'dark' } })),
    noMatch: await store.search([], { filter: { tag: 'nothing' } }),
    namespaces: await store.listNamespaces(),
    prefix: await store.listNamespaces({ prefix: ['users'] }),
    prefixA: await store.listNamespaces({ prefix: ['a'] }),
    suffix: await store.listNamespaces({ suffix: ['memories'] }),
    wildPrefix: await store.listNamespaces({ prefix: ['users', '*', 'memories'] }),
    wildSuffix: await store.listNamespaces({ suffix: ['*', 'memories'] }),
    both2: await store.listNamespaces({ prefix: ['users'], suffix: ['prefs'] }),
    depth1: await store.listNamespaces({ maxDepth: 1 }),
    depth2: await store.listNamespaces({ prefix: ['users'], maxDepth: 2 }),
    page: await store.listNamespaces({ limit: 2, offset: 1 }),
    pageEnd: await store.listNamespaces({ limit: 10, offset: 5 }),
    tooDeep: await store.listNamespaces({ prefix: ['a', 'b', 'c'] }),
    noNs: await store.listNamespaces({ limit: 0 }),
    // a batch: its reads answered before its writes; of two puts of one item the last stays
    batch: (await store.batch([
      { namespace: ['b'], key: 'new', value: { v: 1 } },
      { namespace: ['b'], key: 'new' },
      { namespacePrefix: ['b'], limit: 10, offset: 0 },
      { matchConditions: [{ matchType: 'prefix', path: ['b'] }], limit: 10, offset: 0 },
      { namespace: ['b'], key: 'new', value: { v: 2 } },
      { namespace: ['a'], key: 'k' },
    ])).map(shape),
  };
  got.afterBatch = shape(await store.get(['b'], 'new'));

  // an update keeps createdAt and moves updatedAt
  const before = await store.get(U42, 'm2');
  const [created, updated] = [before.createdAt.getTime(), before.updatedAt.getTime()];
  await sleep(5);
  await store.put(U42, 'm2', { text: 'lives in Lyon', n: 2, tag: 'place' });
  const after = await store.get(U42, 'm2');
  got.updated = { item: shape(after), sameCreated: after.createdAt.getTime() === created, laterUpdated: after.updatedAt.getTime() > updated };

  await store.delete(U42, 'm1');
  await store.delete(U42, 'never-made');
  await store.batch([{ namespace: ['a', 'b'], key: 'untagged', value: null }]);
  got.deleted = await store.get(U42, 'm1');
  got.afterDelete = set(await store.search(['users']));
  got.afterDeleteAB = set(await store.search(['a', 'b']));
  return got;
}

test('the same calls give what InMemoryStore gives, strictly', async () => {
  const mine = await script(fresh());
  const theirs = await script(new InMemoryStore());
  assert.deepStrictEqual(mine, theirs);
  // and the cases are what they are meant to be
  assert.deepEqual(mine.a.map(id), ['a#k', 'a/b#k', 'a/b#untagged']);
  assert.deepEqual(mine.ab.map(id), ['ab#k']);
  assert.deepEqual(mine.all.length, 8);
  assert.equal(mine.limited, 3);
  assert.equal(mine.offsetEnd, 1);
  assert.deepEqual(mine.food.map(id), ['ab#k', 'users/user-42/memories#m1', 'users/user-7/memories#m1']);
  assert.deepEqual(mine.both.map(id), ['users/user-42/memories#m1']);
  assert.deepEqual(mine.nin.map(id), ['a#k', 'a/b#k', 'a/b#untagged', 'users/user-42/prefs#theme']);
  assert.deepEqual(mine.namespaces, [['a'], ['a', 'b'], ['ab'], ['users', 'user-42', 'memories'], ['users', 'user-42', 'prefs'], ['users', 'user-7', 'memories']]);
  assert.deepEqual(mine.depth1, [['a'], ['ab'], ['users']]);
  assert.deepEqual(mine.wildSuffix, [['users', 'user-42', 'memories'], ['users', 'user-7', 'memories']]);
  assert.deepEqual(mine.batch, [null, null, [], [], null, shape({ value: { n: 1 }, key: 'k', namespace: ['a'], createdAt: new Date(), updatedAt: new Date() })]);
  assert.deepEqual(mine.afterBatch.value, { v: 2 });
  assert.deepEqual(mine.updated.item.value.text, 'lives in Lyon');
  assert.equal(mine.updated.sameCreated, true);
  assert.equal(mine.updated.laterUpdated, true);
  assert.equal(mine.one[0].score, undefined);
  assert.ok('score' in mine.one[0]);
});

test('a search without a query is newest first; limit and offset page it', async () => {
  const store = fresh();
  for (let i = 0; i < 5; i++) {
    await store.put(['notes'], `k${i}`, { i });
    await sleep(3); // a later updated_at each
  }
  await store.put(['notes'], 'k1', { i: 10 }); // updated: first again
  const all = await store.search(['notes']);
  assert.deepEqual(all.map((x) => x.key), ['k1', 'k4', 'k3', 'k2', 'k0']);
  const pages = [...await store.search(['notes'], { limit: 2 }), ...await store.search(['notes'], { limit: 2, offset: 2 }),
    ...await store.search(['notes'], { limit: 2, offset: 4 })];
  assert.deepStrictEqual(pages, all);
  // a limit over the server's largest (1000) is asked for in pages, until one comes back short
  const sent = [];
  const fetch = (url, init) => {
    if (new URL(url).pathname.startsWith('/v1/documents/')) sent.push([new URL(url).pathname, JSON.parse(init.body)]);
    return globalThis.fetch(url, init);
  };
  const paging = new MnemoStore({ client: new MnemoClient({ baseURL: server.url, fetch }), namespace: store.namespace });
  assert.deepStrictEqual(await paging.search(['notes'], { limit: 2500, offset: 1 }), all.slice(1));
  assert.deepEqual(await paging.listNamespaces({ limit: 1500 }), [['notes']]);
  assert.deepEqual(sent.map(([path, { limit, offset }]) => [path, limit, offset]),
    [['/v1/documents/search', 1000, 1], ['/v1/documents/paths', 1000, 0]]);
  // past a full page, the next (1001 documents, each in its own path, made by one import)
  const bulk = `lgs-${crypto.randomUUID()}`;
  const lines = Array.from({ length: 1001 }, (_, i) => JSON.stringify({ type: 'document', namespace: bulk, path: `bulk.p${String(i).padStart(4, '0')}`,
    key: 'k', value: { i }, created_at: 1000 + i, updated_at: 1000 + i, expires_at: 0, ttl_ms: 0 }));
  await paging.client.import([JSON.stringify({ format: 'mnemo-export', version: 1 }), ...lines].join('\n') + '\n');
  const many = new MnemoStore({ client: paging.client, namespace: bulk });
  sent.length = 0;
  const found = await many.search(['bulk'], { limit: 1500, offset: 1 });
  assert.deepEqual(found.map((x) => x.value.i), Array.from({ length: 1000 }, (_, i) => 999 - i)); // newest first
  assert.deepEqual((await many.listNamespaces({ limit: 1500 })).length, 1001);
  assert.deepEqual(sent.map(([path, { limit, offset }]) => [path, limit, offset]), [
    ['/v1/documents/search', 1000, 1], ['/v1/documents/search', 500, 1001],
    ['/v1/documents/paths', 1000, 0], ['/v1/documents/paths', 500, 1000]]);
});

test('documents stay across a restart of the server', async () => {
  const store = fresh();
  await store.put(U42, 'kept', { text: 'still here', list: [1, 2] });
  const before = await store.get(U42, 'kept');
  assert.equal(await stopServer(server.proc), 0);
  server = await startServer(db, [], EMBEDDER);
  const again = new MnemoStore({ client: new MnemoClient({ baseURL: server.url }), namespace: store.namespace });
  assert.deepStrictEqual(await again.get(U42, 'kept'), before);
  assert.deepEqual((await again.search(['users'])).map((x) => x.value), [{ text: 'still here', list: [1, 2] }]);
  assert.deepEqual(await again.listNamespaces(), [U42]);
  // another mnemo namespace holds other documents
  assert.equal(await fresh().get(U42, 'kept'), null);
});

test('a query ranks by meaning; index chooses what is embedded, false nothing', async () => {
  const store = fresh();
  const ns = ['users', 'user-42', 'memories'];
  await store.put(ns, 'pizza', { text: 'I like pizza with olives' });
  await store.put(ns, 'python', { text: 'python programming is my job' });
  await store.put(ns, 'weather', { text: 'the weather in Paris is rainy' });
  await store.put(ns, 'hidden', { text: 'python programming python programming' }, false);
  await store.put(ns, 'titled', { title: 'a recipe for soup', body: 'python programming' }, ['title']);
  const ranked = await store.search(['users'], { query: 'python programming', limit: 10 });
  assert.equal(ranked[0].key, 'python');
  const scored = ranked.filter((x) => x.score !== undefined);
  assert.deepEqual(scored.map((x) => typeof x.score), scored.map(() => 'number'));
  assert.deepEqual(scored.map((x) => x.score), scored.map((x) => x.score).sort((a, b) => b - a));
  // not embedded: last, without a score, but found
  assert.deepEqual(ranked.slice(scored.length).map((x) => [x.key, x.score]), [['hidden', undefined]]);
  assert.ok(ranked.findIndex((x) => x.key === 'titled') > 0, 'only its title is embedded');
  assert.deepEqual(Object.keys(ranked[0]).sort(), ['createdAt', 'key', 'namespace', 'score', 'updatedAt', 'value']);
  assert.deepEqual((await store.search(ns, { query: 'python programming', limit: 1, offset: 1 })).map((x) => x.key), [ranked[1].key]);
  assert.deepEqual((await store.search(ns, { filter: { text: 'python programming python programming' } })).map((x) => x.key), ['hidden']);
  assert.deepEqual((await store.search(ns, { query: 'rain in Paris', filter: { text: { $ne: 'x' } }, limit: 1 })).map((x) => x.key), ['weather']);
});

test('a query without an embedder is the server\'s UnavailableError', async () => {
  const bare = await startServer(dbTarget('langgraph-store-bare'));
  try {
    const store = new MnemoStore({ baseURL: bare.url, maxRetries: 0 });
    await store.put(['docs'], 'd', { text: 'x' });
    await assert.rejects(store.search(['docs'], { query: 'x' }), (e) => e.name === 'UnavailableError' && e.code === 'unavailable' && /embedder/.test(e.message));
    assert.equal((await store.search(['docs'])).length, 1);
  } finally {
    assert.equal(await stopServer(bare.proc), 0);
  }
});

test('a time to live: gone after it, kept alive by reads (refreshOnRead), defaultTtl and null', async () => {
  const store = fresh();
  const still = new MnemoStore({ client: store.client, namespace: store.namespace, ttl: { refreshOnRead: false } });
  await store.put(['t'], 'short', { v: 1 }, undefined, { ttl: 0.001 }); // 60 ms
  await store.put(['t'], 'forever', { v: 2 });
  await store.put(['t'], 'read', { v: 3 }, undefined, { ttl: 0.03 }); // 1.8 s, read every 100 ms
  await store.put(['t'], 'unread', { v: 4 }, undefined, { ttl: 0.03 }); // read without refreshing
  const end = Date.now() + 2500;
  while (Date.now() < end) {
    await store.get(['t'], 'read');
    await still.get(['t'], 'unread');
    await sleep(100);
  }
  assert.equal(await still.get(['t'], 'short'), null);
  assert.equal(await still.get(['t'], 'unread'), null);
  assert.deepEqual((await still.search(['t'])).map((x) => x.key).sort(), ['forever', 'read']);
  // defaultTtl applies to a put that names none; null is never
  const brief = new MnemoStore({ client: store.client, namespace: store.namespace, ttl: { defaultTtl: 0.001 } });
  await brief.put(['d'], 'default', { v: 1 });
  await brief.put(['d'], 'never', { v: 2 }, undefined, { ttl: null });
  await brief.batch([{ namespace: ['d'], key: 'op', value: { v: 3 }, ttl: 0.001 }]);
  await sleep(300);
  assert.deepEqual((await brief.search(['d'])).map((x) => x.key), ['never']);
  assert.deepEqual(await brief.listNamespaces(), [['d'], ['t']]);
});

// A graph whose nodes write and read the store they are given (runtime.store: LangGraph's
// AsyncBatchedStore over the compiled one), for a user named in the run's context.
const State = new StateSchema({ text: z.string(), memories: z.array(z.string()).default(() => []) });
const builder = new StateGraph(State)
  .addNode('remember', async (state, runtime) => {
    await runtime.store.put(['users', runtime.context.userId, 'memories'], `m-${state.text.length}`, { memory: state.text });
    return {};
  })
  .addNode('recall', async (state, runtime) => {
    const found = await runtime.store.search(['users', runtime.context.userId, 'memories']);
    return { memories: found.map((x) => x.value.memory).sort() };
  })
  .addEdge(START, 'remember').addEdge('remember', 'recall').addEdge('recall', END);

async function conversation(makeStore) {
  const out = [];
  for (const [text, userId] of [['I like pizza', 'user-42'], ['I live in Paris', 'user-42'], ['hello', 'user-7']]) {
    out.push(await builder.compile({ store: makeStore() }).invoke({ text }, { context: { userId } }));
  }
  return out;
}

test('a StateGraph\'s nodes use the store (runtime.store), as with InMemoryStore', async () => {
  const namespace = `lgs-${crypto.randomUUID()}`;
  // each run compiles the graph with a new MnemoStore: what one run wrote the next reads
  const mine = await conversation(() => new MnemoStore({ baseURL: server.url, namespace }));
  const memory = new InMemoryStore();
  assert.deepStrictEqual(mine, await conversation(() => memory));
  assert.deepEqual(mine[1].memories, ['I like pizza', 'I live in Paris']);
  assert.deepEqual(mine[2].memories, ['hello']);
  assert.deepEqual(await new MnemoStore({ baseURL: server.url, namespace }).listNamespaces(),
    [['users', 'user-42', 'memories'], ['users', 'user-7', 'memories']]);
});

// docs/js.md: beside js/ in the source tree; under ctest the package is a copy in the build
// directory (build.sh), whose CMakeCache.txt names the source tree.
function docsPath() {
  const beside = join(pkg, '..', 'docs', 'js.md');
  if (existsSync(beside)) return beside;
  const cache = readFileSync(join(process.env.BUILD_DIR, 'CMakeCache.txt'), 'utf8');
  return join(cache.match(/^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$/m)[1], 'docs', 'js.md');
}

test('docs/js.md\'s store example (LangGraph\'s own, its import and constructor changed) runs as written', async () => {
  const blocks = [...readFileSync(docsPath(), 'utf8').matchAll(/^<!-- example: langgraph-store -->\n\s*```ts\n([\s\S]*?)^```/gm)];
  assert.equal(blocks.length, 1, 'docs/js.md marks one LangGraph store example');
  const bare = await startServer(dbTarget('langgraph-store-docs'));
  try {
    execFileSync(process.execPath, ['--input-type=module', '-e', blocks[0][1]], { cwd: pkg, env: { ...process.env, MNEMO_BASE_URL: bare.url }, stdio: 'inherit' });
    const memories = await new MnemoStore({ baseURL: bare.url }).search(['1', 'memories']);
    assert.deepEqual(memories.map((x) => [x.namespace, x.value]), [[['1', 'memories'], { food_preference: 'I like pizza' }]]);
  } finally {
    assert.equal(await stopServer(bare.proc), 0);
  }
});

test('options, namespaces and values of the wrong kind are refused, naming them', async () => {
  const url = server.url;
  assert.throws(() => new MnemoStore({ baseUrl: url }), (e) => e instanceof TypeError && /'baseUrl' \(did you mean 'baseURL'\?\)/.test(e.message));
  assert.throws(() => new MnemoStore({ client: new MnemoClient({ baseURL: url }), apiKey: 'k' }), /^TypeError: MnemoStore: apiKey: options of the client/);
  assert.throws(() => new MnemoStore({ baseURL: url, namespace: 5 }), /^TypeError: MnemoStore: namespace must be a string, not 5$/);
  assert.throws(() => new MnemoStore({ baseURL: url, ttl: 5 }), /^TypeError: MnemoStore: ttl must be an object, not 5$/);
  assert.throws(() => new MnemoStore({ baseURL: url, ttl: { defaultTTL: 1 } }), (e) => e instanceof TypeError && /'defaultTTL' \(did you mean 'defaultTtl'\?\)/.test(e.message));
  assert.throws(() => new MnemoStore({ baseURL: url, ttl: { defaultTtl: 0 } }), (e) => e instanceof RangeError && /ttl.defaultTtl must be a positive number of minutes, not 0/.test(e.message));
  assert.throws(() => new MnemoStore({ baseURL: url, ttl: { defaultTtl: '5' } }), /^TypeError: MnemoStore: ttl.defaultTtl must be a positive number of minutes, not '5'$/);
  assert.throws(() => new MnemoStore({ baseURL: url, ttl: { refreshOnRead: 'yes' } }), /^TypeError: MnemoStore: ttl.refreshOnRead must be true or false, not 'yes'$/);
  const store = fresh();
  await assert.rejects(store.put(['a'], 'k', { v: 1 }, undefined, { ttl: -1 }), RangeError);
  await assert.rejects(store.put(['a'], 'k', { v: 1 }, undefined, { tll: 1 }), /'tll' \(did you mean 'ttl'\?\)/);
  // LangGraph's rules for a namespace tuple, before anything is sent
  for (const ns of [['a.b'], ['a', ''], [], ['x:y'], ['langgraph', 'x']]) await assert.rejects(store.put(ns, 'k', { v: 1 }), InvalidNamespaceError);
  await assert.rejects(store.get(['a', ''], 'k'), InvalidNamespaceError);
  await assert.rejects(store.search(['a', '']), InvalidNamespaceError);
  await assert.rejects(store.listNamespaces({ suffix: [''] }), InvalidNamespaceError);
  await assert.rejects(store.batch([{ matchConditions: [{ matchType: 'infix', path: ['a'] }], limit: 1, offset: 0 }]), /unknown matchType 'infix'/);
  await assert.rejects(store.search([], { limit: 1.5 }), RangeError);
  // the server's refusals, as the client's errors
  await assert.rejects(new MnemoStore({ baseURL: url, namespace: 'bad name!' }).put(['a'], 'k', { v: 1 }),
    (e) => e.name === 'InvalidError' && /namespace/.test(e.message));
  await assert.rejects(store.put(['a'], '', { v: 1 }), (e) => e.name === 'InvalidError' && /^key: /.test(e.message));
  await assert.rejects(store.put(['a\u0001'], 'k', { v: 1 }), (e) => e.name === 'InvalidError' && /control character/.test(e.message));
  await assert.rejects(store.put(['a'], 'k', [1, 2]), (e) => e.name === 'InvalidError' && /value/.test(e.message));
  // the reserved root is LangGraph's put's rule; batch() takes it, as InMemoryStore's
  await store.batch([{ namespace: ['langgraph', 'x'], key: 'k', value: { v: 1 } }]);
  assert.deepEqual((await store.get(['langgraph', 'x'], 'k')).value, { v: 1 });
});
