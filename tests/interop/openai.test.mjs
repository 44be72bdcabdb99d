// openai.test.mjs — the official `openai` npm SDK (client.conversations.*, local baseURL) against
// `mnemo serve`: create with items and metadata, items create/list (order, limit, after, paging
// with the SDK's auto-pagination), get, delete, update metadata, errors as the SDK's typed
// exceptions, `include` on items create, list and retrieve (the SDK sends it as include[]=…,
// repeated), and the mnemo view of the same data (a conversation is a session).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import OpenAI from 'openai';
import { MNEMO, dbTarget, startServer as start, stopServer, testEnv } from './server.mjs';

const { tmp, env } = testEnv('interop-openai-');
delete env.OPENAI_API_KEY;
delete env.OPENAI_BASE_URL;
const startServer = (db, extra = [], extraEnv = {}) => start({ ...env, ...extraEnv }, db, extra);

const { url, proc } = await startServer(dbTarget(join(tmp, 'openai.db')));
after(async () => { assert.equal(await stopServer(proc), 0); });
const client = new OpenAI({ apiKey: 'unused-locally', baseURL: `${url}/v1`, maxRetries: 0 });

test('conversations: create, items, list, get, delete, update', async () => {
  const conv = await client.conversations.create({
    metadata: { topic: 'demo' },
    items: [
      { type: 'message', role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'What is 6 x 7?' }, // no type: a message
    ],
  });
  assert.match(conv.id, /^conv_/);
  assert.equal(conv.object, 'conversation');
  assert.deepEqual(conv.metadata, { topic: 'demo' });
  assert.equal(typeof conv.created_at, 'number');

  const got = await client.conversations.retrieve(conv.id);
  assert.equal(got.id, conv.id);

  const added = await client.conversations.items.create(conv.id, {
    items: [
      { type: 'function_call', call_id: 'call_1', name: 'multiply', arguments: '{"a":6,"b":7}' },
      { type: 'function_call_output', call_id: 'call_1', output: '42' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '42.' }] },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'multiplied' }] },
    ],
  });
  assert.equal(added.data.length, 4);
  assert.equal(added.data[0].type, 'function_call');
  assert.equal(added.data[0].arguments, '{"a":6,"b":7}');
  assert.equal(added.data[1].output, '42');
  assert.deepEqual(added.data[3].summary, [{ type: 'summary_text', text: 'multiplied' }]); // kept as it came
  assert.equal(added.first_id, added.data[0].id);

  // asc: everything in order, string content normalised to input_text
  const asc = await client.conversations.items.list(conv.id, { order: 'asc', limit: 100 });
  assert.deepEqual(asc.data.map((i) => i.type), ['message', 'message', 'function_call', 'function_call_output', 'message', 'reasoning']);
  assert.deepEqual(asc.data[1].content, [{ type: 'input_text', text: 'What is 6 x 7?' }]);
  assert.equal(asc.data[1].role, 'user');
  assert.equal(asc.has_more, false);

  // desc is the default; paging with limit and after, then the SDK's auto-pagination
  const page = await client.conversations.items.list(conv.id, { limit: 2 });
  assert.deepEqual(page.data.map((i) => i.id), [asc.data[5].id, asc.data[4].id]);
  assert.equal(page.has_more, true);
  const next = await client.conversations.items.list(conv.id, { limit: 2, after: page.last_id });
  assert.deepEqual(next.data.map((i) => i.id), [asc.data[3].id, asc.data[2].id]);
  const all = [];
  for await (const item of client.conversations.items.list(conv.id, { limit: 2, order: 'asc' })) all.push(item.id);
  assert.deepEqual(all, asc.data.map((i) => i.id));

  const one = await client.conversations.items.retrieve(asc.data[4].id, { conversation_id: conv.id });
  assert.deepEqual(one.content, [{ type: 'output_text', text: '42.' }]); // parts kept as they came

  const afterDelete = await client.conversations.items.delete(asc.data[5].id, { conversation_id: conv.id });
  assert.equal(afterDelete.id, conv.id);
  const left = await client.conversations.items.list(conv.id, { order: 'asc' });
  assert.equal(left.data.length, 5);

  const upd = await client.conversations.update(conv.id, { metadata: { topic: 'math' } });
  assert.deepEqual(upd.metadata, { topic: 'math' });

  // the same data through mnemo's own API: the context for the next call
  const sid = conv.id.slice('conv_'.length);
  const ctx = await (await fetch(`${url}/v1/sessions/${sid}/context`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).json();
  assert.equal(ctx.messages[0].role, 'system');
  assert.equal(ctx.messages[2].tool_calls[0].id, 'call_1');
  assert.equal(ctx.messages[3].role, 'tool');

  const del = await client.conversations.delete(conv.id);
  assert.deepEqual(del, { id: conv.id, object: 'conversation.deleted', deleted: true });
  await assert.rejects(client.conversations.retrieve(conv.id), (e) => e instanceof OpenAI.NotFoundError);
});

