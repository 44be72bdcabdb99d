#!/usr/bin/env node
// fake_memory_llm.js — a local OpenAI-style chat server (POST /v1/chat/completions) for the tests
// of the `llm` memory extractor. It listens on 127.0.0.1 on an ephemeral port and prints
// "PORT <n>" first. The two prompts of the extractor are told apart by their first line:
//   MNEMO_MEMORY_CANDIDATES  → {"facts":[{"text": <each user line's text>, "kind":"fact", "sources":[id]}]}
//   MNEMO_MEMORY_DECIDE      → a decision picked by the model name:
//     add          {"action":"add","text":candidate}
//     update       update the most similar memory to the candidate (add when there is none)
//     invalidate   invalidate the most similar memory (nothing when there is none)
//     nothing      {"action":"nothing"}
//     garbage      text that is not JSON
//     badid        an update of a memory that was not offered
// A model named badfacts answers the candidates prompt with {"facts":"nope"}.
// GET /stats returns {"requests": n}.
'use strict';
const http = require('http');
let requests = 0;

function answer(model, prompt) {
  if (prompt.startsWith('MNEMO_MEMORY_CANDIDATES')) {
    if (model === 'badfacts') return JSON.stringify({ facts: 'nope' });
    const facts = [];
    for (const line of prompt.split('\n')) {
      const m = /^\[(\d+)\] user: (.*)$/.exec(line);
      if (m) facts.push({ text: m[2], kind: 'fact', sources: [Number(m[1])] });
    }
    return JSON.stringify({ facts });
  }
  const req = JSON.parse(prompt.slice(prompt.indexOf('\n') + 1));
  const top = req.existing[0];
  switch (model) {
    case 'add': return JSON.stringify({ action: 'add', text: req.candidate.text });
    case 'update': return JSON.stringify(top ? { action: 'update', id: top.id, text: req.candidate.text, reason: 'changed' } : { action: 'add', text: req.candidate.text });
    case 'invalidate': return JSON.stringify(top ? { action: 'invalidate', id: top.id, reason: 'no longer true' } : { action: 'nothing' });
    case 'nothing': return JSON.stringify({ action: 'nothing' });
    case 'garbage': return 'Sure! Here is what I think: {action: add';
    case 'badid': return JSON.stringify({ action: 'update', id: '01900000-0000-7000-8000-000000000000', text: 'x' });
    default: return JSON.stringify({ action: 'nothing' });
  }
}

const server = http.createServer((req, res) => {
  const send = (status, obj) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(obj));
  };
  if (req.method === 'GET' && req.url === '/stats') return send(200, { requests });
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (req.url !== '/v1/chat/completions') return send(404, { error: { message: 'no such route' } });
    requests++;
    const j = JSON.parse(body);
    const user = (j.messages || []).filter((m) => m.role === 'user').map((m) => m.content).join('\n');
    const text = answer(j.model || '', user);
    send(200, { id: 'x', object: 'chat.completion', model: j.model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  });
});
server.listen(0, '127.0.0.1', () => console.log('PORT ' + server.address().port));
