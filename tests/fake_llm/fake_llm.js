#!/usr/bin/env node
// fake_llm.js — a small local chat server for the tests of the `llm` summariser. It speaks the
// OpenAI Chat Completions protocol (POST /v1/chat/completions) and Ollama's (POST /api/chat,
// "stream": false). No npm dependencies. It listens on 127.0.0.1 on an ephemeral port and prints
// "PORT <n>" on its first line; the test that starts it stops it.
//
// The model name picks the behaviour:
//   ok          a summary made from the request (deterministic), usage tokens reported
//   length      finish_reason / done_reason "length"
//   err500      HTTP 500 every time
//   flaky429    HTTP 429 (Retry-After: 0) on the first two requests of that model, then ok
//   bad400      HTTP 400 with an error object
//   errobj      HTTP 200 with an error object
//   garbage     HTTP 200 with a body that is not JSON
//   slow        never answers (the client's timeout always fires first, however slow the machine)
//   delay       answers after 3 seconds (a summariser that takes its time, then succeeds)
//   hang        answers after 30 seconds (FAKE_LLM_HANG_MS overrides), like a stuck provider
//   long        a summary of 4000 words (for the cap)
// Chat models (mnemo chat; the reply streams when the request says "stream": true — SSE for
// OpenAI with a last usage chunk, NDJSON for Ollama):
//   chat        "Echo: <the last user message>", in word pieces; usage with cached tokens
//   chatplain   the same reply as one JSON completion, even when asked to stream
//   chatslow    "Thinking" then a dot every 200 ms for a minute (for interrupting)
//   chatflaky   HTTP 500 on the first request of that model, then like chat
//   chatbadjson "Part ", then a data line that is not JSON, then [DONE] (a broken stream)
//   chatnul     a chunk whose content holds \u0000, then usage and [DONE]
//   chatnotobj  "Part ", then a data line that is JSON but not an object, then [DONE]
//   chatgarbage HTTP 200 with a body of several lines that is neither JSON nor a stream
//   chatdrip    "Drip", then 4 s of silence, then " drop" and the end (a silence longer than a
//               client's limit of 1 s, within a transfer that averages more than a byte a second)
//   chatbadline (Ollama) "Part ", then a line that is not JSON, then "after the bad line" and done
//   chatbadfirst (Ollama) a line that is not JSON, then "after the bad line" and done
//   any other chat… name: like chat (a name of its own keeps its own count in /stats)
//   think       the summary after a <think>…</think> reasoning block
//   thinkopen   the summary followed by an unterminated <THINK> block (upper case)
//   thinkonly   nothing but a <Think>…</Think> block
//   echo        the user message itself (to see the prompt that was sent)
// GET /stats returns {"requests": {model: count}, "routes": {path: count}, "authorization": the
// last request's Authorization header or null}; every request body is kept in /last.
'use strict';
const http = require('http');

const counts = {};
const routes = {};
let last = null;
let authorization = null;

function summaryOf(messages) {
  const user = (messages.find((m) => m.role === 'user') || {}).content || '';
  const lines = user.split('\n').filter((l) => /^(User|Tool|Assistant)/.test(l));
  const hasExisting = !/=== EXISTING_SUMMARY ===\nNONE\n/.test(user);
  return `Summary (${lines.length} lines${hasExisting ? ', updated' : ''}): ` + lines.slice(0, 3).map((l) => l.slice(0, 60)).join(' | ');
}

function reply(res, status, obj, headers) {
  const body = typeof obj === 'string' ? obj : JSON.stringify(obj);
  res.writeHead(status, Object.assign({ 'Content-Type': 'application/json' }, headers || {}));
  res.end(body);
}

