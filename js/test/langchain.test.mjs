// langchain.test.mjs — MnemoChatMessageHistory with the real @langchain/core (pinned in
// js/package.json) through RunnableWithMessageHistory: a prompt with the history piped into a
// tiny scripted chat model (BaseChatModel; recording what it was sent, answering from a list), over
// several turns, an AIMessage with tool calls and a ToolMessage included; the budget governs
// what getMessages() returns; clear() empties it. Messages come back strictly equal to the ones
// added, as InMemoryChatMessageHistory returns them (ids, metadata, content blocks), also from a
// governed context, while other mnemo clients see plain messages.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { InMemoryChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
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
  assert.match(empty.message, /^MnemoChatMessageHistory: sessionId must be a non-empty string \(a session's UUID or your own name for it\), not ''$/);
  assert.throws(() => new MnemoChatMessageHistory({ baseURL: url }),
    (e) => e instanceof TypeError && /^MnemoChatMessageHistory: sessionId is required: a non-empty string \(a session's UUID or your own name for it\)$/.test(e.message));
  refused({ maxTokens: '100' }, /^MnemoChatMessageHistory: maxTokens must be a whole number from 0 to 100000000, not '100'$/);
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

// LangChain's examples name sessions with the application's strings ({ sessionId: 'session-1' }):
// mnemo keeps such a string as the session's key (docs/http-api.md, "Session keys").
test('any string is a session id: RunnableWithMessageHistory with "session-1", with and without a namespace', async () => {
  const client = new MnemoClient({ baseURL: url });
  const model = new ScriptedChatModel({ responses: ['Hi Bob.', 'You are Bob.', 'Hello, Ann.', 'You are Ann.', 'Who is asking?'].map((t) => new AIMessage(t)) });
  const prompt = ChatPromptTemplate.fromMessages([new MessagesPlaceholder('history'), ['human', '{input}']]);
  const chain = (namespace) => new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    getMessageHistory: (sessionId) => new MnemoChatMessageHistory({ baseURL: url, sessionId, namespace }),
    inputMessagesKey: 'input',
    historyMessagesKey: 'history',
  });
  const config = { configurable: { sessionId: 'session-1' } };
  await chain().invoke({ input: 'I am Bob.' }, config);
  assert.equal((await chain().invoke({ input: 'Who am I?' }, config)).content, 'You are Bob.');
  assert.deepEqual(model.calls[1].map((m) => m.content), ['I am Bob.', 'Hi Bob.', 'Who am I?']);
  // the same string in a namespace: another session
  await chain('team-k').invoke({ input: 'I am Ann.' }, config);
  await chain('team-k').invoke({ input: 'Who am I?' }, config);
  assert.deepEqual(model.calls[3].map((m) => m.content), ['I am Ann.', 'Hello, Ann.', 'Who am I?']);
  const plain = (await client.sessionGet('session-1')).session;
  const inK = (await client.sessionResume({ namespace: 'team-k', session_id: 'session-1' })).session;
  assert.deepEqual([plain.key, plain.namespace, inK.key, inK.namespace], ['session-1', 'default', 'session-1', 'team-k']);
  assert.notEqual(plain.id, inK.id);
  assert.deepEqual((await client.history(inK.id)).messages.map((m) => m.content), ['I am Ann.', 'Hello, Ann.', 'Who am I?', 'You are Ann.']);

  // two instances of one string see the same messages; clear() empties it for both, the next write makes it again there
  for (const namespace of [undefined, 'team-k']) {
    const a = new MnemoChatMessageHistory({ baseURL: url, sessionId: 'session-1', namespace });
    const b = new MnemoChatMessageHistory({ baseURL: url, sessionId: 'session-1', namespace });
    await a.addMessage(new HumanMessage('one more'));
    assert.equal((await b.getMessages()).at(-1).content, 'one more');
    await b.clear();
    assert.deepEqual(await a.getMessages(), []);
    await a.addMessages([new HumanMessage({ content: 'fresh', id: 'f-1' })]);
    assert.deepStrictEqual(await b.getMessages(), [new HumanMessage({ content: 'fresh', id: 'f-1' })]);
  }
  assert.equal((await client.sessionResume({ namespace: 'team-k', session_id: 'session-1' })).session.namespace, 'team-k');
  assert.deepEqual((await client.history('session-1')).messages.map((m) => m.content), ['fresh']);
  // a string no session has: an empty history, and reading made nothing
  assert.deepEqual(await new MnemoChatMessageHistory({ baseURL: url, sessionId: 'never-written', namespace: 'team-k' }).getMessages(), []);
  assert.ok((await client.sessionResume({ namespace: 'team-k', session_id: 'never-written' }).catch((x) => x)) instanceof NotFoundError);
});

test('a string id with namespace: an instance that found the session before another cleared it and a third made it again', async () => {
  const make = () => new MnemoChatMessageHistory({ baseURL: url, sessionId: 'chat/42', namespace: 'team-m' });
  const early = make();
  await early.addMessage(new HumanMessage('first'));
  assert.deepEqual((await early.getMessages()).map((m) => m.content), ['first']);
  await make().clear();
  await make().addMessage(new HumanMessage('second'));
  assert.deepEqual((await early.getMessages()).map((m) => m.content), ['second']);
  await early.addMessage(new AIMessage('third'));
  assert.deepEqual((await make().getMessages()).map((m) => m.content), ['second', 'third']);
  const found = (await new MnemoClient({ baseURL: url }).sessionResume({ namespace: 'team-m', session_id: 'chat/42' })).session;
  assert.deepEqual([found.key, found.namespace], ['chat/42', 'team-m']);
});

// The messages of a fresh history (a new instance: nothing kept in the process) after adding
// `messages` to a new session, checked strictly equal (undefined fields count) to what
// LangChain's in-memory history gives back for the same messages.
async function roundTrip(messages, options = {}) {
  const sessionId = crypto.randomUUID();
  await new MnemoChatMessageHistory({ baseURL: url, sessionId, ...options }).addMessages(messages);
  const got = await new MnemoChatMessageHistory({ baseURL: url, sessionId, ...options }).getMessages();
  const memory = new InMemoryChatMessageHistory();
  await memory.addMessages(messages);
  assert.deepStrictEqual(got, await memory.getMessages());
  return { sessionId, got, stored: (await new MnemoClient({ baseURL: url }).history(sessionId)).messages };
}

test('round trip: HumanMessage("hi") comes back strictly equal, stored as a plain user message', async () => {
  const { got, stored } = await roundTrip([new HumanMessage('hi')]);
  assert.deepStrictEqual(got, [new HumanMessage('hi')]); // no name: undefined added
  assert.deepEqual([stored[0].role, stored[0].content, stored[0].name, stored[0].metadata], ['user', 'hi', null, {}]);
});

test('round trip: an AIMessage\'s id, tool calls, usage_metadata, response_metadata and additional_kwargs', async () => {
  const ai = new AIMessage({
    id: 'run-1', content: 'Let me check.', name: 'helper',
    tool_calls: [{ id: 'call_1', name: 'multiply', args: { a: 6, b: 7 }, type: 'tool_call' }],
    usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    response_metadata: { model_name: 'gpt-x', finish_reason: 'tool_calls' },
    additional_kwargs: { refusal: null },
  });
  // (a context leaves out a tool call without its result: the result follows)
  const { got, stored } = await roundTrip([new HumanMessage('6 x 7?'), new AIMessage({ id: 'run-0', content: 'x' }), ai,
    new ToolMessage({ content: '42', tool_call_id: 'call_1' })]);
  assert.equal(got[1].id, 'run-0');
  // other clients see a normal assistant message; what mnemo has no column for is under one key
  assert.deepEqual(stored[2].tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'multiply', arguments: '{"a":6,"b":7}' } }]);
  assert.deepEqual([stored[2].role, stored[2].content, stored[2].name], ['assistant', 'Let me check.', 'helper']);
  assert.deepEqual(stored[2].metadata, { langchain_message: { type: 'ai', data: {
    id: 'run-1', usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    response_metadata: { model_name: 'gpt-x', finish_reason: 'tool_calls' }, additional_kwargs: { refusal: null },
  } } });
  // a tool call without a type: as it was, not completed
  await roundTrip([new AIMessage({ content: '', tool_calls: [{ id: 'c2', name: 'now', args: {} }] }), new ToolMessage({ content: '9:00', tool_call_id: 'c2' })]);
});

