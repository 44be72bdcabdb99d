#!/usr/bin/env node
// fake_embed.js — a small local embeddings server for the tests of the `openai` and `ollama`
// embedders: POST /v1/embeddings ({"model","input":[…]} → {"data":[{"index","embedding"}]}) and
// POST /api/embed ({"model","input":[…]} → {"embeddings":[[…]]}). No npm dependencies. Listens
// on 127.0.0.1 on an ephemeral port and prints "PORT <n>" first; the test that starts it stops it.
//
// The model name picks the behaviour:
//   ok        deterministic 8-dimensional vectors from the text's characters (same text, same vector)
//   flaky429  HTTP 429 (Retry-After: 0) on the first two requests of that model, then ok
//   err500    HTTP 500 every time
//   bad400    HTTP 400 with an error object
//   short     one vector fewer than asked
// GET /stats returns {"requests": {model: count}, "inputs": total texts embedded}.
// FAKE_EMBED_DELAY_MS in the environment delays every reply (a remote embedder's round trip, for
// bench/README.md's hybrid measurement).
'use strict';
const http = require('http');

const counts = {};
let inputs = 0;

function vec(text) {
  const v = new Array(8).fill(0);
  for (let i = 0; i < text.length; i++) v[text.charCodeAt(i) % 8] += 1 + (i % 3);
  if (v.every((x) => x === 0)) v[0] = 1;
  return v;
}

const delayMs = Number(process.env.FAKE_EMBED_DELAY_MS || 0);

function reply(res, status, obj, headers) {
  if (delayMs > 0) return setTimeout(() => send(res, status, obj, headers), delayMs);
  send(res, status, obj, headers);
}

function send(res, status, obj, headers) {
  res.writeHead(status, Object.assign({ 'Content-Type': 'application/json' }, headers || {}));
  res.end(typeof obj === 'string' ? obj : JSON.stringify(obj));
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') return reply(res, 200, { requests: counts, inputs });
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const ollama = req.url === '/api/embed';
    if (!ollama && req.url !== '/v1/embeddings') return reply(res, 404, { error: { message: 'no such route ' + req.url } });
    let j;
    try {
      j = JSON.parse(body);
    } catch (e) {
      return reply(res, 400, { error: { message: 'bad json' } });
    }
    const model = j.model || '';
    counts[model] = (counts[model] || 0) + 1;
    const input = Array.isArray(j.input) ? j.input : [j.input];
    if (model === 'err500') return reply(res, 500, { error: { message: 'boom' } });
    if (model === 'bad400') return reply(res, 400, { error: { message: 'model not found' } });
    if (model === 'flaky429' && counts[model] <= 2) return reply(res, 429, { error: { message: 'slow down' } }, { 'Retry-After': '0' });
    inputs += input.length;
    let vs = input.map(vec);
    if (model === 'short') vs = vs.slice(1);
    if (ollama) return reply(res, 200, { model, embeddings: vs });
    reply(res, 200, { object: 'list', model, data: vs.map((e, i) => ({ object: 'embedding', index: i, embedding: e })).reverse() });
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write('PORT ' + server.address().port + '\n');
});
process.on('SIGTERM', () => process.exit(0));
