// mem0.test.mjs — the `mem0ai` package's MemoryClient, unchanged, pointed at `mnemo serve` with its
// `host` option (docs/memory.md, "Mem0-compatible routes"): add (the offline extractor, and infer
// false), search, get, get-all, update, history, delete and delete-all; the same memories seen
// through mnemo's own API (scope, provenance, versions, as_of); errors as the client's typed
// exceptions (a malformed memory id: ValidationError, as Mem0's 400); API keys sent as
// `Authorization: Token …`, each bound to its namespace; delete and deleteAll erase the raw
// messages add kept; Mem0's filters (AND/OR/NOT, its operators, the 1000 memories a filter the
// library cannot apply is matched over); users() / deleteUsers(); batchUpdate / batchDelete;
// add with asyncMode (Mem0's event, polled on its route until the extraction ran).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
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
  // entities: each key sees its namespace's
  assert.deepEqual((await a.users()).results.map((e) => `${e.type}:${e.name}`), ['user:kim']);
  assert.equal((await b.users()).count, 0);
  // beta's key reaches none of alpha's memories by batch or by entity
  await assert.rejects(b.batchDelete([added[0].id]), (e) => e.name === 'MemoryNotFoundError');
  await assert.rejects(b.batchUpdate([{ memoryId: added[0].id, text: 'x' }]), (e) => e.name === 'MemoryNotFoundError');
  await b.deleteUsers({ userId: 'kim' });
  await assert.rejects(b.deleteUsers({ appId: 'alpha' }), (e) => /bound to namespace/.test(e.message));
  assert.equal((await a.getAll({ filters: { user_id: 'kim' } })).count, 1, 'alpha\'s memory is untouched');
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

