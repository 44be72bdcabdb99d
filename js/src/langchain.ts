// langchain.ts — MnemoChatMessageHistory, a LangChain.js chat message history
// (BaseListChatMessageHistory from @langchain/core) kept in `mnemo serve`. getMessages() returns
// the governed context of the session (the server's context operation within maxTokens: what
// fits, tool calls kept with their results), so a long conversation stays within the model's
// window; addMessages() appends as one transaction (creating the session, in `namespace` when
// given). The session id is any non-empty string (session.ts). Each message is a normal mnemo
// message (role, text, OpenAI tool_calls, tool_call_id, name); what mnemo has no column for (ids,
// metadata, content blocks, …) is kept in its metadata under "langchain_message", so the
// messages come back as added (docs/js.md).
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, type BaseMessage, type StoredMessage } from '@langchain/core/messages';
import { isDeepStrictEqual } from 'node:util';
import { CLIENT_OPTIONS, MnemoClient, type ClientOptions } from './client.js';
import { InvalidError } from './errors.js';
import { RANGES } from './generated.js';
import { contentText } from './items.js';
import { checkAdapterOptions, checkOptions, given, pick, SESSION_ID } from './options.js';
import { SessionRef } from './session.js';
import type { ContextMessage, Message, MessageInput, Role, ToolCall } from './types.js';

export interface MnemoChatMessageHistoryOptions extends ClientOptions {
  /** the session: any non-empty string of yours ("session-1", kept as the session's key in
   * `namespace`) or a session's UUID; made on the first write when missing */
  sessionId: string;
  /** the token budget of getMessages() (default: the server's memory.max_history_tokens) */
  maxTokens?: number;
  /** the context strategy of getMessages() (default: the server's memory.strategy) */
  strategy?: string;
  /** the namespace the session is made and found in (default: the server's default, or the API key's) */
  namespace?: string;
  /** a client to share (else one is made from the options) */
  client?: MnemoClient;
}

const HISTORY_OPTIONS = [...CLIENT_OPTIONS, 'sessionId', 'maxTokens', 'strategy', 'namespace', 'client'] as const;
const TEXT_PARTS = ['text', 'input_text', 'output_text'];
const PAGE = RANGES.history.limit.maximum; // the history operation's largest page

/** The metadata key of what a stored message needs besides mnemo's columns to be the LangChain
 * message it was: `{type, data}`, LangChain's StoredMessage less the fields the columns give. */
export const MESSAGE_KEY = 'langchain_message';

/** The text of a LangChain content value: a string, or its text parts joined (other blocks, an
 * image, a tool_use, have no text: they are kept whole under MESSAGE_KEY). */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    throw new InvalidError(undefined, 'invalid', `content: expected a string or a list of content blocks, got ${content === null ? 'null' : typeof content}`);
  }
  return content
    .map((p: unknown) => {
      if (typeof p === 'string') return p;
      const b = (p && typeof p === 'object' ? p : {}) as { type?: unknown; text?: unknown };
      return typeof b.type === 'string' && TEXT_PARTS.includes(b.type) && typeof b.text === 'string' ? b.text : '';
    })
    .join('');
}

const ROLE: Record<string, Role> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' };
const TYPE: Record<string, string> = { user: 'human', assistant: 'ai', system: 'system', tool: 'tool' };

type Data = Record<string, unknown>;
type Columns = Pick<Message, 'role' | 'content' | 'tool_calls' | 'tool_call_id' | 'name'> | ContextMessage;

function parseArgs(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { arguments: text };
  }
}

/** The StoredMessage that a message's columns alone give (another client's message): only the
 * fields it has, so nothing undefined is added. */
function fromColumns(m: Columns, content: string): StoredMessage {
  const type = TYPE[m.role] ?? 'human';
  const data: Data = { content };
  if (typeof m.name === 'string') data.name = m.name;
  if (type === 'tool') data.tool_call_id = String(m.tool_call_id ?? '');
  if (type === 'ai' && m.tool_calls?.length) {
    data.tool_calls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: parseArgs(c.function.arguments), type: 'tool_call' }));
  }
  return { type, data } as unknown as StoredMessage;
}

/** A message's StoredMessage (LangChain's own mapping) as plain JSON, as metadata keeps it. */
function storedOf(m: BaseMessage): { type: string; data: Data } {
  return JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages([m])[0]));
}

/** A LangChain message as a mnemo message. */
export function toMnemo(m: BaseMessage): MessageInput {
  const { type, data } = storedOf(m);
  const role = ROLE[type] ?? (type === 'generic' && ['user', 'assistant', 'system'].includes(String(data.role)) ? data.role as Role : 'user');
  const out: MessageInput = { role, content: messageText(data.content ?? m.content) };
  if (typeof data.name === 'string') out.name = data.name;
  if (role === 'tool') out.tool_call_id = String(data.tool_call_id ?? '');
  const calls = type === 'ai' && Array.isArray(data.tool_calls) ? data.tool_calls as Array<{ id?: string; name?: string; args?: unknown }> : [];
  if (calls.length) {
    out.tool_calls = calls.map((c, i): ToolCall => ({
      id: c.id ?? `call_${i}`, type: 'function', function: { name: String(c.name), arguments: JSON.stringify(c.args ?? {}) },
    }));
    if (!out.content) out.content = null;
  }
  // what the columns give back as it was is not kept twice; nor are the defaults of the
  // message's class (additional_kwargs: {}, …) when the columns make that class
  const base = fromColumns(out as Columns, out.content ?? '');
  const plain = storedOf(mapStoredMessagesToChatMessages([base])[0]);
  const given = (k: string) => k in plain.data && (type === plain.type || k in base.data);
  const rest = Object.fromEntries(Object.entries(data).filter(([k, v]) => !(given(k) && isDeepStrictEqual(v, plain.data[k]))));
  if (Object.keys(rest).length || type !== plain.type) out.metadata = { [MESSAGE_KEY]: { type, data: rest } };
  return out;
}

