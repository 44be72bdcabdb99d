// mem0.test.mjs — the `mem0ai` package's MemoryClient, unchanged, pointed at `mnemo serve` with its
// `host` option (docs/memory.md, "Mem0-compatible routes"): add (the offline extractor, and infer
// false), search, get, get-all, update, history, delete and delete-all; the same memories seen
// through mnemo's own API (scope, provenance, versions, as_of); errors as the client's typed
// exceptions; API keys sent as `Authorization: Token …`, each bound to its namespace; delete and
// deleteAll erase the raw messages add kept.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { dbTarget, startServer as start, stopServer, testEnv } from './server.mjs';

const { tmp, env } = testEnv('interop-mem0-');
// the client reports usage to Mem0's servers unless told not to; nothing leaves this machine
process.env.MEM0_TELEMETRY = 'false';
process.env.MEM0_DIR = join(tmp, 'mem0');
const { default: MemoryClient } = await import('mem0ai');
const startServer = (db, extraEnv = {}) => start({ ...env, ...extraEnv }, db);

const servers = [];
after(async () => {
  for (const proc of servers) assert.equal(await stopServer(proc), 0);
});

async function rest(url, path, key) {
  const r = await fetch(`${url}${path}`, { headers: key ? { Authorization: `Bearer ${key}` } : {} });
  return { status: r.status, body: await r.json() };
}

test('MemoryClient: add, search, get, getAll, update, history, delete, deleteAll', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0.db')));
  servers.push(proc);
  const client = new MemoryClient({ apiKey: 'unused-locally', host: url });

  // add: the offline extractor keeps the explicit statements, with the message as provenance
  const added = await client.add([
    { role: 'user', content: 'Hello there. My city is Lisbon. I prefer green tea.' },
    { role: 'assistant', content: 'Noted, I will remember.' },
  ], { userId: 'alex' });
  assert.ok(Array.isArray(added), 'add answers a list of the memories it changed');
  assert.deepEqual(added.map((m) => m.event).sort(), ['ADD', 'ADD']);
  const city = added.find((m) => /Lisbon/.test(m.memory));
  assert.ok(city, 'the city was remembered');
  assert.equal(city.userId, 'alex');
  assert.equal(city.data.memory, city.memory);
  assert.ok(added.some((m) => m.memory === 'User prefers green tea' && m.categories[0] === 'preference'));

  // mnemo's own view of the same memory: scope and provenance (the message it came from)
  const own = await rest(url, `/v1/memory/${city.id}`);
  assert.equal(own.status, 200);
  assert.equal(own.body.memory.user_id, 'alex');
  assert.equal(own.body.memory.sources.length, 1);
  assert.equal(own.body.memory.actor, 'extractor:offline');

  // the same scope, a newer statement: the fact is updated (a new version), not duplicated
  const before = Date.now();
  await new Promise((r) => setTimeout(r, 5)); // a later millisecond for the as_of read below
  const moved = await client.add([{ role: 'user', content: 'Big news! My city is Porto.' }], { userId: 'alex' });
  assert.equal(moved.length, 1);
  assert.equal(moved[0].event, 'UPDATE');
  assert.equal(moved[0].id, city.id);
  assert.match(moved[0].memory, /Porto/);
  assert.notDeepEqual(moved[0].sources, city.sources, 'the new version names the newer message');

  // re-adding the same statement changes nothing
  assert.deepEqual(await client.add([{ role: 'user', content: 'My city is Porto.' }], { userId: 'alex' }), []);

  // infer false: each message kept as it is; another agent's scope
  const raw = await client.add([{ role: 'user', content: 'Deploy window is Friday 18:00 UTC' }],
    { agentId: 'ops-bot', infer: false, metadata: { team: 'infra' } });
  assert.equal(raw.length, 1);
  assert.equal(raw[0].memory, 'Deploy window is Friday 18:00 UTC');
  assert.equal(raw[0].agentId, 'ops-bot');
  assert.deepEqual(raw[0].metadata, { team: 'infra' });

  // getAll: the memories true now within the filters, Mem0's page shape
  const all = await client.getAll({ filters: { user_id: 'alex' } });
  assert.equal(all.count, 2);
  assert.equal(all.results.length, 2);
  assert.equal(all.next, null);
  assert.ok(all.results.every((m) => m.userId === 'alex'));
  const paged = await client.getAll({ filters: { user_id: 'alex' }, page: 1, pageSize: 1 });
  assert.equal(paged.count, 2);
  assert.equal(paged.results.length, 1);
  assert.match(paged.next, /page=2/);
  assert.equal((await client.getAll({ filters: { user_id: 'sam' } })).count, 0, 'another user sees nothing');
  assert.equal((await client.getAll({ filters: { AND: [{ agent_id: 'ops-bot' }] } })).count, 1);

  // search: ranked, scored, within the filters
  const found = await client.search('which city', { filters: { user_id: 'alex' } });
  assert.ok(found.results.length >= 1);
  assert.equal(found.results[0].id, city.id);
  assert.match(found.results[0].memory, /Porto/);
  assert.equal(typeof found.results[0].score, 'number');
  assert.equal((await client.search('city', { filters: { user_id: 'sam' } })).results.length, 0);
  const kw = await client.search('tea', { filters: { user_id: 'alex' }, keywordSearch: true, topK: 1 });
  assert.equal(kw.results.length, 1);
  assert.equal(kw.results[0].memory, 'User prefers green tea');

  // get, update, history
  const got = await client.get(city.id);
  assert.match(got.memory, /Porto/);
  const updated = await client.update(city.id, { text: 'User lives in Porto, Portugal' });
  assert.equal(updated.memory, 'User lives in Porto, Portugal');
  const hist = await client.history(city.id);
  assert.deepEqual(hist.map((h) => h.event), ['ADD', 'UPDATE', 'UPDATE']);
  assert.match(hist[0].newMemory, /Lisbon/);
  assert.equal(hist[1].oldMemory, hist[0].newMemory);
  assert.equal(hist[2].newMemory, 'User lives in Porto, Portugal');

  // what was true before the move: mnemo's as_of over the same data
  const then = await rest(url, `/v1/memory?user_id=alex&as_of=${before}`);
  assert.ok(then.body.memories.some((m) => /Lisbon/.test(m.text)), JSON.stringify(then.body));

  // delete closes the memory: get answers 404 (the client's MemoryNotFoundError), history stays
  assert.equal((await client.delete(city.id)).message, 'Memory deleted successfully!');
  await assert.rejects(client.get(city.id), (e) => e.name === 'MemoryNotFoundError' || /404|deleted/.test(e.message));
  assert.equal((await client.history(city.id)).at(-1).event, 'DELETE');
  assert.equal((await client.getAll({ filters: { user_id: 'alex' } })).count, 1);

  // deleteAll within a scope
  await client.deleteAll({ userId: 'alex' });
  assert.equal((await client.getAll({ filters: { user_id: 'alex' } })).count, 0);
  assert.equal((await client.getAll({ filters: { agent_id: 'ops-bot' } })).count, 1, 'other scopes keep theirs');

  // what mnemo cannot do is refused, naming the field
  await assert.rejects(client.search('x', { filters: { OR: [{ user_id: 'a' }, { user_id: 'b' }] } }),
    (e) => /filters\.OR/.test(e.message));
  await assert.rejects(client.search('x', { filters: { user_idd: 'a' } }), (e) => /filters\.user_idd/.test(e.message));
  await assert.rejects(client.add([{ role: 'tool', content: 'x' }], { userId: 'a' }), (e) => /messages\[0\]\.role/.test(e.message));
});

