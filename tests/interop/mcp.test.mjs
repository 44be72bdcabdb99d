// mcp.test.mjs — the official MCP TypeScript SDK Client against `mnemo mcp` (stdio) and against
// `mnemo serve` at /mcp (Streamable HTTP): handshake, tools/list, tools/call with structured
// results (validated by the SDK against each tool's outputSchema), errors, resources.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MNEMO, dbTarget, startServer as start, stopServer, testEnv } from './server.mjs';

const { tmp, env } = testEnv('interop-mcp-');
const startServer = (db, extra = []) => start(env, db, extra);

const SID = '0190a000-0000-7000-8000-00000000c001';

async function exercise(client, sid) {
  const tools = await client.listTools();
  const names = tools.tools.map((t) => t.name);
  for (const n of ['append', 'context_build', 'history', 'session_list', 'session_delete', 'state_get', 'state_merge_params'])
    assert.ok(names.includes(n), `tool ${n} listed`);
  const ctxTool = tools.tools.find((t) => t.name === 'context_build');
  assert.equal(ctxTool.annotations.readOnlyHint, true);
  assert.ok(ctxTool.outputSchema, 'context_build has an outputSchema');

  let r = await client.callTool({ name: 'append', arguments: { session_id: sid, create: true, role: 'user', content: 'What is in the repo?' } });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.messages[0].seq, 1);
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  r = await client.callTool({ name: 'append', arguments: { session_id: sid, messages: [{ role: 'assistant', content: 'A README.' }] } });
  assert.equal(r.structuredContent.messages[0].seq, 2);

  r = await client.callTool({ name: 'context_build', arguments: { session_id: sid, max_tokens: 1000 } });
  assert.equal(r.isError, false);
  assert.deepEqual(r.structuredContent.messages, [
    { role: 'user', content: 'What is in the repo?' },
    { role: 'assistant', content: 'A README.' },
  ]);
  assert.equal(r.structuredContent.report.strategy, 'window');

  r = await client.callTool({ name: 'state_merge_params', arguments: { session_id: sid, params: { city: 'Oslo' } } });
  assert.equal(r.structuredContent.state.params.city, 'Oslo');

  r = await client.callTool({ name: 'history', arguments: { session_id: '0190a000-0000-7000-8000-0000000000ff' } });
  assert.equal(r.isError, true, 'a missing session is a tool error, not a protocol error');
  assert.match(r.content[0].text, /^not_found/);

  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (e) => e.code === -32602);

  const res = await client.listResources();
  assert.ok(res.resources.some((x) => x.uri === `mnemo://sessions/${sid}`));
  const rd = await client.readResource({ uri: `mnemo://sessions/${sid}` });
  assert.equal(JSON.parse(rd.contents[0].text).messages.length, 2);
  await client.ping();
}

test('MCP over stdio with the SDK client', async () => {
  const transport = new StdioClientTransport({ command: MNEMO, args: ['--db', dbTarget(join(tmp, 'stdio.db')), 'mcp'], env, stderr: 'inherit' });
  const client = new Client({ name: 'mnemo-interop', version: '1.0.0' });
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, 'mnemo');
  await exercise(client, SID);
  await client.close();
});

test('MCP over Streamable HTTP with the SDK client', async () => {
  const { url, proc } = await startServer(dbTarget(join(tmp, 'http.db')));
  try {
    const client = new Client({ name: 'mnemo-interop', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url + '/mcp')));
    assert.equal(client.getServerVersion().name, 'mnemo');
    await exercise(client, SID);
    await client.close();
  } finally {
    assert.equal(await stopServer(proc), 0);
  }
});

after(() => {});
