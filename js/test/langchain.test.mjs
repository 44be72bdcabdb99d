// langchain.test.mjs — MnemoChatMessageHistory with the real @langchain/core (pinned in
// js/package.json) through RunnableWithMessageHistory: a prompt with the history piped into a
// tiny scripted chat model (BaseChatModel; recording what it was sent, answering from a list), over
// several turns, an AIMessage with tool calls and a ToolMessage included; the budget governs
// what getMessages() returns; clear() empties it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { MnemoClient, InvalidError, NotFoundError } from '@mnemo/client';
import { MnemoChatMessageHistory } from '@mnemo/client/langchain';
import { dbTarget, startServer, stopServer } from './server.mjs';

const { url, proc } = await startServer(dbTarget('langchain'));
after(async () => { assert.equal(await stopServer(proc), 0); });

// A scripted chat model: answers its responses in order (tool calls kept, which
// @langchain/core's FakeStreamingChatModel drops) and records the messages of every call.
class ScriptedChatModel extends BaseChatModel {
  calls = [];
  constructor({ responses }) { super({}); this.responses = responses; }
  _llmType() { return 'scripted'; }
  async _generate(messages) {
    this.calls.push(messages);
    const message = this.responses.shift();
    assert.ok(message, 'the model was called more often than scripted');
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}

test('RunnableWithMessageHistory over three turns, tool messages included', async () => {
  const model = new ScriptedChatModel({ responses: [
    new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'multiply', args: { a: 6, b: 7 }, type: 'tool_call' }] }),
    new AIMessage('6 x 7 = 42.'),
    new AIMessage('43.'),
  ] });
  const prompt = ChatPromptTemplate.fromMessages([['system', 'You are terse.'], new MessagesPlaceholder('history'), ['human', '{input}']]);
  const sessionId = crypto.randomUUID();
  const chain = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    getMessageHistory: (id) => new MnemoChatMessageHistory({ baseURL: url, sessionId: id }),
    inputMessagesKey: 'input',
    historyMessagesKey: 'history',
  });
  const config = { configurable: { sessionId } };

  const first = await chain.invoke({ input: 'What is 6 x 7?' }, config);
  assert.equal(first.tool_calls[0].name, 'multiply');
  // the application runs the tool and records its result
  const history = new MnemoChatMessageHistory({ baseURL: url, sessionId });
  await history.addMessage(new ToolMessage({ content: '42', tool_call_id: 'call_1' }));

  const second = await chain.invoke({ input: 'So?' }, config);
  assert.equal(second.content, '6 x 7 = 42.');
  const seen = model.calls[1];
  assert.deepEqual(seen.map((m) => m.getType()), ['system', 'human', 'ai', 'tool', 'human']);
  assert.deepEqual(seen[2].tool_calls.map((c) => [c.id, c.name, c.args]), [['call_1', 'multiply', { a: 6, b: 7 }]]);
  assert.equal(seen[3].tool_call_id, 'call_1');
  assert.equal(seen[3].content, '42');

  await chain.invoke({ input: 'Plus one?' }, config);
  assert.deepEqual(model.calls[2].map((m) => m.content).slice(-3), ['So?', '6 x 7 = 42.', 'Plus one?']);

  // mnemo's view of the same conversation
  const stored = (await new MnemoClient({ baseURL: url }).history(sessionId)).messages;
  assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'tool', 'user', 'assistant', 'user', 'assistant']);
  assert.deepEqual(stored[1].tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'multiply', arguments: '{"a":6,"b":7}' } }]);
  assert.equal(stored[2].tool_call_id, 'call_1');

  await history.clear();
  assert.deepEqual(await history.getMessages(), []);
});

test('getMessages(): the governed context within maxTokens', async () => {
  const sessionId = crypto.randomUUID();
  const history = new MnemoChatMessageHistory({ baseURL: url, sessionId, maxTokens: 200 });
  const many = [];
  for (let i = 0; i < 20; i++) {
    many.push(new HumanMessage(`question ${i}: ${'what about the weather '.repeat(5)}`));
    many.push(new AIMessage(`answer ${i}: ${'sunny and warm all day '.repeat(5)}`));
  }
  await history.addMessages(many);
  const got = await history.getMessages();
  assert.ok(got.length > 0 && got.length < 40, `${got.length} messages`);
  assert.match(got.at(-1).content, /^answer 19: /);
  const all = await new MnemoChatMessageHistory({ baseURL: url, sessionId, maxTokens: 100000 }).getMessages();
  assert.equal(all.length, 40);
});

test('options: a misspelt option name is a TypeError naming it', () => {
  const sessionId = crypto.randomUUID();
  assert.throws(() => new MnemoChatMessageHistory({ baseURL: url, sessionId, maxToken: 5 }),
    (e) => e instanceof TypeError && /maxToken\b/.test(e.message) && /maxTokens/.test(e.message));
  assert.throws(() => new MnemoChatMessageHistory({ baseUrl: url, sessionId }), /baseUrl/);
  const client = new MnemoClient({ baseURL: url });
  assert.throws(() => new MnemoChatMessageHistory({ client, sessionId, baseURL: url }), /baseURL/);
});

