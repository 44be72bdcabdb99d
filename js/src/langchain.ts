// langchain.ts — MnemoChatMessageHistory, a LangChain.js chat message history
// (BaseListChatMessageHistory from @langchain/core) kept in `mnemo serve`. getMessages() returns
// the governed context of the session (the server's context operation within maxTokens: what
// fits, tool calls kept with their results), so a long conversation stays within the model's
// window; addMessages() appends as one transaction (creating the session, in `namespace` when
// given). AIMessage tool calls become the assistant message's OpenAI tool_calls and ToolMessage
// a tool message, and back. Content is text: a string or text parts (joined); any other part
// (an image, …) is refused with InvalidError naming it, not dropped.
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { appendCreating } from './append.js';
import { CLIENT_OPTIONS, MnemoClient, type ClientOptions } from './client.js';
import { InvalidError, NotFoundError } from './errors.js';
import { contentText } from './items.js';
import { checkAdapterOptions, checkOptions, given, pick } from './options.js';
import type { ContextMessage, MessageInput, Role } from './types.js';

export interface MnemoChatMessageHistoryOptions extends ClientOptions {
  /** the session's UUID (created on the first write when missing) */
  sessionId: string;
  /** the token budget of getMessages() (default: the server's memory.max_history_tokens) */
  maxTokens?: number;
  /** the context strategy of getMessages() (default: the server's memory.strategy) */
  strategy?: string;
  /** the namespace of the session a write creates (default: the server's default, or the API key's) */
  namespace?: string;
  /** a client to share (else one is made from the options) */
  client?: MnemoClient;
}

const HISTORY_OPTIONS = [...CLIENT_OPTIONS, 'sessionId', 'maxTokens', 'strategy', 'namespace', 'client'] as const;
const TEXT_PARTS = ['text', 'input_text', 'output_text'];

/** The text of a LangChain message's content: a string, or its text parts joined. Another part
 * is refused (InvalidError, as the Python package's Memory does), except an AIMessage's
 * tool-call parts (Anthropic's tool_use) that its tool_calls carry. */
export function messageText(m: BaseMessage): string {
  const content: unknown = m.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    throw new InvalidError(undefined, 'invalid', `content: expected a string or a list of text parts, got ${content === null ? 'null' : typeof content}`);
  }
  const callIds = new Set(m instanceof AIMessage ? (m.tool_calls ?? []).map((c) => c.id) : []);
  const texts: string[] = [];
  content.forEach((part: unknown, i: number) => {
    if (typeof part === 'string') return void texts.push(part);
    const p = (part && typeof part === 'object' ? part : {}) as { type?: unknown; text?: unknown; id?: unknown };
    if (typeof p.type === 'string' && TEXT_PARTS.includes(p.type)) return void texts.push(typeof p.text === 'string' ? p.text : '');
    if (p.type === 'tool_use' && typeof p.id === 'string' && callIds.has(p.id)) return; // kept as its tool call
    const kind = typeof p.type === 'string' ? `'${p.type}'` : part === null ? 'null' : typeof part;
    throw new InvalidError(undefined, 'invalid', `content[${i}]: only text parts can be stored, not ${kind}`);
  });
  return texts.join('');
}

const ROLE: Record<string, Role> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' };

/** A LangChain message as a mnemo message. */
export function toMnemo(m: BaseMessage): MessageInput {
  const type = m.getType();
  const role = ROLE[type] ?? (type === 'generic' && ['user', 'assistant', 'system'].includes((m as { role?: string }).role ?? '') ? (m as unknown as { role: Role }).role : 'user');
  const out: MessageInput = { role, content: messageText(m) };
  if (m.name) out.name = m.name;
  if (m instanceof AIMessage && m.tool_calls?.length) {
    out.tool_calls = m.tool_calls.map((c, i) => ({
      id: c.id ?? `call_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
    }));
    if (!out.content) out.content = null;
  }
  if (m instanceof ToolMessage) out.tool_call_id = m.tool_call_id;
  return out;
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { arguments: text };
  }
}

/** A message of a built context as a LangChain message. */
export function fromMnemo(m: ContextMessage): BaseMessage {
  const content = contentText(m.content);
  const name = typeof m.name === 'string' ? m.name : undefined;
  switch (m.role) {
    case 'assistant':
      return new AIMessage({
        content, name,
        tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: parseArgs(c.function.arguments), type: 'tool_call' as const })),
      });
    case 'tool':
      return new ToolMessage({ content, tool_call_id: String(m.tool_call_id ?? ''), name });
    case 'system':
      return new SystemMessage({ content, name });
    default:
      return new HumanMessage({ content, name });
  }
}

export class MnemoChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['mnemo', 'chat_history'];
  readonly client: MnemoClient;
  readonly sessionId: string;
  readonly maxTokens: number | undefined;
  readonly strategy: string | undefined;
  readonly #namespace: string | undefined;

  constructor(options: MnemoChatMessageHistoryOptions) {
    super();
    checkOptions('MnemoChatMessageHistory', options, HISTORY_OPTIONS);
    if (options?.sessionId == null) throw new TypeError('MnemoChatMessageHistory: sessionId (a UUID) is required');
    checkAdapterOptions('MnemoChatMessageHistory', options);
    if (options.client) {
      const unused = given(options, CLIENT_OPTIONS);
      if (unused.length) throw new TypeError(`MnemoChatMessageHistory: ${unused.join(', ')}: options of the client, not used with \`client\` (give them to that client)`);
    }
    this.client = options.client ?? new MnemoClient(pick<ClientOptions>(options, CLIENT_OPTIONS));
    this.sessionId = options.sessionId;
    this.maxTokens = options.maxTokens ?? undefined;
    this.strategy = options.strategy ?? undefined;
    this.#namespace = options.namespace ?? undefined;
  }

  /** The governed context: the messages to send within maxTokens. */
  async getMessages(): Promise<BaseMessage[]> {
    try {
      const ctx = await this.client.context(this.sessionId, { max_tokens: this.maxTokens, strategy: this.strategy });
      return (ctx.messages ?? []).map(fromMnemo);
    } catch (e) {
      if (e instanceof NotFoundError) return [];
      throw e;
    }
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await appendCreating(this.client, this.sessionId, messages.map(toMnemo), this.#namespace);
  }

  /** Deletes the session; the next write starts it again under the same id. */
  override async clear(): Promise<void> {
    try {
      await this.client.sessionDelete(this.sessionId);
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
    }
  }
}
