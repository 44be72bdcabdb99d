// web.test.mjs — the web page of `mnemo serve` (GET /) in jsdom, no browser: jsdom loads the page
// from the running server and runs its script against it (fetch is Node's, same origin). Checks
// what a user sees: the session list shows a session made through REST, opening it renders its
// messages (roles, tool calls, tokens) with hostile content as text, the context preview shows
// its report, search links to the session, stats load, and with API keys the page asks for one,
// keeps it in sessionStorage and then works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { JSDOM, VirtualConsole } from 'jsdom';
import { MNEMO, dbTarget, startServer as start, stopServer, testEnv } from './server.mjs';

const { tmp, env } = testEnv('interop-web-');
const startServer = (db, extra = [], extraEnv = {}) => start({ ...env, ...extraEnv }, db, extra);

async function rest(url, method, path, body, headers = {}) {
  const r = await fetch(url + path, {
    method, headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const j = await r.json();
  assert.ok(r.ok, `${method} ${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

// Loads the page the way a browser would (from the server), with its script running and
// Node's fetch as the window's. Errors the page's script throws fail the test. close() ends the
// page: a fetch still in flight then never settles, as in a closed browser tab (otherwise its
// answer would run the page's script in a window that has no document any more).
async function openPage(url) {
  const errors = [];
  const virtualConsole = new VirtualConsole();
  virtualConsole.on('jsdomError', (e) => errors.push(e));
  let closed = false;
  const never = () => new Promise(() => {});
  const dom = await JSDOM.fromURL(url + '/', {
    runScripts: 'dangerously',
    resources: 'usable',
    pretendToBeVisual: true,
    virtualConsole,
    beforeParse(window) {
      window.fetch = (input, init) =>
        closed ? never() : fetch(String(input), init).then((r) => (closed ? never() : r), (e) => (closed ? never() : Promise.reject(e)));
    },
  });
  const close = () => {
    closed = true;
    dom.window.close();
  };
  return { dom, window: dom.window, doc: dom.window.document, errors, close };
}

// Waits until probe() returns something truthy (the page fetches asynchronously); the deadline
// only bounds a hung test, it asserts nothing about speed (MNEMO_TEST_DEADLINE_SCALE, a whole
// number, multiplies it: see tests/cli/lib.sh).
const DEADLINE_SCALE = Number(process.env.MNEMO_TEST_DEADLINE_SCALE || 1);
async function until(probe, what, ms = 120000) {
  const end = Date.now() + ms * DEADLINE_SCALE;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`page never showed ${what} (gave up after ${(ms * DEADLINE_SCALE) / 1000} s)`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const text = (node) => (node ? node.textContent : '');
const HOSTILE = '<img src=x onerror="globalThis.pwned=1"> & <b>not bold</b>';

test('the web page lists sessions, renders history, previews the context, searches', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'web.db')));
  try {
    const { session } = await rest(url, 'POST', '/v1/sessions', { title: 'Trip planning', namespace: 'web' });
    const sid = session.id;
    await rest(url, 'POST', `/v1/sessions/${sid}/messages`, {
      messages: [
        { role: 'user', content: 'What is the weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":4}' },
        { role: 'assistant', content: HOSTILE },
      ],
    });
    const other = (await rest(url, 'POST', '/v1/sessions', { title: 'Elsewhere', namespace: 'other' })).session.id;
    const history = (await rest(url, 'GET', `/v1/sessions/${sid}/messages`)).messages;

    const { window, doc, errors, close } = await openPage(url);

    // the session list, newest first, with the REST-made session as a link
    const row = await until(() => doc.querySelector(`#sessions-body a[href="#/session/${sid}"]`), 'the session link');
    assert.equal(row.textContent, 'Trip planning');
    assert.ok(doc.querySelector(`#sessions-body a[href="#/session/${other}"]`), 'the other session is listed too');
    const cells = [...row.closest('tr').querySelectorAll('td')].map((td) => td.textContent);
    assert.deepEqual([cells[1], cells[2], cells[5]], ['web', '4', sid]);
    assert.match(text(doc.getElementById('health')), /healthy/);

    // the namespace filter
    doc.getElementById('sessions-ns').value = 'other';
    doc.getElementById('sessions-form').dispatchEvent(new window.Event('submit', { cancelable: true }));
    await until(() => !doc.querySelector(`#sessions-body a[href="#/session/${sid}"]`) &&
      doc.querySelector(`#sessions-body a[href="#/session/${other}"]`), 'the filtered list');
    assert.equal(doc.querySelectorAll('#sessions-body tr').length, 1);
    doc.getElementById('sessions-ns').value = '';
    doc.getElementById('sessions-form').dispatchEvent(new window.Event('submit', { cancelable: true }));
    const link = await until(() => doc.querySelector(`#sessions-body a[href="#/session/${sid}"]`), 'the full list again');

    // open it: every message, in order, with role, tokens, the tool call and the tool result
    link.click();
    const msgs = await until(() => {
      const m = doc.querySelectorAll('#history .msg');
      return m.length === 4 ? [...m] : null;
    }, 'the four messages');
    await until(() => text(doc.getElementById('session-title')) === 'Trip planning' || null, 'the session title');
    assert.deepEqual(msgs.map((m) => m.querySelector('.role').textContent), ['user', 'assistant', 'tool', 'assistant']);
    assert.deepEqual(msgs.map((m) => m.dataset.seq), ['1', '2', '3', '4']);
    assert.deepEqual(msgs.map((m) => m.querySelector('.tokens').textContent), history.map((h) => `${h.tokens} tokens`));
    assert.equal(text(msgs[0].querySelector('.content')), 'What is the weather in Oslo?');
    assert.match(text(msgs[1].querySelector('.call-name')), /get_weather \(call_1\)/);
    assert.match(text(msgs[1].querySelector('.call pre')), /"city": "Oslo"/);
    assert.match(text(msgs[2]), /result of call call_1/);
    // hostile content is shown as text, never parsed as markup
    assert.equal(text(msgs[3].querySelector('.content')), HOSTILE);
    assert.equal(doc.querySelectorAll('#history img, #history b').length, 0);
    assert.equal(window.pwned, undefined);

    // context preview with a tight budget: the report says what was kept and dropped
    doc.getElementById('context-budget').value = '30';
    doc.getElementById('context-form').dispatchEvent(new window.Event('submit', { cancelable: true }));
    const out = await until(() => (/budget of 30 /.test(text(doc.getElementById('context-out'))) ? doc.getElementById('context-out') : null), 'the context report');
    // the page asks for each message's fate and never starts a fold by looking
    const ctx = await rest(url, 'POST', `/v1/sessions/${sid}/context`, { max_tokens: 30, format: 'openai', detail: true, fold: 'off' });
    assert.equal(text(out.querySelector('.ctx-tokens')), `${ctx.tokens} tokens`);
    assert.match(text(out), /of a budget of 30 \(strategy window/);
    assert.deepEqual(JSON.parse(text(out.querySelector('.ctx-raw'))), ctx.report);
    assert.match(text(out.querySelector('.ctx-report')), new RegExp(`messages kept${ctx.report.messages.kept} of 4`));

    // search: results link to their session
    window.location.hash = '#/search?q=weather%20Oslo&mode=keyword';
    const hit = await until(() => doc.querySelector(`#search-body a[href="#/session/${sid}"]`), 'a search hit');
    assert.match(text(hit.closest('tr').querySelector('.hit-content')), /weather in Oslo/);
    assert.match(text(doc.getElementById('search-summary')), /\(keyword\)/);
    hit.click();
    await until(() => !doc.getElementById('view-session').hidden && doc.getElementById('view-search').hidden &&
      doc.querySelectorAll('#history .msg').length === 4, 'the session from the hit');

    // stats
    window.location.hash = '#/stats';
    const dlText = await until(() => (/sessions/.test(text(doc.getElementById('stats-db'))) ? text(doc.getElementById('stats-db')) : null), 'the stats');
    assert.match(dlText, /sessions2/);
    assert.deepEqual(errors, []);
    close();
  } finally {
    assert.equal(await stopServer(proc), 0);
  }
});

test('with API keys the page asks for one and keeps it in sessionStorage', async () => {
  const db = dbTarget(join(tmp, 'keys.db'));
  const { url, proc } = await startServer(db, ['--api-key-env', 'WEB_KEY'], { WEB_KEY: 'k-123' });
  try {
    const auth = { Authorization: 'Bearer k-123' };
    const { session } = await rest(url, 'POST', '/v1/sessions', { title: 'Keyed' }, auth);
    const { window, doc, errors, close } = await openPage(url);
    await until(() => !doc.getElementById('key-form').hidden && /needs an API key/.test(text(doc.getElementById('error'))), 'the key prompt');
    assert.equal(doc.querySelectorAll('#sessions-body a').length, 0);
    doc.getElementById('key-input').value = 'k-123';
    doc.getElementById('key-form').dispatchEvent(new window.Event('submit', { cancelable: true }));
    await until(() => doc.querySelector(`#sessions-body a[href="#/session/${session.id}"]`), 'the list after the key');
    assert.equal(window.sessionStorage.getItem('mnemo.apiKey'), 'k-123');
    assert.equal(doc.getElementById('error').hidden, true);
    assert.deepEqual(errors, []);
    close();
  } finally {
    assert.equal(await stopServer(proc), 0);
  }
});