test('conversations: client mistakes are 4xx with OpenAI error bodies', async () => {
  const conv = await client.conversations.create({});
  await assert.rejects(
    client.conversations.items.create(conv.id, { items: [{ type: 'message', role: 'robot', content: 'x' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'items[0].role' && e.type === 'invalid_request_error');
  await assert.rejects(client.conversations.items.list(conv.id, { limit: 101 }), (e) => e.status === 400);
  await assert.rejects(client.conversations.items.list(conv.id, { after: 'nonsense' }), (e) => e.status === 400);
  await assert.rejects(client.conversations.items.retrieve('msg_99', { conversation_id: conv.id }),
    (e) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(client.conversations.retrieve('conv_not-a-uuid'), (e) => e instanceof OpenAI.NotFoundError);
  const many = Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' }));
  await assert.rejects(client.conversations.items.create(conv.id, { items: many }), (e) => e.status === 400);
});

test('conversations: include on items create, list and retrieve (accepted, changes nothing)', async () => {
  const include = ['file_search_call.results', 'web_search_call.results', 'web_search_call.action.sources',
    'message.input_image.image_url', 'computer_call_output.output.image_url', 'code_interpreter_call.outputs',
    'reasoning.encrypted_content', 'message.output_text.logprobs'];
  const conv = await client.conversations.create({});
  const added = await client.conversations.items.create(conv.id, {
    include,
    items: [
      { role: 'user', content: 'Search the files.' },
      { type: 'reasoning', summary: [], encrypted_content: 'gAAA' },
    ],
  });
  assert.deepEqual(added.data.map((i) => i.type), ['message', 'reasoning']);
  assert.equal(added.data[1].encrypted_content, 'gAAA'); // what the item holds is returned anyway

  const plain = await client.conversations.items.list(conv.id, { order: 'asc' });
  const withInclude = await client.conversations.items.list(conv.id, { order: 'asc', include });
  assert.deepEqual(withInclude.data, plain.data);
  const all = [];
  for await (const item of client.conversations.items.list(conv.id, { limit: 1, order: 'asc', include })) all.push(item.id);
  assert.deepEqual(all, plain.data.map((i) => i.id)); // the next pages keep include

  const one = await client.conversations.items.retrieve(plain.data[1].id, { conversation_id: conv.id, include: ['reasoning.encrypted_content'] });
  assert.deepEqual(one, plain.data[1]);

  // a value the API does not document is refused naming it, on each route
  const bad = ['file_search_call.results', 'zz_nope'];
  const named = (e) => e instanceof OpenAI.BadRequestError && e.param === 'include[1]' && e.message.includes("'zz_nope'");
  await assert.rejects(client.conversations.items.create(conv.id, { include: bad, items: [{ role: 'user', content: 'x' }] }), named);
  await assert.rejects(client.conversations.items.list(conv.id, { include: bad }), named);
  await assert.rejects(client.conversations.items.retrieve(plain.data[0].id, { conversation_id: conv.id, include: bad }), named);
  assert.equal((await client.conversations.items.list(conv.id)).data.length, 2); // the refused create stored nothing
});