async function send(url, method, path, body) {
  const r = await fetch(`${url}${path}`, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

// Loads memories through /v1/import (one transaction: a thousand in a second), made by make(n).
async function importMemories(url, from, to, make) {
  const lines = ['{"format":"mnemo-export","version":1}'];
  for (let n = from; n < to; n++) {
    lines.push(JSON.stringify({ type: 'memory', id: randomUUID(), version: 1, kind: 'fact', namespace: 'default',
      sources: [], valid_from: 1700000000000 + n, recorded_at: 1700000000000 + n, change: 'add', actor: 'test', ...make(n) }));
  }
  const r = await fetch(`${url}/v1/import`, { method: 'POST', headers: { 'Content-Type': 'application/x-ndjson' }, body: `${lines.join('\n')}\n` });
  assert.equal(r.status, 200, await r.text());
}

test('MemoryClient: a malformed memory id is a ValidationError (400), as Mem0 answers it', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0-ids.db')));
  servers.push(proc);
  const client = new MemoryClient({ apiKey: 'unused-locally', host: url });
  const bad = 'nonexistent-memory-id-12345';
  const invalid = (e) => e.name === 'ValidationError' && /memory_id: Invalid memory_id/.test(e.message);
  await assert.rejects(client.get(bad), invalid);
  await assert.rejects(client.update(bad, { text: 'x' }), invalid);
  await assert.rejects(client.delete(bad), invalid);
  await assert.rejects(client.history(bad), invalid);
  const raw = await rest(url, `/v1/memories/${bad}/`);
  assert.equal(raw.status, 400);
  assert.equal(raw.body.error.code, 'invalid');
  // a well-formed id that names no memory is still not found
  await assert.rejects(client.get('01890a5d-ac96-774b-bcce-b302099a8057'), (e) => e.name === 'MemoryNotFoundError');
});

test('MemoryClient filters: AND, OR, NOT and Mem0\'s operators', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0-filters.db')));
  servers.push(proc);
  const client = new MemoryClient({ apiKey: 'unused-locally', host: url });
  const add = async (content, opts) => (await client.add([{ role: 'user', content }], { infer: false, ...opts }))[0];
  const ann = await add('Ann likes sailing', { userId: 'ann', metadata: { priority: 3, team: 'infra' } });
  const bob = await add('Bob plays CHESS', { userId: 'bob', agentId: 'coach', metadata: { priority: 1 } });
  const bot = await add('Coach tip of the day', { agentId: 'coach', timestamp: 1700000000 });
  const [tea] = await client.add([{ role: 'user', content: 'I prefer green tea.' }], { userId: 'cyd' });
  assert.equal(tea.categories[0], 'preference');
  const ids = async (filters) => (await client.getAll({ filters })).results.map((m) => m.id).sort();
  const of = (...ms) => ms.map((m) => m.id).sort();

  assert.deepEqual(await ids({ OR: [{ user_id: 'ann' }, { user_id: 'bob' }] }), of(ann, bob));
  assert.deepEqual(await ids({ AND: [{ user_id: { in: ['ann', 'bob', 'zed'] } }] }), of(ann, bob));
  assert.deepEqual(await ids({ AND: [{ agent_id: 'coach' }, { NOT: { user_id: 'bob' } }] }), of(bot));
  assert.deepEqual(await ids({ NOT: [{ user_id: 'ann' }, { user_id: 'cyd' }] }), of(bob, bot), 'NOT of a list: none of them');
  assert.deepEqual(await ids({ NOT: {} }), [], 'NOT of no condition: nothing');
  // "*" is any value that is set; ne and nin include the memories without one, as Mem0's
  assert.deepEqual(await ids({ AND: [{ user_id: '*' }, { agent_id: '*' }] }), of(bob));
  assert.deepEqual(await ids({ user_id: { ne: 'ann' } }), of(bob, bot, tea));
  assert.deepEqual(await ids({ user_id: { nin: ['ann', 'bob'] } }), of(bot, tea));
  assert.deepEqual(await ids({ AND: [{ user_id: '*' }, { user_id: { ne: 'ann' } }] }), of(bob, tea));
  // metadata keys: equality (the library applies it) and comparisons (matched here)
  assert.deepEqual(await ids({ metadata: { team: 'infra' } }), of(ann));
  assert.deepEqual(await ids({ metadata: { priority: { gte: 1, lt: 3 } } }), of(bob));
  assert.deepEqual(await ids({ metadata: { priority: { in: [3, 7] } } }), of(ann));
  // the text, the categories, the ids and the times
  assert.deepEqual(await ids({ keywords: { icontains: 'chess' } }), of(bob));
  assert.deepEqual(await ids({ keywords: { contains: 'chess' } }), []);
  assert.deepEqual(await ids({ categories: { in: ['preference', 'event'] } }), of(tea));
  assert.deepEqual(await ids({ AND: [{ memory_ids: [ann.id, bot.id] }, { OR: [{ agent_id: 'coach' }, { user_id: 'zed' }] }] }), of(bot));
  assert.deepEqual(await ids({ AND: [{ created_at: { gte: '2023-11-01' } }, { created_at: { lt: '2023-12-01T00:00:00Z' } }] }), of(bot));
  assert.deepEqual(await ids({ timestamp: { lte: 1700000000 } }), of(bot));
  assert.deepEqual(await ids({ updated_at: { gt: '2023-12-01T00:00:00+02:00' } }), of(ann, bob, bot, tea));
  // count and pages are of what matches
  const page = await client.getAll({ filters: { OR: [{ user_id: '*' }, { agent_id: '*' }] }, page: 2, pageSize: 3 });
  assert.equal(page.count, 4);
  assert.equal(page.results.length, 1);
  assert.match(page.previous, /page=1/);

  // search: the hits that match, best first
  const hits = await client.search('coach chess', { filters: { OR: [{ agent_id: 'coach' }, { user_id: 'ann' }] }, keywordSearch: true });
  assert.deepEqual(hits.results.map((m) => m.id).sort(), of(bob, bot));
  assert.equal((await client.search('chess', { filters: { NOT: { agent_id: 'coach' } }, keywordSearch: true })).results.length, 0);

  // refused by name: an unknown operator, one the field has not, a value of the wrong type
  const refused = (re) => (e) => e.name === 'ValidationError' && re.test(e.message);
  await assert.rejects(client.getAll({ filters: { user_id: { like: 'a%' } } }), refused(/filters\.user_id\.like: unknown operator/));
  await assert.rejects(client.getAll({ filters: { AND: [{ user_id: { gte: 'a' } }] } }),
    refused(/filters\.AND\[0\]\.user_id\.gte: not an operator of user_id/));
  await assert.rejects(client.search('x', { filters: { created_at: { gt: 'yesterday' } } }), refused(/filters\.created_at\.gt: must be an ISO 8601/));
  await assert.rejects(client.getAll({ filters: { OR: [] } }), refused(/filters\.OR: must be a non-empty list/));
  await assert.rejects(client.getAll({ filters: { keywords: 'chess' } }), refused(/filters\.keywords: must be an object of operators/));

  // bounds: 8 levels of AND/OR/NOT, 256 conditions, operators and listed values
  const nest = (n) => { let f = { user_id: 'ann' }; for (let i = 0; i < n; i++) f = i % 2 ? { AND: [f] } : { OR: [f] }; return f; };
  assert.deepEqual(await ids(nest(8)), of(ann));
  await assert.rejects(client.getAll({ filters: nest(9) }), refused(/nested deeper than 8 levels/));
  const names = (n) => ['ann', ...Array.from({ length: n - 1 }, (_, i) => `u${i}`)];
  assert.deepEqual(await ids({ user_id: { in: names(254) } }), of(ann), 'the key, the operator and 254 values');
  await assert.rejects(client.getAll({ filters: { user_id: { in: names(255) } } }), refused(/more than 256 conditions/));
});