/** A stored message, or one of a built context, as a LangChain message: its columns plus what
 * MESSAGE_KEY kept. `content` (a governed context's text of a trimmed message) replaces the
 * stored text; kept content blocks whose text is not the message's (edited since, or trimmed)
 * give way to it. */
export function fromMnemo(m: Columns & { metadata?: Data }, content?: string): BaseMessage {
  const text = content ?? contentText(m.content);
  const base = fromColumns(m, text);
  const kept = m.metadata?.[MESSAGE_KEY] as { type?: unknown; data?: unknown } | undefined;
  if (kept && typeof kept.type === 'string' && kept.data && typeof kept.data === 'object') {
    const rest: Data = { ...kept.data as Data };
    const keptText = typeof rest.content === 'string' || Array.isArray(rest.content) ? messageText(rest.content) : undefined;
    if ('content' in rest && (content !== undefined || keptText !== text)) delete rest.content;
    try {
      return mapStoredMessagesToChatMessages([{ type: kept.type, data: { ...base.data, ...rest } } as unknown as StoredMessage])[0];
    } catch {
      // a record LangChain cannot read (another writer's: an unknown type): the columns alone
    }
  }
  return mapStoredMessagesToChatMessages([base])[0];
}

export class MnemoChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['mnemo', 'chat_history'];
  readonly client: MnemoClient;
  readonly sessionId: string;
  readonly maxTokens: number | undefined;
  readonly strategy: string | undefined;
  readonly #session: SessionRef;

  constructor(options: MnemoChatMessageHistoryOptions) {
    super();
    checkOptions('MnemoChatMessageHistory', options, HISTORY_OPTIONS);
    if (options?.sessionId == null) throw new TypeError(`MnemoChatMessageHistory: sessionId is required: ${SESSION_ID}`);
    checkAdapterOptions('MnemoChatMessageHistory', options);
    if (options.client) {
      const unused = given(options, CLIENT_OPTIONS);
      if (unused.length) throw new TypeError(`MnemoChatMessageHistory: ${unused.join(', ')}: options of the client, not used with \`client\` (give them to that client)`);
    }
    this.client = options.client ?? new MnemoClient(pick<ClientOptions>(options, CLIENT_OPTIONS));
    this.sessionId = options.sessionId;
    this.maxTokens = options.maxTokens ?? undefined;
    this.strategy = options.strategy ?? undefined;
    this.#session = new SessionRef(this.client, this.sessionId, options.namespace ?? undefined);
  }

  /** The governed context: the messages to send within maxTokens. The history messages it
   * keeps are read back from the store (the report's `detail` names them) to come back as they
   * were added; the others (a system prompt, a summary, recalled messages) from their fields. */
  async getMessages(): Promise<BaseMessage[]> {
    const got = await this.#session.use(async (id) => {
      const ctx = await this.client.contextBuild(id, { max_tokens: this.maxTokens, strategy: this.strategy, detail: true });
      const detail = ((ctx.report as { detail?: unknown }).detail ?? []) as Array<{ seq?: unknown; id?: unknown; fate?: unknown }>;
      const kept = detail.filter((d): d is { seq: number; id: number; fate: string } =>
        typeof d.seq === 'number' && typeof d.id === 'number' && typeof d.fate === 'string');
      const stored = await this.#stored(id, kept.map((d) => d.seq));
      let next = 0;
      return (ctx.messages ?? []).map((cm) => {
        const d = kept[next];
        const m = d && stored.get(d.id);
        if (!m || !sameMessage(cm, m, d.fate === 'kept')) return fromMnemo(cm);
        next++;
        return fromMnemo(m, d.fate === 'kept' ? undefined : contentText(cm.content));
      });
    });
    return got ?? []; // none: not written yet
  }

  /** Session `id`'s stored messages of `seqs` (ascending), by id: one history read a run of
   * consecutive seqs. */
  async #stored(id: string, seqs: number[]): Promise<Map<number, Message>> {
    const out = new Map<number, Message>();
    for (let i = 0; i < seqs.length;) {
      let j = i;
      while (j + 1 < seqs.length && seqs[j + 1] === seqs[j] + 1) j++;
      for (let after = seqs[i] - 1; after < seqs[j];) {
        const page = await this.client.history(id, { after, limit: Math.min(PAGE, seqs[j] - after) });
        for (const m of page.messages) if (m.seq <= seqs[j]) out.set(m.id, m);
        if (!page.has_more || page.messages.length === 0) break;
        after = page.messages[page.messages.length - 1].seq;
      }
      i = j + 1;
    }
    return out;
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.#session.append(messages.map(toMnemo));
  }

  /** Deletes the session; the next write starts it again under the same id. */
  override async clear(): Promise<void> {
    await this.#session.delete();
  }
}

/** Whether a context message is stored message `m` as sent: the same role, tool call ids and
 * tool_call_id, and (`exact`, a message kept as it is) the same text. */
function sameMessage(cm: ContextMessage, m: Message, exact: boolean): boolean {
  const ids = (calls: ToolCall[] | null | undefined) => (calls ?? []).map((c) => c.id).join('\n');
  return cm.role === m.role && (cm.tool_call_id ?? null) === (m.tool_call_id ?? null) && ids(cm.tool_calls) === ids(m.tool_calls) &&
    (!exact || contentText(cm.content) === (m.content ?? ''));
}
