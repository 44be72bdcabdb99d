// retry.test.mjs — retries against a tiny local server (node:http) that answers 429 or 503 with
// Retry-After before 200: the client waits as told and retries, at most maxRetries times, then
// throws the typed error; an HTTP-date Retry-After and a huge one are bounded by maxRetryDelayMs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { MnemoClient, RateLimitedError, BusyError, retryDelayMs } from '@mnemo/client';

// Answers the scripted statuses in order, then 200; records when each request came.
function scripted(statuses, retryAfter) {
  const seen = [];
  const server = createServer((req, res) => {
    seen.push({ at: Date.now(), method: req.method, url: req.url, contentType: req.headers['content-type'], origin: req.headers.origin });
    const status = statuses.shift();
    if (status) {
      const code = status === 429 ? 'rate_limited' : 'busy';
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': retryAfter });
      res.end(JSON.stringify({ error: { code, message: `${code}: try again` } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ sessions: 3, messages: 7 }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, seen, url: `http://127.0.0.1:${server.address().port}` })));
}

const servers = [];
after(() => servers.forEach((s) => s.close()));

test('429 then 200: retried after Retry-After', async () => {
  const s = await scripted([429], '1');
  servers.push(s.server);
  const stats = await new MnemoClient({ baseURL: s.url }).stats();
  assert.deepEqual(stats, { sessions: 3, messages: 7 });
  assert.equal(s.seen.length, 2);
  // waited for the second the server asked (setTimeout never fires early; small clock slack)
  assert.ok(s.seen[1].at - s.seen[0].at >= 990, `retried after ${s.seen[1].at - s.seen[0].at} ms`);
});

test('503 twice then 200 on a POST: the same JSON body each time, no Origin', async () => {
  const s = await scripted([503, 503], '0');
  servers.push(s.server);
  const c = new MnemoClient({ baseURL: s.url, maxRetries: 2 });
  await c.gc();
  assert.equal(s.seen.length, 3);
  for (const r of s.seen) {
    assert.equal(r.method, 'POST');
    assert.equal(r.contentType, 'application/json');
    assert.equal(r.origin, undefined);
  }
});

test('retries are bounded: past maxRetries the typed error', async () => {
  const s = await scripted([429, 429, 429], '0');
  servers.push(s.server);
  const e = await new MnemoClient({ baseURL: s.url, maxRetries: 1 }).stats().catch((x) => x);
  assert.ok(e instanceof RateLimitedError, String(e));
  assert.equal(e.status, 429);
  assert.equal(e.code, 'rate_limited');
  assert.equal(s.seen.length, 2);
  const b = await scripted([503], '0');
  servers.push(b.server);
  const busy = await new MnemoClient({ baseURL: b.url, maxRetries: 0 }).stats().catch((x) => x);
  assert.ok(busy instanceof BusyError);
  assert.equal(busy.headers.get('retry-after'), '0');
});

test('Retry-After: seconds, an HTTP date, absent, and the cap', () => {
  const h = (v) => new Headers(v === undefined ? {} : { 'retry-after': v });
  assert.equal(retryDelayMs(h('2'), 0, 30000), 2000);
  const date = new Date(Date.now() + 5000).toUTCString();
  const d = retryDelayMs(h(date), 0, 30000);
  assert.ok(d > 3000 && d <= 5000, `date gave ${d}`);
  assert.equal(retryDelayMs(h('3600'), 0, 30000), 30000);
  const backoff = retryDelayMs(h(undefined), 2, 30000);
  assert.ok(backoff >= 1500 && backoff <= 2500, `backoff ${backoff}`);
});