test('a filter matched by the route reads at most 1000 memories, and refuses past them', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0-bound.db')));
  servers.push(proc);
  const client = new MemoryClient({ apiKey: 'unused-locally', host: url });
  const load = (from, to) => importMemories(url, from, to, (n) => ({ text: `bulk note ${n}`, user_id: 'bulk', metadata: { n } }));
  const late = { AND: [{ user_id: 'bulk' }, { metadata: { n: { gte: 995 } } }] };
  const search = (topK) => client.search('bulk note', { filters: late, keywordSearch: true, topK });

  await load(0, 1000);
  const listed = await client.getAll({ filters: late });
  assert.equal(listed.count, 5);
  assert.equal((await search(10)).results.length, 5);

  await load(1000, 1001); // one memory more than the route reads
  const wide = (e) => e.name === 'ValidationError' && /matched over at most 1000/.test(e.message);
  await assert.rejects(client.getAll({ filters: late }), wide);
  await assert.rejects(search(10), wide, 'fewer than topK matches among 1000 hits may not be all');
  assert.equal((await search(3)).results.length, 3, 'topK matches among the hits are the best ones');
  assert.equal((await client.getAll({ filters: { user_id: 'bulk' } })).count, 1001, 'equalities: the library applies them');
  assert.equal((await client.getAll({ filters: { AND: [{ user_id: 'bulk' }, { metadata: { n: 1000 } }] } })).count, 1);
});