function chat(req, res, j, model, ollama) {
  const msgs = j.messages || [];
  const lastUser = [...msgs].reverse().find((m) => m.role === 'user');
  const text = 'Echo: ' + ((lastUser && lastUser.content) || '').split('\n').pop();
  const usage = { prompt_tokens: 40 + msgs.length, completion_tokens: 5, total_tokens: 45 + msgs.length, prompt_tokens_details: { cached_tokens: 32 } };
  if (model === 'chatflaky' && counts[model] === 1) return reply(res, 500, { error: { message: 'the model is warming up' } });
  if (model === 'chatgarbage') return reply(res, 200, '<html>\n<body>oops</body>\n</html>\n', { 'Content-Type': 'text/html' });
  if (!j.stream || model === 'chatplain') {
    if (ollama) return reply(res, 200, { model, message: { role: 'assistant', content: text }, done: true, prompt_eval_count: usage.prompt_tokens, eval_count: 5 });
    return reply(res, 200, { id: 'c', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage });
  }
  res.writeHead(200, { 'Content-Type': ollama ? 'application/x-ndjson' : 'text/event-stream' });
  const piece = (t) => ollama ? JSON.stringify({ model, message: { role: 'assistant', content: t }, done: false }) + '\n'
    : 'data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: t }, finish_reason: null }] }) + '\n\n';
  const end = () => {
    if (ollama) res.end(JSON.stringify({ model, message: { role: 'assistant', content: '' }, done: true, prompt_eval_count: usage.prompt_tokens, eval_count: 5 }) + '\n');
    else res.end('data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [], usage }) + '\n\ndata: [DONE]\n\n');
  };
  if (model === 'chatbadjson' || model === 'chatnotobj') {
    res.write(piece('Part '));
    res.end((model === 'chatbadjson' ? 'data: {not json\n\n' : 'data: [1, 2]\n\n') + 'data: [DONE]\n\n');
    return;
  }
  if (model === 'chatbadline' || model === 'chatbadfirst') {
    if (model === 'chatbadline') res.write(piece('Part '));
    res.write('not json at all\n');
    res.write(piece('after the bad line'));
    return end();
  }
  if (model === 'chatdrip') {
    res.write(piece('Drip'));
    const t = setTimeout(() => { res.write(piece(' drop')); end(); }, 4000);
    res.on('close', () => clearTimeout(t));
    return;
  }
  if (model === 'chatnul') {
    res.write(piece('before\u0000after'));
    return end();
  }
  if (model === 'chatslow') {
    res.write(piece('Thinking'));
    let n = 0;
    const t = setInterval(() => { if (++n > 300) { clearInterval(t); end(); } else res.write(piece('.')); }, 200);
    res.on('close', () => clearInterval(t));
    return;
  }
  const words = text.split(/(?= )/);
  let i = 0;
  const next = () => { if (i < words.length) { res.write(piece(words[i++])); setTimeout(next, 5); } else end(); };
  next();
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') return reply(res, 200, { requests: counts, routes, authorization });
  if (req.method === 'GET' && req.url === '/last') return reply(res, 200, last || {});
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const ollama = req.url === '/api/chat';
    routes[req.url] = (routes[req.url] || 0) + 1;
    authorization = req.headers.authorization || null;
    if (!ollama && req.url !== '/v1/chat/completions') return reply(res, 404, { error: { message: 'no such route ' + req.url } });
    let j;
    try {
      j = JSON.parse(body);
    } catch (e) {
      return reply(res, 400, { error: { message: 'bad json' } });
    }
    last = j;
    const model = j.model || '';
    counts[model] = (counts[model] || 0) + 1;
    if (/^chat/.test(model)) return chat(req, res, j, model, ollama);
    let text = summaryOf(j.messages || []);
    let finish = 'stop';
    const send = () => {
      if (ollama)
        return reply(res, 200, { model, message: { role: 'assistant', content: text }, done: true, done_reason: finish, prompt_eval_count: 111, eval_count: 22 });
      reply(res, 200, { id: 'x', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }], usage: { prompt_tokens: 111, completion_tokens: 22, total_tokens: 133 } });
    };
    switch (model) {
      case 'length': finish = 'length'; return send();
      case 'err500': return reply(res, 500, { error: { message: 'internal' } });
      case 'flaky429': if (counts[model] <= 2) return reply(res, 429, { error: { message: 'rate limited' } }, { 'Retry-After': '0' }); return send();
      case 'bad400': return reply(res, 400, { error: { message: 'model not found' } });
      case 'errobj': return reply(res, 200, { error: 'overloaded' });
      case 'garbage': return reply(res, 200, '<html>oops</html>');
      case 'slow': return; // the request stays open until the client gives up
      case 'delay': return setTimeout(send, 3000);
      case 'hang': return setTimeout(send, Number(process.env.FAKE_LLM_HANG_MS || 30000));
      case 'think': text = '<think>\nThe user wants a summary. I will list files.\n</think>\n\n' + text; return send();
      case 'thinkopen': text = text + '\n<THINK>I was still reasoning when'; return send();
      case 'thinkonly': text = '<Think>only reasoning here</Think>'; return send();
      case 'echo': text = ((j.messages || []).find((m) => m.role === 'user') || {}).content || ''; return send();
      case 'long': text = Array.from({ length: 4000 }, (_, i) => 'word' + i).join(' '); return send();
      default: return send();
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write('PORT ' + server.address().port + '\n');
});
process.on('SIGTERM', () => process.exit(0));
