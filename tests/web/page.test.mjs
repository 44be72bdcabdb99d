// page.test.mjs — the web page of `mnemo serve` in a real browser: Debian's chromium, headless,
// driven by playwright-core (no browser downloaded), against a real server with a database seeded
// through REST. Checks the rendered DOM and its layout against the REST answers: the context bar's
// parts add up to the budget and equal the report, each message's fate equals the report's detail,
// long contents are collapsed, stored HTML stays text and no CSP violation happens; the actions
// change the database as the API says; the page follows new messages; a deep ?at reads one page
// and the history pages on both ways from it; an action keeps the pages loaded and the user's
// place, and a malformed ?at is said, never sent; a stopped server is said plainly and turns the
// health pill (a server back on the same port turns it green); keyboard navigation; the
// long-term memories (list, as of, recall, history, update, delete, forget, remember) against
// REST, and the memory part of the context bar; an axe-core audit with no serious or critical
// violations; no sideways scrolling at phone width, long unbroken words too; the first load of an
// empty database (the icon answered, a hint on how to add data); screenshots (desktop, phone,
// dark) in $SHOTS. Waits on progress with generous deadlines, never on time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const MNEMO = process.env.MNEMO;
assert.ok(MNEMO, 'MNEMO must name the mnemo binary');
const SHOTS = process.env.SHOTS || '/tmp';
const tmp = mkdtempSync(join(process.env.MNEMO_TEST_TMP || '/tmp', 'web-'));
const env = { ...process.env, HOME: tmp, XDG_CONFIG_HOME: join(tmp, 'cfg'), XDG_DATA_HOME: join(tmp, 'data') };
delete env.MNEMO_API_KEY;
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script><b>bold?</b>';
const BUDGET = 400;

let server, url, browser;

// A server on db, listening on `listen` (any free port by default); resolves with its URL. With
// `log` (an array), it logs every request (--verbose) and its standard error lands in log.
function startServer(db, listen = '127.0.0.1:0', log = null) {
  return new Promise((resolve, reject) => {
    const proc = spawn(MNEMO, ['--db', db, 'serve', '--listen', listen, ...(log ? ['--verbose'] : [])],
      { env, stdio: ['ignore', 'pipe', log ? 'pipe' : 'inherit'] });
    if (log) proc.stderr.on('data', (d) => log.push(String(d)));
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve({ url: buf.slice(0, nl), proc });
    });
    proc.on('exit', (code) => reject(new Error(`mnemo serve exited with ${code}`)));
  });
}