test('MemoryClient with API keys: Token auth, each key in its own namespace', async () => {
  const keyA = 'mem0-key-alpha', keyB = 'mem0-key-beta';
  const sha = (k) => createHash('sha256').update(k).digest('hex');
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0-keys.db')),
    { MNEMO_SERVER_API_KEYS: `${sha(keyA)}:alpha,${sha(keyB)}:beta` });
  servers.push(proc);
  const a = new MemoryClient({ apiKey: keyA, host: url });
  const b = new MemoryClient({ apiKey: keyB, host: url });
  const bad = new MemoryClient({ apiKey: 'not-a-key', host: url });

  const added = await a.add([{ role: 'user', content: 'Remember that the staging database is db-stg-2.' }],
    { userId: 'kim' });
  assert.equal(added.length, 1);
  assert.equal(added[0].appId, 'alpha', 'the key binds the namespace');
  assert.equal((await a.getAll({ filters: { user_id: 'kim' } })).count, 1);
  assert.equal((await b.getAll({ filters: { user_id: 'kim' } })).count, 0, 'another namespace sees nothing');
  await assert.rejects(b.get(added[0].id), (e) => e.name === 'MemoryNotFoundError' || /404|no such/.test(e.message));
  await assert.rejects(b.delete(added[0].id), (e) => /no such memory/.test(e.message));
  await assert.rejects(a.getAll({ filters: { app_id: 'beta' } }), (e) => /bound to namespace/.test(e.message));
  await assert.rejects(bad.getAll({ filters: { user_id: 'kim' } }), (e) => e.name === 'AuthenticationError' || /401/.test(e.message));
  assert.equal((await a.get(added[0].id)).memory, 'The staging database is db-stg-2');
});

test('MemoryClient delete and deleteAll erase the raw messages add kept', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0-erase.db')));
  servers.push(proc);
  const client = new MemoryClient({ apiKey: 'unused-locally', host: url });
  const hits = async (word) => (await rest(url, `/v1/search?q=${word}&mode=keyword`)).body.hits.length;

  const [city] = await client.add([{ role: 'user', content: 'Greetings quokka. My city is Lisbon.' }], { userId: 'kim' });
  assert.equal(await hits('quokka'), 1, 'add keeps the raw message');
  await client.delete(city.id);
  assert.equal(await hits('quokka'), 0, 'the raw message went with the memory it gave');

  await client.add([{ role: 'user', content: 'Hi, platypus here. I prefer green tea.' },
    { role: 'assistant', content: 'Noted, axolotl.' }], { userId: 'ada' });
  assert.equal(await hits('platypus') + await hits('axolotl'), 2);
  await client.deleteAll({ userId: 'ada' });
  assert.equal(await hits('platypus') + await hits('axolotl'), 0, 'deleteAll erases the scope session whole');
});