test('round trip: a ToolMessage\'s tool_call_id, name and artifact; system and generic messages', async () => {
  const { stored } = await roundTrip([
    new SystemMessage({ content: 'Be terse.', name: 'rules' }),
    new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'multiply', args: { a: 6, b: 7 }, type: 'tool_call' }] }),
    new ToolMessage({ content: '42', tool_call_id: 'call_1', name: 'multiply', artifact: { raw: 42 } }),
    new ChatMessage('a generic one', 'user'),
  ]);
  assert.deepEqual([stored[2].role, stored[2].tool_call_id, stored[2].name, stored[2].content], ['tool', 'call_1', 'multiply', '42']);
  assert.deepEqual(stored[2].metadata, { langchain_message: { type: 'tool', data: { artifact: { raw: 42 } } } });
  assert.deepEqual(stored[1].metadata, {});
  assert.deepEqual([stored[3].role, stored[3].metadata.langchain_message.type], ['user', 'generic']);
});

test('round trip: content blocks (an image) are stored as given and returned as given', async () => {
  const image = new HumanMessage({ content: [
    { type: 'text', text: 'What is in this picture?' },
    { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    { type: 'image', source_type: 'url', url: 'https://example.com/cat.png' },
  ] });
  const anthropic = new AIMessage({ // Anthropic's tool_use part: its tool call is the message's
    content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'tu_1', name: 'search', input: { q: 'x' } }],
    tool_calls: [{ id: 'tu_1', name: 'search', args: { q: 'x' }, type: 'tool_call' }],
  });
  const orphan = new AIMessage({ content: [{ type: 'tool_use', id: 'tu_2', name: 'search', input: {} }] }); // no tool call: kept all the same
  const { sessionId, stored } = await roundTrip([image, anthropic, new ToolMessage({ content: 'found', tool_call_id: 'tu_1' }), orphan,
    new HumanMessage({ content: [{ type: 'text', text: 'a ' }, { type: 'text', text: 'b' }] })]);
  // other clients (search, the context, the CLI) see the text, and the tool call
  assert.deepEqual(stored.map((m) => m.content), ['What is in this picture?', 'Let me look.', 'found', '', 'a b']);
  assert.deepEqual(stored[1].tool_calls, [{ id: 'tu_1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }]);
  // another client edits the text: the edit wins over the kept blocks (the text of a picture is gone)
  const client = new MnemoClient({ baseURL: url });
  await client.messageEdit(sessionId, stored[0].id, { content: 'What is this?' });
  const [edited] = await new MnemoChatMessageHistory({ baseURL: url, sessionId }).getMessages();
  assert.deepStrictEqual(edited, new HumanMessage('What is this?'));
});

test('round trip in a namespace: the session is made there, the messages come back as given', async () => {
  const { sessionId } = await roundTrip([new HumanMessage({ content: 'hello', id: 'h-1' }), new AIMessage({ content: 'hi', id: 'a-1' })], { namespace: 'team-b' });
  assert.equal((await new MnemoClient({ baseURL: url }).sessionGet(sessionId)).session.namespace, 'team-b');
});

test('a governed context: the messages it keeps come back as added (a trimmed tool output with its new text)', async () => {
  const sessionId = crypto.randomUUID();
  const history = new MnemoChatMessageHistory({ baseURL: url, sessionId, maxTokens: 2000 });
  const old = [];
  for (let i = 0; i < 30; i++) {
    old.push(new HumanMessage({ content: `question ${i}: ${'what about the weather '.repeat(5)}`, id: `h${i}` }));
    old.push(new AIMessage({ content: `answer ${i}: ${'sunny and warm all day '.repeat(5)}`, id: `a${i}`, response_metadata: { n: i } }));
  }
  const call = new AIMessage({ content: '', id: 'a-call', tool_calls: [{ id: 'call_9', name: 'read', args: { path: 'big.txt' }, type: 'tool_call' }] });
  const result = new ToolMessage({ content: 'line\n'.repeat(1000), tool_call_id: 'call_9', name: 'read', id: 't-1' });
  const last = [new AIMessage({ content: 'It is long.', id: 'a-last' }), new HumanMessage({ content: 'Thanks.', id: 'h-last' })];
  await history.addMessages([...old, call, result, ...last]);
  const got = await history.getMessages();
  assert.ok(got.length < old.length, `${got.length} messages: the budget governed`);
  // the newest ones strictly as added; the tool output trimmed by the server, its id and name kept
  assert.deepStrictEqual(got.slice(-2), last);
  assert.deepStrictEqual(got.at(-4), call);
  const trimmed = got.at(-3);
  assert.ok(trimmed instanceof ToolMessage);
  assert.match(trimmed.content, /truncated, 5000 chars total/);
  assert.deepEqual([trimmed.id, trimmed.name, trimmed.tool_call_id], ['t-1', 'read', 'call_9']);
  // an older message kept by the budget: its id and response_metadata too
  const kept = got.find((m) => m.id === 'a29');
  assert.deepStrictEqual(kept, old.find((m) => m.id === 'a29'));
});

test('messages another client wrote come back with the fields they have, nothing undefined added', async () => {
  const sessionId = crypto.randomUUID();
  await new MnemoClient({ baseURL: url }).append(sessionId, { create: true, messages: [
    { role: 'user', content: 'plain' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'done', name: 'f' },
  ] });
  assert.deepStrictEqual(await new MnemoChatMessageHistory({ baseURL: url, sessionId }).getMessages(), [
    new HumanMessage('plain'),
    new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'f', args: { x: 1 }, type: 'tool_call' }] }),
    new ToolMessage({ content: 'done', tool_call_id: 'c1', name: 'f' }),
  ]);
});