async function rest(method, path, body, ok = true) { return restAt(url, method, path, body, ok); }
async function restAt(base, method, path, body, ok = true) {
  const r = await fetch(base + path, { method, headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const j = await r.json();
  if (ok) assert.ok(r.ok, `${method} ${path}: ${r.status} ${JSON.stringify(j)}`);
  return { status: r.status, j };
}

// A session whose context at BUDGET tokens keeps some messages and drops others for the budget,
// with a tool call and its long JSON result, and hostile markup in a message.
async function seed(title) {
  const { j } = await rest('POST', '/v1/sessions', { title, system_prompt: 'You are a careful assistant.' });
  const id = j.session.id;
  const big = JSON.stringify({ rows: Array.from({ length: 200 }, (_, i) => ({ line: i, text: `row ${i} of the listing` })) });
  const msgs = [
    { role: 'user', content: 'Hello, please remember that my favourite colour is teal. ' + 'filler '.repeat(60) },
    { role: 'assistant', content: 'Noted: teal. ' + 'more words '.repeat(40) },
    { role: 'user', content: HOSTILE },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'list_rows', arguments: '{"limit":200}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: big },
    { role: 'assistant', content: 'Listed 200 rows.' },
    { role: 'user', content: 'What is my favourite colour?' },
  ];
  await rest('POST', `/v1/sessions/${id}/messages`, { messages: msgs });
  return id;
}

async function context(id, extra = {}) {
  return (await rest('POST', `/v1/sessions/${id}/context`, { format: 'openai', detail: true, fold: 'off', max_tokens: BUDGET, ...extra })).j;
}

// A page that records CSP violations, console errors and script errors; the test fails on any.
async function open(ctxOpts = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...ctxOpts });
  const page = await context.newPage();
  const problems = [];
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  // a 404 from the API is an answer the page shows (no summary yet); a 404 for the icon is a flaw
  page.on('console', (m) => {
    if (m.type() === 'error' && (!/404|Not Found/.test(m.text()) || /favicon/.test(m.location().url)))
      problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.dialogs = [];
  page.on('dialog', (d) => { page.dialogs.push(d.message()); d.accept(); });
  page.problems = async () => [...problems, ...(await page.evaluate(() => window.__csp.map((v) => `csp: ${v}`)))];
  return { context, page };
}

async function openSession(page, id) {
  await page.goto(`${url}/#/session/${id}`);
  await page.locator('#context-budget').fill(String(BUDGET));
  await page.locator('#context-go').click();
  await page.waitForFunction((b) => document.querySelector('.ctx-line') && document.querySelector('.ctx-line').textContent.includes(`budget of ${b}`), BUDGET, { timeout: 30000 });
}

before(async () => {
  ({ url, proc: server } = await startServer(join(tmp, 'web.db')));
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'] });
});

after(async () => {
  if (browser) await browser.close();
  if (server) { server.removeAllListeners('exit'); server.kill('SIGTERM'); }
});

test('first load of an empty database: the icon is answered, the list says how to add data', async () => {
  const log = [];
  const empty = await startServer(join(tmp, 'empty.db'), '127.0.0.1:0', log);
  try {
    const { context: bc, page } = await open();
    await page.goto(`${empty.url}/`);
    const hint = page.locator('#sessions-body td.empty');
    await hint.waitFor({ state: 'visible', timeout: 30000 });
    const text = await hint.textContent();
    assert.match(text, /^No sessions yet\./);
    for (const how of ['mnemo demo', 'mnemo session create', 'mnemo append', 'POST /v1/sessions', 'POST /v1/sessions/{id}/messages'])
      assert.ok(text.includes(how), `the hint names ${how}: ${text}`);
    assert.deepEqual(await hint.locator('code').allTextContents(), ['mnemo demo', '--db', 'mnemo session create',
      'mnemo append <id> user "…"', 'POST /v1/sessions', 'POST /v1/sessions/{id}/messages'], 'commands and routes as code');
    // the browser asks for the icon by itself (Playwright does not see that request): the server's log says how it went
    const asked = () => log.join('').split('\n').find((l) => /path=\/favicon\.ico /.test(l));
    const deadline = Date.now() + 30000;
    while (!asked() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.match(asked() || 'the browser never asked for /favicon.ico', /route=favicon status=200 /);
    await page.screenshot({ path: join(SHOTS, 'sessions-empty-desktop.png'), fullPage: true });
    assert.deepEqual(await page.problems(), []);
    await bc.close();
  } finally {
    empty.proc.removeAllListeners('exit');
    empty.proc.kill('SIGTERM');
  }
});

test('the context picture equals the report: bar parts, numbers, each message fate', async () => {
  const id = await seed('picture');
  const rep = (await context(id)).report;
  assert.ok(Array.isArray(rep.detail), 'the report has detail');
  const { context: bc, page } = await open();
  await openSession(page, id);
  const segs = await page.$$eval('.ctxbar .seg', (ns) => ns.map((n) => ({ part: n.dataset.part, tokens: +n.dataset.tokens,
    width: n.getBoundingClientRect().width, title: n.title, label: n.getAttribute('aria-label') })));
  const sum = segs.reduce((a, s) => a + s.tokens, 0);
  assert.equal(sum, Math.max(rep.max_tokens, rep.tokens), 'the parts add up to the budget');
  const byPart = Object.fromEntries(segs.map((s) => [s.part, s.tokens]));
  assert.equal(byPart.system, rep.parts.system);
  assert.equal(byPart.framing, rep.parts.framing);
  assert.equal(byPart.messages + byPart.summary + (byPart.rag || 0), rep.parts.messages);
  assert.equal(byPart.free, Math.max(0, rep.max_tokens - rep.tokens));
  for (const s of segs) assert.equal(s.title, s.label, 'the exact count on hover and for assistive tech');
  const barWidth = await page.$eval('.ctxbar', (n) => n.clientWidth);
  const widths = segs.reduce((a, s) => a + s.width, 0);
  assert.ok(Math.abs(widths - barWidth) <= 2, `the parts fill the bar: ${widths} of ${barWidth}`);
  for (const s of segs) assert.ok(Math.abs(s.width - barWidth * s.tokens / sum) <= 1.5, `part ${s.part} is to scale`);
  assert.match(await page.textContent('.ctx-tokens'), new RegExp(`^${rep.tokens} tokens`));

  const fates = await page.$$eval('#history article.msg', (ns) => ns.map((n) => ({ seq: +n.dataset.seq, fate: n.dataset.fate })));
  assert.equal(fates.length, 7);
  const detail = Object.fromEntries(rep.detail.map((d) => [d.seq, d.fate]));
  for (const f of fates) assert.equal(f.fate, detail[f.seq] || 'dropped_budget', `message #${f.seq}`);
  const count = (re) => fates.filter((f) => re.test(f.fate)).length;
  assert.equal(count(/^(kept|trimmed|offloaded)$/), rep.messages.kept);
  assert.equal(count(/^dropped_budget$/), rep.dropped.budget);
  assert.ok(rep.dropped.budget > 0, 'the budget drops something (the seed is meant to)');
  assert.equal(count(/^dropped_orphan$/), rep.dropped.orphan_tool_result);
  await page.screenshot({ path: join(SHOTS, 'session-desktop.png'), fullPage: true });
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('reading: long contents collapsed, JSON pretty, call and result linked, hostile HTML as text', async () => {
  const id = await seed('reading');
  const { context: bc, page } = await open();
  await openSession(page, id);
  const tool = page.locator('#msg-5');
  const det = tool.locator('details.long');
  assert.match(await det.locator('summary').textContent(), /characters, \d+ lines/);
  assert.equal(await det.locator('pre').isVisible(), false, 'collapsed');
  await det.locator('summary').click();
  assert.equal(await det.locator('pre').isVisible(), true, 'expanded');
  assert.match(await det.locator('pre').textContent(), /\n {2}"rows": \[\n/, 'JSON pretty-printed');
  await page.locator('#msg-4 a.to-result').click();
  assert.equal(await page.evaluate(() => document.activeElement.id), 'msg-5', 'the call links to its result');
  await page.locator('#msg-5 a.to-call').click();
  assert.equal(await page.evaluate(() => document.activeElement.id), 'msg-4', 'the result links to its call');
  assert.equal(await page.locator('#msg-3 pre.content').textContent(), HOSTILE);
  assert.equal(await page.locator('#history img, #history script, #history b').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  // search links to the message in its session
  await page.goto(`${url}/#/search?q=teal&mode=keyword`);
  const hit = page.locator('#search-body a[href*="?at="]').first();
  await hit.waitFor({ timeout: 30000 });
  await page.screenshot({ path: join(SHOTS, 'search-desktop.png'), fullPage: true });
  await hit.click();
  await page.waitForFunction(() => document.activeElement && /^msg-/.test(document.activeElement.id), null, { timeout: 30000 });
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('actions change the database as the API says', async () => {
  const id = await seed('actions');
  for (let i = 0; i < 4; i++) // more turns, so that compaction has something to fold
    await rest('POST', `/v1/sessions/${id}/messages`, { messages: [{ role: 'user', content: `question ${i}` }, { role: 'assistant', content: `answer ${i}` }] });
  const { context: bc, page } = await open();
  await openSession(page, id);
  // title
  await page.locator('#title-edit').click();
  await page.locator('#title-input').fill('renamed from the page');
  await page.locator('#title-form button[type=submit]').click();
  await page.waitForFunction(() => document.getElementById('session-title').textContent === 'renamed from the page', null, { timeout: 30000 });
  assert.equal((await rest('GET', `/v1/sessions/${id}`)).j.session.title, 'renamed from the page');
  // pin and unpin a message: the button follows the stored flag
  await page.locator('#msg-1 button.pin-toggle').click();
  await page.waitForFunction(() => document.querySelector('#msg-1 button.pin-toggle').textContent === 'Unpin', null, { timeout: 30000 });
  assert.equal((await rest('GET', `/v1/sessions/${id}/messages?limit=100`)).j.messages[0].pinned, true);
  assert.ok(await page.locator('#msg-1 .pin').count(), 'a pinned badge');
  await page.locator('#msg-1 button.pin-toggle').click();
  await page.waitForFunction(() => document.querySelector('#msg-1 button.pin-toggle').textContent === 'Pin', null, { timeout: 30000 });
  assert.equal((await rest('GET', `/v1/sessions/${id}/messages?limit=100`)).j.messages[0].pinned, false);
  // delete a message (confirmed)
  const before = (await rest('GET', `/v1/sessions/${id}/messages?limit=100`)).j.messages;
  await page.locator('#msg-2 button.delete').click();
  await page.waitForFunction(() => !document.getElementById('msg-2'), null, { timeout: 30000 });
  const afterDel = (await rest('GET', `/v1/sessions/${id}/messages?limit=100`)).j.messages;
  assert.equal(afterDel.length, before.length - 1);
  assert.ok(!afterDel.some((m) => m.seq === 2));
  // compact with instructions
  await page.locator('#compact-instructions').fill('keep the favourite colour');
  await page.locator('#compact-form button[type=submit]').click();
  await page.waitForFunction(() => /^Compaction: /.test(document.getElementById('live').textContent) ||
    document.getElementById('error').textContent, null, { timeout: 60000 });
  assert.equal(await page.textContent('#error'), '', 'compaction from the page');
  const ev = (await rest('GET', `/v1/sessions/${id}/events`)).j.events.filter((e) => e.kind === 'compaction');
  assert.ok(ev.length, 'a compaction event');
  const data = typeof ev[0].data === 'string' ? JSON.parse(ev[0].data) : ev[0].data;
  assert.equal(await page.textContent('#live'), `Compaction: ${data.outcome}.`);
  await page.waitForFunction(() => /compaction/.test(document.getElementById('events').textContent), null, { timeout: 30000 });
  if (data.outcome === 'ok') {
    const sum = (await rest('GET', `/v1/sessions/${id}/summary`)).j.summary;
    await page.waitForFunction((u) => document.getElementById('summary-out').textContent.includes(`up to #${u}`), sum.covers_upto, { timeout: 30000 });
  }
  // fork from a message
  await page.locator('#msg-3 button.fork').click();
  await page.waitForFunction((old) => location.hash.startsWith('#/session/') && !location.hash.includes(old), id, { timeout: 30000 });
  const forkId = decodeURIComponent(page.url().split('#/session/')[1]);
  const fork = (await rest('GET', `/v1/sessions/${forkId}`)).j.session;
  assert.equal(fork.parent_id, id);
  assert.equal((await rest('GET', `/v1/sessions/${forkId}/messages?limit=100`)).j.messages.length, 2, 'messages up to #3 (#2 deleted)');
  // the fork's turn limit, from the title form (session_limit)
  await page.waitForSelector('#msg-1', { timeout: 30000 });
  await page.locator('#title-edit').click();
  await page.locator('#limit-input').fill('1');
  await page.locator('#title-form button[type=submit]').click();
  await page.waitForFunction(() => [...document.querySelectorAll('#session-meta dt')].some((dt) =>
    dt.textContent === 'turn limit' && dt.nextElementSibling.textContent === '1'), null, { timeout: 30000 });
  assert.equal((await rest('GET', `/v1/sessions/${forkId}`)).j.session.max_turns, 1);
  // forget the fork (confirmed)
  await page.locator('#session-forget').click();
  await page.waitForFunction(() => location.hash.startsWith('#/sessions'), null, { timeout: 30000 });
  assert.equal((await rest('GET', `/v1/sessions/${forkId}`, undefined, false)).status, 404);
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('live: a message appended through REST appears without reloading', async () => {
  const id = await seed('live');
  const { context: bc, page } = await open();
  await openSession(page, id);
  await rest('POST', `/v1/sessions/${id}/messages`, { role: 'assistant', content: 'Teal, as you said.' });
  await page.waitForSelector('#msg-8', { timeout: 60000 });
  assert.equal(await page.locator('#msg-8 pre.content').textContent(), 'Teal, as you said.');
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

// Stops a server and waits until it has exited (its port is then free); at once when it has.
function stopServer(proc) {
  proc.removeAllListeners('exit');
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => { proc.on('exit', resolve); proc.kill('SIGTERM'); });
}
const pill = (page) => page.$eval('#health', (n) => ({ text: n.textContent, cls: n.className }));

test('the server stops: the page says it cannot reach it and the health pill turns; back on the same port, green again', async () => {
  const db = join(tmp, 'stops.db');
  let s = await startServer(db);
  try {
    const base = s.url, port = new URL(base).port;
    const { j } = await restAt(base, 'POST', '/v1/sessions', { title: 'the server stops' });
    await restAt(base, 'POST', `/v1/sessions/${j.session.id}/messages`, { role: 'user', content: 'still there?' });
    const { context: bc, page } = await open();
    await page.goto(`${base}/#/session/${j.session.id}`);
    await page.waitForSelector('#msg-1', { timeout: 30000 });
    await page.waitForFunction(() => document.getElementById('health').className === 'pill ok', null, { timeout: 30000 });
    await stopServer(s.proc);
    // the live refresh is the next request: it finds no server (one that came while the server
    // was draining was answered 503, a message of its own)
    await page.waitForFunction(() => /reach|fetch/i.test(document.getElementById('error').textContent), null, { timeout: 60000 });
    assert.match(await page.textContent('#error'), /^cannot reach the mnemo server at .*: is it running\?$/i, 'said plainly');
    await page.waitForFunction(() => document.getElementById('health').className !== 'pill ok', null, { timeout: 30000 });
    const down = await pill(page);
    assert.deepEqual(down, { text: 'unreachable', cls: 'pill down' }, 'the health pill says so');
    s = await startServer(db, `127.0.0.1:${port}`);
    await page.waitForFunction(() => document.getElementById('health').className === 'pill ok', null, { timeout: 60000 });
    assert.equal((await pill(page)).text, 'healthy');
    await page.waitForFunction(() => document.getElementById('error').hidden, null, { timeout: 30000 });
    assert.equal(await page.textContent('#error'), '', 'the error goes once the server answers');
    // the browser logs each refused or 503 (draining) request: those are this test's point
    const problems = (await page.problems()).filter((p) => !/ERR_CONNECTION_REFUSED|status of 503/.test(p));
    assert.deepEqual(problems, []);
    await bc.close();
  } finally {
    await stopServer(s.proc);
  }
});

// A field's error: the text next to the field (its aria-describedby), '' when none.
const fieldError = (page, id) => page.evaluate((i) => {
  const n = document.getElementById(i), d = n.getAttribute('aria-describedby');
  const e = d && document.getElementById(d);
  return e && !e.hidden ? e.textContent : '';
}, id);

test('number fields take whole numbers as typed; anything else is an error next to the field and sends nothing', async () => {
  const id = await seed('numbers');
  const { context: bc, page } = await open();
  await openSession(page, id);
  // the turn limit: 1e2 is 100 (not 1); 1.5 and -1 are refused where they were typed
  await page.locator('#title-edit').click();
  await page.locator('#limit-input').fill('1e2');
  await page.locator('#title-form button[type=submit]').click();
  await page.waitForFunction(() => [...document.querySelectorAll('#session-meta dt')].some((dt) =>
    dt.textContent === 'turn limit' && dt.nextElementSibling.textContent !== 'none'), null, { timeout: 30000 });
  assert.equal((await rest('GET', `/v1/sessions/${id}`)).j.session.max_turns, 100, 'Turn limit 1e2 is 100');
  const sent = [];
  page.on('request', (r) => { if (r.method() !== 'GET') sent.push(`${r.method()} ${r.url()}`); });
  for (const bad of ['1.5', '-1', '2000000']) {
    await page.locator('#title-edit').click();
    await page.locator('#limit-input').fill(bad);
    await page.locator('#title-form button[type=submit]').click();
    await page.waitForFunction(() => document.getElementById('limit-input').getAttribute('aria-invalid') === 'true', null, { timeout: 30000 });
    assert.match(await fieldError(page, 'limit-input'), /whole number/, `Turn limit ${bad}: the error next to the field`);
    assert.equal(await page.locator('#title-form').isVisible(), true, 'the form stays open');
    // the context preview the saved limit of 1e2 asked for may still be on its way (a read)
    assert.deepEqual(sent.filter((s) => !s.endsWith('/context')), [], `Turn limit ${bad}: nothing sent`);
    await page.locator('#title-cancel').click();
  }
  assert.equal((await rest('GET', `/v1/sessions/${id}`)).j.session.max_turns, 100);
  // the budget and the model window of the context preview
  await page.locator('#context-budget').fill('1e3');
  await page.locator('#context-window').fill('1e5');
  await page.locator('#context-go').click();
  await page.waitForFunction(() => document.querySelector('.ctx-line').textContent.includes('budget of 1000'), null, { timeout: 30000 });
  assert.match(await page.textContent('.ctx-report'), /needed of 100000/, 'Model window 1e5 is 100000');
  sent.length = 0;
  await page.locator('#context-budget').fill('0.5');
  await page.locator('#context-go').click();
  await page.waitForFunction(() => document.getElementById('context-budget').getAttribute('aria-invalid') === 'true', null, { timeout: 30000 });
  assert.match(await fieldError(page, 'context-budget'), /whole number/);
  assert.deepEqual(sent, [], 'Budget 0.5: nothing sent');
  await page.locator('#context-budget').fill(String(BUDGET));
  await page.locator('#context-window').fill('');
  await page.locator('#context-go').click();
  await page.waitForFunction((b) => document.querySelector('.ctx-line').textContent.includes(`budget of ${b}`), BUDGET, { timeout: 30000 });
  assert.equal(await fieldError(page, 'context-budget'), '', 'the error goes once the value is right');
  // the token cap of a new memory block, and the number of search results
  await page.goto(`${url}/#/memories?ns=numbers`);
  await page.locator('#mem-add-text').fill('Capped block');
  await page.locator('#mem-add-pinned').check();
  await page.locator('#mem-add-cap').fill('1e2');
  await page.locator('#mem-add-form button[type=submit]').click();
  await page.waitForFunction(() => /^Added /.test(document.getElementById('mem-summary').textContent), null, { timeout: 30000 });
  const blocks = (await rest('GET', '/v1/memory?namespace=numbers')).j.memories;
  assert.deepEqual(blocks.map((m) => [m.text, m.token_cap]), [['Capped block', 100]], 'Token cap 1e2 is 100');
  sent.length = 0;
  await page.locator('#mem-add-text').fill('Not added');
  await page.locator('#mem-add-cap').fill('2.5');
  await page.locator('#mem-add-form button[type=submit]').click();
  await page.waitForFunction(() => document.getElementById('mem-add-cap').getAttribute('aria-invalid') === 'true', null, { timeout: 30000 });
  assert.deepEqual(sent, [], 'Token cap 2.5: nothing sent');
  await page.goto(`${url}/#/search`);
  await page.locator('#search-q').fill('teal');
  await page.locator('#search-k').fill('1.5');
  await page.locator('#search-form button[type=submit]').click();
  await page.waitForFunction(() => document.getElementById('search-k').getAttribute('aria-invalid') === 'true', null, { timeout: 30000 });
  assert.equal(page.url().includes('#/search?'), false, 'Results 1.5: no search');
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

// A session of 3500 messages (seq 1..3500), appended in one request.
let bigId = null;
async function bigSession() {
  if (bigId) return bigId;
  const { j } = await rest('POST', '/v1/sessions', { title: 'big' });
  const messages = Array.from({ length: 3500 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `line ${i + 1}` }));
  await rest('POST', `/v1/sessions/${j.session.id}/messages`, { messages });
  return (bigId = j.session.id);
}
// Counts the page's history requests, to wait until none is in flight.
function historyRequests(page) {
  const t = { started: 0, done: 0, urls: [] };
  const mine = (r) => /\/messages\?/.test(r.url());
  page.on('request', (r) => { if (mine(r)) { t.started++; t.urls.push(r.url()); } });
  page.on('requestfinished', (r) => { if (mine(r)) t.done++; });
  page.on('requestfailed', (r) => { if (mine(r)) t.done++; });
  t.idle = async () => { while (t.done < t.started) await page.waitForTimeout(50); await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r()))); };
  return t;
}
const shownSeqs = (page) => page.$$eval('#history article.msg', (ns) => ns.map((n) => +n.dataset.seq));

test('load more: one load at a time, never a message twice', async () => {
  const id = await bigSession();
  const { context: bc, page } = await open();
  const reqs = historyRequests(page);
  await page.goto(`${url}/#/session/${id}`);
  await page.waitForSelector('#msg-1000', { timeout: 60000 });
  await page.locator('#history-more').dblclick();
  await page.waitForSelector('#msg-2000', { timeout: 60000 });
  await reqs.idle();
  let seqs = await shownSeqs(page);
  assert.equal(seqs.length, new Set(seqs).size, 'no message shown twice after a double click');
  assert.equal(seqs.length, 2000);
  await page.locator('#history-more').click();
  await page.waitForSelector('#msg-3000', { timeout: 60000 });
  await reqs.idle();
  seqs = await shownSeqs(page);
  assert.deepEqual(seqs, Array.from({ length: 3000 }, (_, i) => i + 1), 'in order, each once');
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('?at past the first page: the page holding it is loaded and the message focused; live counts only new messages', async () => {
  const id = await bigSession();
  const { context: bc, page } = await open();
  const reqs = historyRequests(page);
  await page.goto(`${url}/#/session/${id}?at=1500`);
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'msg-1500', null, { timeout: 60000 });
  const seqs = await shownSeqs(page);
  assert.equal(seqs.length, new Set(seqs).size);
  // a live refresh goes by: nothing is new
  const n = reqs.started;
  while (reqs.started === n) await page.waitForTimeout(100);
  await reqs.idle();
  assert.equal(await page.textContent('#live'), '', 'old messages are not announced as new');
  await rest('POST', `/v1/sessions/${id}/messages`, { role: 'user', content: 'the newest' });
  await page.waitForFunction(() => document.getElementById('live').textContent !== '', null, { timeout: 60000 });
  assert.match(await page.textContent('#live'), /^1 new message /);
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

// A session of 12500 messages, deeper than the 10000 the history route gives in one request.
async function deepSession() {
  const { j } = await rest('POST', '/v1/sessions', { title: 'deep' });
  const messages = Array.from({ length: 12500 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `deep ${i + 1}` }));
  await rest('POST', `/v1/sessions/${j.session.id}/messages`, { messages });
  return j.session.id;
}
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('?at deep in a long session: only the page holding it is read; Load earlier and Load more go on, each message once', async () => {
  const id = await deepSession();
  const { context: bc, page } = await open();
  const reqs = historyRequests(page);
  await page.goto(`${url}/#/session/${id}?at=12000`);
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'msg-12000', null, { timeout: 120000 });
  assert.ok(reqs.started <= 3, `a few history requests, not one per page before #12000: ${reqs.urls.join(' ')}`);
  let seqs = await shownSeqs(page);
  assert.ok(seqs.length <= 1000 && seqs[0] > 1, `one page, not the history from #1: #${seqs[0]}..#${seqs.at(-1)}`);
  assert.deepEqual(seqs, range(seqs[0], seqs.at(-1)), 'in order, each once, none skipped');
  assert.ok(seqs.includes(12000));
  // on to the end
  await page.locator('#history-more').click();
  await page.waitForSelector('#msg-12500', { timeout: 60000 });
  await reqs.idle();
  const first = seqs[0];
  seqs = await shownSeqs(page);
  assert.deepEqual(seqs, range(first, 12500), 'Load more: on from the last shown, each once');
  assert.equal(await page.locator('#history-more').isVisible(), false, 'nothing more after #12500');
  // back, twice, the second one double-clicked
  await page.locator('#history-earlier').click();
  await page.waitForSelector(`#msg-${first - 1}`, { timeout: 60000 });
  await reqs.idle();
  seqs = await shownSeqs(page);
  assert.ok(seqs[0] < first - 1);
  assert.deepEqual(seqs, range(seqs[0], 12500), 'Load earlier: the messages just before, each once, in order');
  const second = seqs[0];
  await page.locator('#history-earlier').dblclick();
  await page.waitForSelector(`#msg-${second - 1}`, { timeout: 60000 });
  await reqs.idle();
  seqs = await shownSeqs(page);
  assert.deepEqual(seqs, range(seqs[0], 12500), 'a double click: each message once');
  assert.ok(seqs[0] > 1, 'still not the whole history');
  // a link past the end: the newest page
  await page.evaluate((sid) => { window.location.hash = `#/session/${sid}?at=99999`; }, id);
  await page.waitForFunction(() => !document.getElementById('msg-11000'), null, { timeout: 60000 });
  await reqs.idle();
  seqs = await shownSeqs(page);
  assert.ok(seqs.length > 0 && seqs.length <= 1000, `one page: #${seqs[0]}..#${seqs.at(-1)}`);
  assert.deepEqual(seqs, range(seqs[0], 12500), 'the newest page, each once');
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

// Whether a message is on screen (some of it inside the window).
const onScreen = (page, seq) => page.evaluate((s) => {
  const n = document.getElementById(`msg-${s}`);
  if (!n) return false;
  const r = n.getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight;
}, seq);

test('an action keeps the history the user loaded: the same run, each once, the changed message updated and still on screen', async () => {
  const { j } = await rest('POST', '/v1/sessions', { title: 'keep my place' });
  const id = j.session.id;
  const messages = Array.from({ length: 2500 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `kept ${i + 1}` }));
  await rest('POST', `/v1/sessions/${id}/messages`, { messages });
  const { context: bc, page } = await open();
  await page.goto(`${url}/#/session/${id}`);
  await page.waitForSelector('#msg-1000', { timeout: 60000 });
  await page.locator('#history-more').click();
  await page.waitForSelector('#msg-2000', { timeout: 60000 });
  await page.waitForFunction(() => !document.getElementById('history-more').disabled, null, { timeout: 60000 });
  await page.locator('#history-more').click();
  await page.waitForSelector('#msg-2500', { timeout: 60000 });
  assert.deepEqual(await shownSeqs(page), range(1, 2500), 'three pages loaded');
  // pin a message of the third page: its button keeps the focus, so it is the place to keep
  await page.locator('#msg-2400 button.pin-toggle').click();
  await page.waitForFunction(() => !document.getElementById('msg-2400') ||
    document.querySelector('#msg-2400 button.pin-toggle').textContent === 'Unpin', null, { timeout: 60000 });
  assert.equal(await page.textContent('#error'), '');
  assert.ok(await page.locator('#msg-2400').count(), 'the third page is still shown after the pin');
  assert.deepEqual(await shownSeqs(page), range(1, 2500), 'the same run, in order, each once');
  assert.equal(await page.locator('#msg-2400 .pin').textContent(), 'pinned');
  assert.equal((await rest('GET', `/v1/sessions/${id}/messages?after=2399&limit=1`)).j.messages[0].pinned, true);
  assert.ok(await onScreen(page, 2400), 'the pinned message is still on screen');
  assert.equal(await page.evaluate(() => document.activeElement.closest('article') && document.activeElement.closest('article').id),
    'msg-2400', 'the focus stays on the message acted on');
  assert.equal(await page.locator('#history-more').isVisible(), false, 'nothing more after #2500');

  // a second action while the first one's history is still being read: the run is kept all the same
  let heldRoute = null, held;
  const caught = new Promise((r) => { held = r; });
  await page.route(/\/messages\?/, (route) => {
    // the history read again from #1 (not the newest seq, not a live refresh: those have tail, after)
    if (heldRoute || /[?&](tail|after)=/.test(route.request().url())) return route.continue();
    heldRoute = route; // left unanswered until the second action is shown
    held();
  });
  await page.locator('#msg-2400 button.pin-toggle').click(); // unpin
  await caught;
  await page.locator('#msg-2300 button.pin-toggle').click();
  await page.waitForFunction(() => !document.getElementById('msg-2300') ||
    document.querySelector('#msg-2300 button.pin-toggle').textContent === 'Unpin', null, { timeout: 60000 });
  await heldRoute.continue();
  await page.unroute(/\/messages\?/);
  assert.equal(await page.textContent('#error'), '');
  assert.deepEqual(await shownSeqs(page), range(1, 2500), 'two actions in a row: the same run, in order, each once');
  assert.equal(await page.textContent('#msg-2400 button.pin-toggle'), 'Pin');
  assert.equal(await page.textContent('#msg-2300 button.pin-toggle'), 'Unpin');
  assert.ok(await onScreen(page, 2300), 'the message acted on last is on screen');

  // a run begun by ?at and grown by Load earlier: a delete keeps it whole (less the deleted one)
  await page.goto(`${url}/#/sessions`);
  await page.waitForSelector('#sessions-body a', { timeout: 30000 });
  await page.evaluate((sid) => { window.location.hash = `#/session/${sid}?at=2100`; }, id);
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'msg-2100', null, { timeout: 60000 });
  assert.deepEqual(await shownSeqs(page), range(2001, 2500), 'the page holding #2100');
  await page.locator('#history-earlier').click();
  await page.waitForSelector('#msg-1001', { timeout: 60000 });
  await page.waitForFunction(() => !document.getElementById('history-earlier').disabled, null, { timeout: 60000 });
  assert.deepEqual(await shownSeqs(page), range(1001, 2500));
  await page.locator('#msg-1500 button.delete').click();
  await page.waitForFunction(() => !document.getElementById('msg-1500'), null, { timeout: 60000 });
  assert.match(page.dialogs.at(-1), /^Delete message #1500\?/);
  assert.equal(await page.textContent('#error'), '');
  assert.deepEqual(await shownSeqs(page), range(1001, 2500).filter((s) => s !== 1500), 'the run from Load earlier on, less #1500');
  assert.ok(await onScreen(page, 1501), 'the message after the deleted one takes its place on screen');
  assert.equal(await page.locator('#history-earlier').isVisible(), true, 'Load earlier still goes back before #1001');
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('a malformed ?at in the address: "not a message number", the session from its first message, no bad request', async () => {
  const id = await seed('bad at');
  const { context: bc, page } = await open();
  const afters = [];
  page.on('request', (r) => { if (/\/messages\?/.test(r.url())) afters.push(new URL(r.url()).searchParams.get('after')); });
  const badAfters = () => afters.filter((a) => a !== null && !(/^\d+$/.test(a) && Number(a) <= 2 ** 53));
  for (const bad of ['1e20', '-5', 'abc', '0', '1.5']) {
    await page.goto('about:blank'); // a link opened afresh
    afters.length = 0;
    await page.goto(`${url}/#/session/${id}?at=${bad}`);
    // the history shown, or an error other than the note
    await page.waitForFunction(() => document.querySelector('#history article.msg') ||
      /^(?!not a message number)./.test(document.getElementById('error').textContent), null, { timeout: 30000 });
    assert.equal(await page.textContent('#error'), `not a message number: at=${bad} (shown from the first message)`, `at=${bad}`);
    assert.deepEqual(await shownSeqs(page), range(1, 7), `at=${bad}: the session from its first message`);
    assert.deepEqual(badAfters(), [], `at=${bad}: no out-of-range after sent`);
  }
  // the largest seq there can be is a link past the end: the newest page, no error
  await page.goto('about:blank');
  afters.length = 0;
  await page.goto(`${url}/#/session/${id}?at=${2 ** 53}`);
  await page.waitForSelector('#msg-7', { timeout: 30000 });
  assert.equal(await page.textContent('#error'), '');
  assert.deepEqual(await shownSeqs(page), range(1, 7));
  assert.deepEqual(badAfters(), []);
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('messages out of the active history after session clear: not said to be past a turn limit', async () => {
  const id = await seed('cleared');
  await rest('POST', `/v1/sessions/${id}/clear`, {});
  const { context: bc, page } = await open();
  await openSession(page, id);
  await page.waitForFunction(() => document.querySelector('#msg-1 .fate').textContent !== '', null, { timeout: 30000 });
  assert.equal(await page.textContent('#msg-1 .fate'), 'not in the active history');
  assert.equal(await page.locator('#msg-1').getAttribute('data-fate'), 'inactive');
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('an empty title: the API refuses it, the page says so and keeps the form open', async () => {
  const id = await seed('keep this title');
  const r = await rest('PATCH', `/v1/sessions/${id}`, { title: '' }, false);
  assert.equal(r.status, 400, `PATCH {"title": ""}: ${JSON.stringify(r.j)}`);
  assert.equal((await rest('GET', `/v1/sessions/${id}`)).j.session.title, 'keep this title');
  const { context: bc, page } = await open();
  await openSession(page, id);
  const sent = [];
  page.on('request', (q) => { if (q.method() !== 'GET') sent.push(`${q.method()} ${q.url()}`); });
  await page.locator('#title-edit').click();
  await page.locator('#title-input').fill('');
  await page.locator('#title-form button[type=submit]').click();
  await page.waitForFunction(() => document.getElementById('title-input').getAttribute('aria-invalid') === 'true', null, { timeout: 30000 });
  assert.match(await fieldError(page, 'title-input'), /cannot be cleared/);
  assert.equal(await page.locator('#title-form').isVisible(), true, 'the form stays open');
  assert.deepEqual(sent, [], 'nothing sent');
  assert.equal((await rest('GET', `/v1/sessions/${id}`)).j.session.title, 'keep this title');
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('a malformed session id in the address: "not a session id", no script error, the old session gone', async () => {
  const id = await seed('malformed');
  const { context: bc, page } = await open();
  await openSession(page, id);
  await page.evaluate(() => { window.location.hash = '#/session/%E0%A4%A'; });
  await page.waitForFunction(() => /not a session id/.test(document.getElementById('error').textContent), null, { timeout: 30000 });
  assert.equal(await page.locator('#view-session').isVisible(), false, 'the old session is not on screen');
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('keyboard: tab reaches navigation, the bar parts with their counts, message actions', async () => {
  const id = await seed('keyboard');
  const { context: bc, page } = await open();
  await openSession(page, id);
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  const seen = [];
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    seen.push(await page.evaluate(() => {
      const a = document.activeElement;
      return `${a.tagName.toLowerCase()}${a.id ? '#' + a.id : ''}.${a.className}|${a.getAttribute('aria-label') || ''}`;
    }));
  }
  assert.ok(seen.some((s) => s.startsWith('a#nav-sessions')), 'the navigation');
  assert.ok(seen.some((s) => /^span\.seg seg-messages\|messages: \d+ tokens$/.test(s)), 'a bar part with its count');
  assert.ok(seen.some((s) => /button\.fork/.test(s)), 'a message action');
  await page.locator('#msg-5 details.long summary').focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('#msg-5 details.long pre').isVisible(), true, 'Enter expands a collapsed content');
  await bc.close();
});

test('phone width and dark mode', async () => {
  const id = await seed('phone');
  const { context: bc, page } = await open({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
  await openSession(page, id);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at phone width (${overflow}px too wide)`);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(21, 24, 28)', 'dark background');
  await page.screenshot({ path: join(SHOTS, 'session-phone-dark.png'), fullPage: true });
  await page.goto(`${url}/#/sessions`);
  await page.waitForSelector('#sessions-body a');
  await page.screenshot({ path: join(SHOTS, 'sessions-phone-dark.png'), fullPage: true });
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

// How far the page is wider than the window (0 or less: no sideways scrolling).
const sideways = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

test('long unbroken words at phone width: no sideways scrolling on the session or the list', async () => {
  const word = (c, n) => c.repeat(n);
  const { j } = await rest('POST', '/v1/sessions', { title: word('x', 300), system_prompt: word('s', 300) });
  const id = j.session.id;
  await rest('POST', `/v1/sessions/${id}/messages`, { messages: [{ role: 'user', content: word('y', 300) },
    { role: 'assistant', content: word('z', 5000) }] });
  const { context: bc, page } = await open({ viewport: { width: 390, height: 844 } });
  await openSession(page, id);
  assert.equal(await page.textContent('#session-title'), word('x', 300));
  let over = await sideways(page);
  assert.ok(over <= 0, `the session: no sideways scrolling at 390 px (${over}px too wide)`);
  await page.locator('#msg-2 details.long summary').click();
  over = await sideways(page);
  assert.ok(over <= 0, `the session, the long content open: no sideways scrolling (${over}px too wide)`);
  await page.screenshot({ path: join(SHOTS, 'session-phone-long-words.png'), fullPage: true });
  await page.goto(`${url}/#/sessions`);
  await page.waitForSelector(`#sessions-body a[href="#/session/${id}"]`, { timeout: 30000 });
  over = await sideways(page);
  assert.ok(over <= 0, `the session list: no sideways scrolling at 390 px (${over}px too wide)`);
  await page.screenshot({ path: join(SHOTS, 'sessions-phone-long-title.png'), fullPage: true });
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

// Long-term memories in their own namespace: one moved (2 versions, valid from 2020 then 2024),
// a memory block, a closed one, stored HTML, and two to change from the page.
const MEMNS = 'memweb';
const Y2020 = Date.UTC(2020, 0, 1), Y2024 = Date.UTC(2024, 0, 1);
async function seedMemories(ns) {
  const { j: sj } = await rest('POST', '/v1/sessions', { title: 'memory source', namespace: ns });
  const sid = sj.session.id;
  const said = (await rest('POST', `/v1/sessions/${sid}/messages`, { messages: [{ role: 'user', content: 'I live in Lisbon.' },
    { role: 'assistant', content: 'Noted.' }, { role: 'user', content: 'I moved to Porto. Where do I live?' }] })).j.messages;
  const mem = async (body) => (await rest('POST', '/v1/memory', { namespace: ns, ...body })).j.memory;
  const home = await mem({ text: 'User lives in Lisbon', session_id: sid, sources: [said[0].id], valid_from: Y2020 });
  await rest('PATCH', `/v1/memory/${home.id}`, { text: 'User lives in Porto', valid_from: Y2024, sources: [said[2].id], reason: 'moved' });
  const rules = await mem({ text: 'Project rules: tests first', kind: 'instruction', pinned: true, token_cap: 30 });
  const gone = await mem({ text: 'User likes jazz', kind: 'preference' });
  await rest('DELETE', `/v1/memory/${gone.id}`);
  const hostile = await mem({ text: HOSTILE });
  const edit = await mem({ text: 'Temporary note to edit' });
  const erase = await mem({ text: 'Secret to forget' });
  return { sid, said, home, rules, gone, hostile, edit, erase };
}
const cardTexts = (page) => page.$$eval('#mem-list article.mem pre.mem-text', (ns) => ns.map((n) => n.textContent).sort());
async function submitMemories(page) {
  await page.evaluate(() => { document.getElementById('mem-summary').textContent = ''; });
  await page.locator('#memories-form button[type=submit]').click();
  await page.waitForFunction(() => document.getElementById('mem-summary').textContent || document.getElementById('error').textContent, null, { timeout: 30000 });
  assert.equal(await page.textContent('#error'), '');
}

test('memories: the list, as of, recall, every version, provenance; stored HTML as text', async () => {
  const s = await seedMemories(MEMNS);
  const { context: bc, page } = await open();
  await page.goto(`${url}/#/memories?ns=${MEMNS}`);
  await page.waitForSelector('#mem-list article.mem', { timeout: 30000 });
  assert.equal(await page.getAttribute('#nav-memories', 'class'), 'active');
  const live = (await rest('GET', `/v1/memory?namespace=${MEMNS}`)).j.memories;
  assert.deepEqual(await cardTexts(page), live.map((m) => m.text).sort(), 'the list is memory_list');
  assert.deepEqual(live.map((m) => m.text).sort(), ['Project rules: tests first', 'Secret to forget', 'Temporary note to edit',
    'User lives in Porto', HOSTILE].sort(), 'the live ones: not the closed one, not the old version');
  const rules = page.locator(`#mem-list article.mem[data-id="${s.rules.id}"]`);
  assert.equal(await rules.locator('.block').textContent(), 'memory block, cap 30 tokens');
  assert.equal(await rules.locator('.kind').textContent(), 'instruction');
  assert.equal(await page.locator(`#mem-list article.mem[data-id="${s.home.id}"]`).getAttribute('data-version'), '2');
  assert.equal(await page.locator(`#mem-list article.mem[data-id="${s.hostile.id}"] pre.mem-text`).textContent(), HOSTILE);
  assert.equal(await page.locator('#mem-list img, #mem-list script, #mem-list b').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await page.screenshot({ path: join(SHOTS, 'memories-desktop.png'), fullPage: true });

  // as of mid-2022 (local time, as typed): Lisbon, as REST says for that moment
  await page.locator('#mem-asof').fill('2022-06-01T12:00');
  await submitMemories(page);
  const asOf = await page.evaluate(() => new Date('2022-06-01T12:00').getTime());
  assert.ok(page.url().includes(`as_of=${asOf}`), 'as_of in the address');
  const then = (await rest('GET', `/v1/memory?namespace=${MEMNS}&as_of=${asOf}`)).j.memories;
  assert.deepEqual(then.map((m) => m.text), ['User lives in Lisbon']);
  assert.deepEqual(await cardTexts(page), ['User lives in Lisbon'], 'the older version');
  assert.equal(await page.locator('#mem-list article.mem').getAttribute('data-version'), '1');
  assert.match(await page.textContent('#mem-summary'), /true as of /);

  // closed ones too: the jazz memory comes back, marked closed
  await page.locator('#mem-asof').fill('');
  await page.locator('#mem-closed').check();
  await submitMemories(page);
  assert.ok((await cardTexts(page)).includes('User likes jazz'));
  assert.equal(await page.locator(`#mem-list article.mem[data-id="${s.gone.id}"] .state`).textContent(), 'closed');

  // recall
  await page.locator('#mem-closed').uncheck();
  await page.locator('#mem-q').fill('Porto');
  await submitMemories(page);
  const hits = (await rest('GET', `/v1/memory/search?q=Porto&namespace=${MEMNS}`)).j.memories;
  assert.deepEqual(await cardTexts(page), hits.map((m) => m.text).sort());
  assert.deepEqual(hits.map((m) => m.text), ['User lives in Porto']);

  // one memory: current version, every version with its change, provenance linked to the messages
  await page.locator(`#mem-list article.mem[data-id="${s.home.id}"] a.mem-open`).click();
  await page.waitForSelector('#memory-versions li', { timeout: 30000 });
  const versions = (await rest('GET', `/v1/memory/${s.home.id}/history`)).j.versions;
  assert.equal(versions.length, 2);
  const shown = await page.$$eval('#memory-versions li', (ns) => ns.map((n) => ({ version: n.dataset.version,
    text: n.querySelector('pre.mem-text').textContent, change: n.querySelector('.change').textContent,
    line: n.textContent })));
  assert.deepEqual(shown.map((v) => [v.version, v.text, v.change]),
    versions.map((v) => [String(v.version), v.text, `${v.change} by ${v.actor}`]));
  assert.ok(shown[0].line.includes('superseded') && shown[1].line.includes(', current'), 'supersession visible');
  assert.ok(shown[1].line.includes('reason: moved'));
  assert.match(shown[0].line, /true from .* to /, 'the old version has an end');
  assert.match(shown[1].line, /still true/);
  const srcOld = await page.getAttribute('#memory-versions li[data-version="1"] a.source', 'href');
  const srcNew = await page.getAttribute('#memory-current a.source', 'href');
  assert.equal(srcOld, `#/session/${s.sid}?at=${s.said[0].seq}`);
  assert.equal(srcNew, `#/session/${s.sid}?at=${s.said[2].seq}`);
  await page.screenshot({ path: join(SHOTS, 'memory-history-desktop.png'), fullPage: true });
  await page.locator('#memory-current a.source').click();
  await page.waitForFunction((seq) => document.activeElement && document.activeElement.id === `msg-${seq}`, s.said[2].seq, { timeout: 30000 });
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('memories: update, delete (close), forget (erase) and add from the page change the database', async () => {
  const s = await seedMemories('memacts');
  const { context: bc, page } = await open();
  // update with a reason: a new version
  await page.goto(`${url}/#/memory/${s.edit.id}`);
  await page.waitForSelector('#memory-versions li', { timeout: 30000 });
  await page.locator('#memory-text').fill('Edited from the page');
  await page.locator('#memory-reason').fill('typo');
  await page.locator('#memory-save').click();
  await page.waitForFunction(() => document.querySelectorAll('#memory-versions li').length === 2, null, { timeout: 30000 });
  let m = (await rest('GET', `/v1/memory/${s.edit.id}`)).j.memory;
  assert.deepEqual([m.version, m.text, m.change, m.reason, m.actor], [2, 'Edited from the page', 'update', 'typo', 'api']);
  assert.equal(await page.locator('#memory-current pre.mem-text').textContent(), 'Edited from the page');
  // delete = close: confirmed, a third version that ends the validity; still in the history
  await page.locator('#memory-delete').click();
  await page.waitForFunction(() => document.querySelectorAll('#memory-versions li').length === 3, null, { timeout: 30000 });
  assert.match(page.dialogs.at(-1), /stops being true now/);
  m = (await rest('GET', `/v1/memory/${s.edit.id}`)).j.memory;
  assert.equal(m.change, 'delete');
  assert.ok(m.valid_to, 'closed');
  assert.equal((await rest('GET', `/v1/memory/${s.edit.id}/history`)).j.versions.length, 3);
  assert.ok(!(await rest('GET', '/v1/memory?namespace=memacts')).j.memories.some((x) => x.id === s.edit.id), 'no longer true now');
  assert.equal(await page.locator('#memory-delete').isDisabled(), true);
  // forget = erase: confirmed with a stronger wording; gone with its history
  await page.goto(`${url}/#/memory/${s.erase.id}`);
  await page.waitForSelector('#memory-versions li', { timeout: 30000 });
  await page.locator('#memory-forget').click();
  await page.waitForFunction(() => location.hash.startsWith('#/memories'), null, { timeout: 30000 });
  assert.match(page.dialogs.at(-1), /FOR REAL.*cannot be undone/);
  assert.equal((await rest('GET', `/v1/memory/${s.erase.id}`, undefined, false)).status, 404);
  assert.equal((await rest('GET', `/v1/memory/${s.erase.id}/history`, undefined, false)).status, 404);
  await page.waitForFunction(() => /^Forgot /.test(document.getElementById('mem-summary').textContent), null, { timeout: 30000 });
  assert.ok(!(await cardTexts(page)).includes('Secret to forget'));
  // add, in the scope of the filter
  await page.locator('#mem-add-text').fill('Added from the page');
  await page.locator('#mem-add-kind').fill('preference');
  await page.locator('#mem-add-form button[type=submit]').click();
  await page.waitForFunction(() => [...document.querySelectorAll('#mem-list pre.mem-text')].some((n) => n.textContent === 'Added from the page'), null, { timeout: 30000 });
  const added = (await rest('GET', '/v1/memory?namespace=memacts')).j.memories.find((x) => x.text === 'Added from the page');
  assert.ok(added, 'remembered in the filter\'s namespace');
  assert.deepEqual([added.kind, added.actor, added.change, added.version], ['preference', 'api', 'add', 1]);
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('the context picture with memories: its own part, the exact count of the report', async () => {
  const s = await seedMemories('memctx');
  const rep = (await context(s.sid, { memories: true })).report;
  assert.ok(rep.memories && rep.memories.enabled && rep.memories.tokens > 0, 'the seed puts memories in the context');
  const { context: bc, page } = await open();
  await page.goto(`${url}/#/session/${s.sid}`);
  await page.locator('#context-budget').fill(String(BUDGET));
  await page.locator('#context-memories').selectOption('true');
  await page.locator('#context-go').click();
  await page.waitForSelector('.ctxbar .seg-memories', { timeout: 30000 });
  const segs = await page.$$eval('.ctxbar .seg', (ns) => Object.fromEntries(ns.map((n) => [n.dataset.part, +n.dataset.tokens])));
  assert.equal(segs.memories, rep.memories.tokens);
  assert.equal(segs.messages + segs.summary + segs.memories, rep.parts.messages);
  assert.equal(segs.framing, rep.parts.framing);
  assert.equal(Object.values(segs).reduce((a, b) => a + b, 0), Math.max(rep.max_tokens, rep.tokens));
  assert.equal(await page.getAttribute('.ctxbar .seg-memories', 'aria-label'),
    `memories (${rep.memories.included.length}): ${rep.memories.tokens} tokens`);
  const linked = await page.$$eval('.ctx-memories a.ctx-memory', (ns) => ns.map((n) => n.getAttribute('href')));
  assert.deepEqual(linked, rep.memories.included.map((x) => `#/memory/${x.id}`));
  // the default (no memories parameter): no memory part
  await page.locator('#context-memories').selectOption('');
  await page.locator('#context-go').click();
  await page.waitForFunction(() => !document.querySelector('.ctxbar .seg-memories'), null, { timeout: 30000 });
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('the context picture with RAG: the retrieved messages are their own part, as the report counts them', async () => {
  // past the turn limit, the first turn leaves the window but stays searchable: RAG brings it back
  const { j: sj } = await rest('POST', '/v1/sessions', { title: 'rag source', namespace: 'ragctx', max_turns: 2 });
  const sid = sj.session.id;
  const messages = [{ role: 'user', content: 'The launch code of the pelican project is PELICAN-7.' },
    { role: 'assistant', content: 'Noted.' }, { role: 'user', content: 'Nice weather today.' }, { role: 'assistant', content: 'Yes.' },
    { role: 'user', content: 'What is the launch code of the pelican project?' }];
  await rest('POST', `/v1/sessions/${sid}/messages`, { messages });
  const rep = (await context(sid, { rag: true })).report;
  assert.ok(rep.rag.tokens_added > 0 && rep.rag.injected.length > 0, `the seed retrieves: ${JSON.stringify(rep.rag)}`);
  const { context: bc, page } = await open();
  await page.goto(`${url}/#/session/${sid}`);
  await page.locator('#context-budget').fill(String(BUDGET));
  await page.locator('#context-rag').selectOption('true');
  await page.locator('#context-go').click();
  await page.waitForSelector('.ctxbar .seg-rag', { timeout: 30000 });
  const segs = await page.$$eval('.ctxbar .seg', (ns) => Object.fromEntries(ns.map((n) => [n.dataset.part, +n.dataset.tokens])));
  assert.equal(segs.rag, rep.rag.tokens_added);
  assert.equal(segs.messages + segs.rag + segs.summary, rep.parts.messages);
  assert.equal(Object.values(segs).reduce((a, b) => a + b, 0), Math.max(rep.max_tokens, rep.tokens));
  assert.equal(await page.getAttribute('.ctxbar .seg-rag', 'aria-label'),
    `retrieved (RAG, ${rep.rag.injected.length} messages): ${rep.rag.tokens_added} tokens`);
  await page.locator('#context-rag').selectOption('false');
  await page.locator('#context-go').click();
  await page.waitForFunction(() => !document.querySelector('.ctxbar .seg-rag'), null, { timeout: 30000 });
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('memories at phone width in dark mode', async () => {
  await seedMemories('memphone');
  const { context: bc, page } = await open({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
  await page.goto(`${url}/#/memories?ns=memphone`);
  await page.waitForSelector('#mem-list article.mem', { timeout: 30000 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at phone width (${overflow}px too wide)`);
  await page.screenshot({ path: join(SHOTS, 'memories-phone-dark.png'), fullPage: true });
  assert.deepEqual(await page.problems(), []);
  await bc.close();
});

test('accessibility: axe-core finds no serious or critical violations', async () => {
  const id = await seed('axe');
  const mems = await seedMemories('memaxe');
  const axe = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  // only this context bypasses the CSP, to inject axe; the others run under the real policy
  for (const colorScheme of ['light', 'dark']) {
    const bc = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, colorScheme });
    const page = await bc.newPage();
    for (const [hash, ready] of [[`#/session/${id}`, '#view-session .ctxbar'], ['#/sessions', '#view-sessions #sessions-body a'],
      ['#/search?q=teal&mode=keyword', '#view-search #search-body tr'], ['#/memories?ns=memaxe', '#view-memories #mem-list article'],
      [`#/memory/${mems.home.id}`, '#view-memory #memory-versions li']]) {
      await page.goto(`${url}/${hash}`);
      await page.waitForSelector(ready, { state: 'visible', timeout: 30000 });
      await page.addScriptTag({ content: axe });
      const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
      const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
      assert.deepEqual(bad, [], `${colorScheme} ${hash}`);
    }
    await bc.close();
  }
});