test('MemoryClient users() and deleteUsers(): the entities that have memories, each deleted with them', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0-entities.db')));
  servers.push(proc);
  const client = new MemoryClient({ apiKey: 'unused-locally', host: url });
  const hits = async (word) => (await rest(url, `/v1/search?q=${word}&mode=keyword`)).body.hits.length;
  await client.add([{ role: 'user', content: 'Ann sails a wombat boat' }], { userId: 'ann', infer: false });
  await client.add([{ role: 'user', content: 'Ann rows too' }], { userId: 'ann', infer: false });
  const [bob] = await client.add([{ role: 'user', content: 'Bob and his numbat' }], { userId: 'bob', agentId: 'coach', runId: 'trip', infer: false });

  const users = await client.users();
  assert.equal(users.count, 4);
  assert.deepEqual(users.results.map((e) => `${e.type}:${e.name}:${e.totalMemories}`),
    ['user:ann:2', 'user:bob:1', 'agent:coach:1', 'run:trip:1']);
  assert.equal(users.results[0].id, 'ann');
  assert.match(users.results[0].createdAt, /^\d{4}-\d\d-\d\dT/);
  const paged = await client.users({ page: 2, pageSize: 3 });
  assert.deepEqual(paged.results.map((e) => e.name), ['trip']);
  assert.match(paged.previous, /page=1/);

  // deleteUsers({userId}): delete-all of that user, raw messages included
  assert.equal(await hits('wombat'), 1);
  assert.equal((await client.deleteUsers({ userId: 'ann' })).message, 'Entity deleted successfully.');
  assert.equal(await hits('wombat'), 0, 'the messages add kept went with the memories');
  assert.deepEqual((await client.users()).results.map((e) => e.name), ['bob', 'coach', 'trip']);
  // deleteUsers(): every entity users() lists
  await client.deleteUsers();
  assert.equal((await client.users()).count, 0);
  assert.equal(await hits('numbat'), 0);
  assert.equal((await client.history(bob.id)).at(-1).event, 'DELETE', 'the history stays, as delete\'s');
  const typo = await send(url, 'DELETE', '/v2/entities/team/x/');
  assert.equal(typo.status, 400);
  assert.match(typo.body.error.message, /entity_type/);

  // at most 1000 entities are listed (they are sorted to be paged): one more is refused
  await importMemories(url, 0, 1000, (n) => ({ text: `note ${n}`, user_id: `u${String(n).padStart(4, '0')}` }));
  const many = await client.users({ pageSize: 1000 });
  assert.equal(many.count, 1000);
  assert.equal(many.results.length, 1000);
  await importMemories(url, 1000, 1001, (n) => ({ text: `note ${n}`, user_id: `u${n}` }));
  await assert.rejects(client.users(), (e) => e.name === 'ValidationError' && /more than 1000 users, agents and runs/.test(e.message));
});

test('MemoryClient batchUpdate and batchDelete: every item checked before anything changes', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0-batch.db')));
  servers.push(proc);
  const client = new MemoryClient({ apiKey: 'unused-locally', host: url });
  const hits = async (word) => (await rest(url, `/v1/search?q=${word}&mode=keyword`)).body.hits.length;
  const [a] = await client.add([{ role: 'user', content: 'Alpha quokka fact' }], { userId: 'kim', infer: false });
  const [b] = await client.add([{ role: 'user', content: 'Beta fact' }], { userId: 'kim', infer: false });

  assert.equal((await client.batchUpdate([{ memoryId: a.id, text: 'Alpha, corrected' }, { memoryId: b.id, text: 'Beta, corrected' }])).message,
    'Successfully updated 2 memories');
  assert.equal((await client.get(a.id)).memory, 'Alpha, corrected');
  assert.deepEqual((await client.history(b.id)).map((h) => h.event), ['ADD', 'UPDATE']);

  // one bad item: nothing changes, and the error names it
  const invalid = (re) => (e) => e.name === 'ValidationError' && re.test(e.message);
  await assert.rejects(client.batchUpdate([{ memoryId: a.id, text: 'again' }, { memoryId: 'nope', text: 'x' }]),
    invalid(/memories\[1\]\.memory_id: Invalid memory_id/));
  await assert.rejects(client.batchDelete([a.id, '01890a5d-ac96-774b-bcce-b302099a8057']), (e) => e.name === 'MemoryNotFoundError');
  await assert.rejects(client.batchDelete([a.id, a.id]), invalid(/memories\[1\]\.memory_id: given twice/));
  assert.equal((await client.get(a.id)).memory, 'Alpha, corrected');
  const extra = await send(url, 'PUT', '/v1/batch/', { memories: [{ memory_id: a.id, text: 'x', metadata: {} }] });
  assert.equal(extra.status, 400);
  assert.match(extra.body.error.message, /memories\[0\]\.metadata: unknown field/);
  const empty = await send(url, 'DELETE', '/v1/batch/', { memories: [] });
  assert.equal(empty.status, 400);
  assert.match(empty.body.error.message, /memories: must hold 1 to 1000 items/);
  // Mem0's bound: 1000 items
  const tooMany = await send(url, 'DELETE', '/v1/batch/', { memories: Array.from({ length: 1001 }, () => ({ memory_id: a.id })) });
  assert.equal(tooMany.status, 400);
  assert.match(tooMany.body.error.message, /memories/);

  assert.equal((await client.batchDelete([a.id, b.id])).message, 'Successfully deleted 2 memories');
  await assert.rejects(client.get(b.id), (e) => e.name === 'MemoryNotFoundError');
  assert.equal((await client.getAll({ filters: { user_id: 'kim' } })).count, 0);
  assert.equal(await hits('quokka'), 0, 'as delete: the raw message went with the memory');
});

