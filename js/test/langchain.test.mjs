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
import { MnemoClient } from '@mnemo/client';
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