test('options: a value of the wrong type is refused naming the option, not ignored', async () => {
  const refused = (options, message) => assert.throws(() => new MnemoChatMessageHistory({ baseURL: url, sessionId: crypto.randomUUID(), ...options }),
    (e) => e instanceof TypeError && message.test(e.message), JSON.stringify(options));
  // an empty sessionId read as an empty history (the 404 of a route that does not exist)
  const empty = (() => { try { return new MnemoChatMessageHistory({ baseURL: url, sessionId: '' }); } catch (e) { return e; } })();
  assert.ok(empty instanceof TypeError, String(empty));
  assert.match(empty.message, /^MnemoChatMessageHistory: sessionId must be a session's UUID, not ''$/);
  refused({ maxTokens: '100' }, /^MnemoChatMessageHistory: maxTokens must be a whole number of 0 or more, not '100'$/);
  refused({ strategy: 5 }, /strategy must be a string, not 5$/);
  // a namespace of the wrong type was never sent when the session existed: refused all the same
  const { session } = await new MnemoClient({ baseURL: url }).sessionCreate();
  assert.throws(() => new MnemoChatMessageHistory({ baseURL: url, sessionId: session.id, namespace: 5 }),
    (e) => e instanceof TypeError && /^MnemoChatMessageHistory: namespace must be a string, not 5$/.test(e.message));
});

test('namespace: the session it creates is in that namespace; a bad one is refused by the server', async () => {
  const client = new MnemoClient({ baseURL: url });
  const sessionId = crypto.randomUUID();
  const history = new MnemoChatMessageHistory({ baseURL: url, sessionId, namespace: 'team-a' });
  await history.addMessage(new HumanMessage('hello'));
  assert.equal((await client.sessionGet(sessionId)).session.namespace, 'team-a');
  await history.addMessage(new AIMessage('hi'));
  assert.deepEqual((await history.getMessages()).map((m) => m.content), ['hello', 'hi']);
  // cleared, the next write makes it again in the same namespace
  await history.clear();
  await history.addMessage(new HumanMessage('fresh'));
  assert.equal((await client.sessionGet(sessionId)).session.namespace, 'team-a');
  assert.equal((await client.sessionList({ namespace: 'team-a' })).sessions.filter((s) => s.id === sessionId).length, 1);
  // a bad namespace: the server's message, nothing stored
  const badId = crypto.randomUUID();
  const bad = new MnemoChatMessageHistory({ baseURL: url, sessionId: badId, namespace: 'bad name!' });
  const e = await bad.addMessage(new HumanMessage('x')).catch((x) => x);
  assert.ok(e instanceof InvalidError, String(e));
  assert.match(e.message, /^namespace: 'bad name!' has a character outside/);
  assert.ok((await client.sessionGet(badId).catch((x) => x)) instanceof NotFoundError);
  // misspelt, as every option
  assert.throws(() => new MnemoChatMessageHistory({ baseURL: url, sessionId, nameSpace: 'team-a' }),
    (x) => x instanceof TypeError && /'nameSpace' \(did you mean 'namespace'\?\)/.test(x.message));
});

test('content parts other than text are refused, naming the part, nothing stored', async () => {
  const sessionId = crypto.randomUUID();
  const history = new MnemoChatMessageHistory({ baseURL: url, sessionId });
  const e = await history.addMessages([
    new HumanMessage('first'),
    new HumanMessage({ content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }),
  ]).catch((x) => x);
  assert.ok(e instanceof InvalidError, String(e));
  assert.equal(e.code, 'invalid');
  assert.match(e.message, /content\[1\]: only text parts can be stored/);
  assert.match(e.message, /image_url/);
  assert.deepEqual(await history.getMessages(), []); // the batch is all or nothing
  // text parts are joined
  await history.addMessage(new HumanMessage({ content: [{ type: 'text', text: 'a ' }, { type: 'text', text: 'b' }] }));
  assert.deepEqual((await history.getMessages()).map((m) => m.content), ['a b']);
});

test('an AIMessage\'s tool_use parts (Anthropic) are its tool calls: kept as such, not refused', async () => {
  const sessionId = crypto.randomUUID();
  const history = new MnemoChatMessageHistory({ baseURL: url, sessionId });
  await history.addMessage(new AIMessage({
    content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'tu_1', name: 'search', input: { q: 'x' } }],
    tool_calls: [{ id: 'tu_1', name: 'search', args: { q: 'x' }, type: 'tool_call' }],
  }));
  const stored = (await new MnemoClient({ baseURL: url }).history(sessionId)).messages;
  assert.deepEqual([stored[0].content, stored[0].tool_calls], ['Let me look.', [{ id: 'tu_1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }]]);
  // a tool_use part no tool call stands for would be lost: refused
  const e = await history.addMessage(new AIMessage({ content: [{ type: 'tool_use', id: 'tu_2', name: 'search', input: {} }] })).catch((x) => x);
  assert.ok(e instanceof InvalidError, String(e));
  assert.match(e.message, /content\[0\]: only text parts can be stored, not 'tool_use'/);
});