// GET /v1/event/{id}/ as Mem0's platform answers it (the client has no method for it: its users
// fetch the route with the same Token header), until the status is a final one.
async function settled(url, key, id) {
  for (let i = 0; ; i++) {
    const r = await fetch(`${url}/v1/event/${id}/`, { headers: { Authorization: `Token ${key}` } });
    const body = await r.json();
    assert.equal(r.status, 200, JSON.stringify(body));
    if (!['PENDING', 'RUNNING'].includes(body.status)) return body;
    assert.ok(i < 6000, `the event is still ${body.status}`); // a bound for a hung run, not a timing check
    await new Promise((res) => setTimeout(res, 10));
  }
}

test('MemoryClient add with asyncMode: Mem0\'s event, polled until the extraction ran', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'm0-async.db')));
  servers.push(proc);
  const client = new MemoryClient({ apiKey: 'unused-locally', host: url });

  const queued = await client.add([{ role: 'user', content: 'Hello. My city is Lisbon. I prefer green tea.' }],
    { userId: 'ana', asyncMode: true });
  assert.ok(!Array.isArray(queued), 'the platform\'s shape: an object, not the list of memories');
  assert.equal(queued.status, 'PENDING');
  assert.match(queued.eventId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal((await rest(url, '/v1/search?q=Lisbon&mode=keyword')).body.hits.length, 1,
    'the messages are stored when add answers');

  const event = await settled(url, 'unused-locally', queued.eventId);
  assert.equal(event.status, 'SUCCEEDED');
  assert.equal(event.id, queued.eventId);
  assert.equal(event.event_type, 'ADD');
  assert.deepEqual(event.results.map((m) => [m.event, m.memory]).sort(),
    [['ADD', 'User prefers green tea'], ['ADD', 'User\'s city is Lisbon']]);
  assert.ok(event.completed_at && event.latency >= 0, JSON.stringify(event));

  // the memories exist, in the scope of the add
  const all = await client.getAll({ filters: { user_id: 'ana' } });
  assert.deepEqual(all.results.map((m) => m.memory).sort(), ['User prefers green tea', 'User\'s city is Lisbon']);

  // a later statement through an event: the same memory, a new version
  const moved = await client.add([{ role: 'user', content: 'My city is Porto.' }], { userId: 'ana', asyncMode: true });
  const done = await settled(url, 'unused-locally', moved.eventId);
  assert.deepEqual(done.results.map((m) => [m.event, m.memory]), [['UPDATE', 'User\'s city is Porto']]);

  // asyncMode false (and no asyncMode): today's answer, the list of the memories it changed
  const sync = await client.add([{ role: 'user', content: 'My team is infra.' }], { userId: 'ana', asyncMode: false });
  assert.ok(Array.isArray(sync));
  assert.deepEqual(sync.map((m) => [m.event, m.memory]), [['ADD', 'User\'s team is infra']]);
  const plain = await client.add([{ role: 'user', content: 'My dog is Rex.' }], { userId: 'ana' });
  assert.deepEqual(plain.map((m) => m.memory), ['User\'s dog is Rex']);
  // infer false keeps each message as it is at once, in async mode too (nothing to queue)
  const raw = await client.add([{ role: 'user', content: 'Door code 7' }], { userId: 'ana', infer: false, asyncMode: true });
  assert.deepEqual(raw.map((m) => m.memory), ['Door code 7']);
});
