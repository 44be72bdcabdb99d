// positions.test.mjs — read-your-writes through replicas (docs/scale-out.md#read-your-writes):
// the client keeps the latest Mnemo-Position an answer carried and sends it back as
// Mnemo-Read-After on every later request; a position only moves forward, even when answers come
// back out of order; readAfter() hands one client's position to another. A tiny local server
// (node:http) plays the server with replicas; against a real SQLite server no header is sent.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { MnemoClient } from '@mnemo/client';

// Answers each request with the next scripted position (or none); records Mnemo-Read-After.
function positions(script) {
  const seen = [];
  const server = createServer((req, res) => {
    seen.push(req.headers['mnemo-read-after']);
    const p = script.shift();
    res.writeHead(200, { 'content-type': 'application/json', ...(p ? { 'mnemo-position': p } : {}) });
    res.end(JSON.stringify({ sessions: 1, messages: 1 }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, seen, url: `http://127.0.0.1:${server.address().port}` })));
}

const servers = [];
after(() => servers.forEach((s) => s.close()));

test('the latest position goes back on every later request, and only moves forward', async () => {
  const s = await positions(['0/3000A28', '0/2FFFFFF', undefined, '1/0', 'not a position']);
  servers.push(s.server);
  const c = new MnemoClient({ baseURL: s.url, maxRetries: 0 });
  assert.equal(c.position, '');
  for (let i = 0; i < 6; i++) await c.stats();
  assert.deepEqual(s.seen, [undefined, '0/3000A28', '0/3000A28', '0/3000A28', '1/0', '1/0']);
  assert.equal(c.position, '1/0');
});

test('readAfter hands one client position to another; a per-call header still wins', async () => {
  const s = await positions([]);
  servers.push(s.server);
  const c = new MnemoClient({ baseURL: s.url, maxRetries: 0 });
  c.readAfter('A/B374D848');
  await c.stats();
  c.readAfter('0/1'); // older: kept out
  await c.stats({ headers: { 'Mnemo-Read-After': '0/5' } });
  assert.deepEqual(s.seen, ['A/B374D848', '0/5']);
  assert.throws(() => c.readAfter(5), /position must be a string/);
});
