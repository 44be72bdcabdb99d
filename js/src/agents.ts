// agents.ts — MnemoSession, a session store of the OpenAI Agents SDK (@openai/agents `Session`)
// kept in `mnemo serve`. getItems() without a limit returns the governed context (the server's
// context operation within maxTokens) when it differs from the stored history (something
// dropped, folded, trimmed, or added: a system prompt, long-term memories, recalled messages);
// getItems(limit) returns the newest `limit` stored items. Items map to messages as items.ts says.
import type { AgentInputItem, Session } from '@openai/agents';
import { CLIENT_OPTIONS, MnemoClient, type ClientOptions } from './client.js';
import { RANGES, type ContextBuildResult } from './generated.js';
import { CALLS_KEY, ITEM_KEY, itemsToMessages, messagesToItems, storedToItems, type InputItem } from './items.js';
import { checkAdapterOptions, checkOptions, given, pick, shown } from './options.js';
import { SessionRef } from './session.js';
import type { Message, MessageInput } from './types.js';

export interface MnemoSessionOptions extends ClientOptions {
  /** the session: any non-empty string of yours ("user-42-chat", kept as the session's key in
   * `namespace`) or a session's UUID, made on the first write when missing; none: a new session */
  sessionId?: string;
  /** the token budget of getItems() (default: the server's memory.max_history_tokens) */
  maxTokens?: number;
  /** the context strategy of getItems() (default: the server's memory.strategy) */
  strategy?: string;
  /** the namespace the session is made and found in (default: the server's default, or the API
   * key's) */
  namespace?: string;
  /** a client to share (else one is made from the options) */
  client?: MnemoClient;
}

const SESSION_OPTIONS = [...CLIENT_OPTIONS, 'sessionId', 'maxTokens', 'strategy', 'namespace', 'client'] as const;
const PAGE = RANGES.history.limit.maximum; // the history operation's largest page

/** Whether a built context differs from the stored history: something dropped, folded or
 * trimmed, or something added (a system prompt, the long-term memory block, recalled messages). */
export function isGoverned(ctx: ContextBuildResult): boolean {
  const r = ctx.report as {
    messages?: { dropped?: number; kept?: number }; parts?: { system?: number }; summary?: unknown;
    governance?: { tool_outputs?: { trimmed?: number; offloaded?: number } };
    memories?: { included?: unknown[] }; rag?: { injected?: unknown[] };
  };
  const t = r.governance?.tool_outputs;
  const added = (r.memories?.included?.length ?? 0) > 0 || (r.rag?.injected?.length ?? 0) > 0 ||
    // any message the stored history does not account for (one context message per kept one)
    (ctx.messages !== undefined && r.messages?.kept !== undefined && ctx.messages.length !== r.messages.kept);
  return Boolean(added || (r.messages?.dropped ?? 0) > 0 || (r.parts?.system ?? 0) > 0 || r.summary || (t?.trimmed ?? 0) > 0 || (t?.offloaded ?? 0) > 0);
}

export class MnemoSession implements Session {
  readonly client: MnemoClient;
  readonly maxTokens: number | undefined;
  readonly strategy: string | undefined;
  readonly #namespace: string | undefined;
  #sessionId: Promise<string> | undefined;
  #ref: SessionRef | undefined;

  constructor(options: MnemoSessionOptions = {}) {
    checkOptions('MnemoSession', options, SESSION_OPTIONS);
    options ??= {};
    checkAdapterOptions('MnemoSession', options);
    if (options.client) {
      const unused = given(options, CLIENT_OPTIONS);
      if (unused.length) throw new TypeError(`MnemoSession: ${unused.join(', ')}: options of the client, not used with \`client\` (give them to that client)`);
    }
    this.client = options.client ?? new MnemoClient(pick<ClientOptions>(options, CLIENT_OPTIONS));
    this.maxTokens = options.maxTokens ?? undefined;
    this.strategy = options.strategy ?? undefined;
    this.#namespace = options.namespace ?? undefined;
    if (options.sessionId) this.#sessionId = Promise.resolve(options.sessionId);
  }

  /** The session's id: the `sessionId` given, as given; without one, the UUID of the session
   * the first call creates (a failed create is not kept: the next call tries again). */
  getSessionId(): Promise<string> {
    if (!this.#sessionId) {
      const made = this.client.sessionCreate({ namespace: this.#namespace }).then((r) => r.session.id);
      this.#sessionId = made;
      made.catch(() => { if (this.#sessionId === made) this.#sessionId = undefined; });
    }
    return this.#sessionId;
  }

  /** The session as the routes name it. */
  async #session(): Promise<SessionRef> {
    const name = await this.getSessionId();
    if (this.#ref?.name !== name) this.#ref = new SessionRef(this.client, name, this.#namespace);
    return this.#ref;
  }

  async getItems(limit?: number): Promise<AgentInputItem[]> {
    // a limit that is not a number ('5', NaN) slipped past every comparison: every item came back
    if (limit != null && !Number.isInteger(limit)) throw new TypeError(`MnemoSession.getItems: limit must be a whole number, not ${shown(limit)}`);
    const session = await this.#session();
    if (limit != null && limit <= 0) return [];
    const items = await session.use(async (id) => {
      if (limit != null) {
        // each message holds at least one item: the newest `limit` messages are enough
        return storedToItems(await this.#newest(id, limit)).slice(-limit);
      }
      const ctx = await this.client.contextBuild(id, { max_tokens: this.maxTokens, strategy: this.strategy });
      if (isGoverned(ctx)) return messagesToItems(ctx.messages ?? []);
      return storedToItems(await this.#all(id));
    });
    return (items ?? []) as AgentInputItem[]; // none: not written yet
  }

  /** One append of all the items (one transaction); consecutive function_calls (parallel calls)
   * are one assistant message, as items.ts says. A missing session is created (in `namespace`
   * when given). */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    await (await this.#session()).append(itemsToMessages(items as InputItem[]));
  }

  /** Removes and returns the newest item. A message holding several items (parallel calls
   * added together, another client's assistant message with text and tool calls) loses only its
   * last tool call: it is deleted and appended again without it, as python/mnemo/agents.py's
   * pop_item does. */
  async popItem(): Promise<AgentInputItem | undefined> {
    return (await this.#session()).use(async (id) => {
      const [last] = await this.#newest(id, 1);
      if (!last) return undefined;
      const items = storedToItems([last]);
      await this.client.messageDelete(id, last.id);
      if (items.length > 1 && last.role === 'assistant' && last.tool_calls?.length) {
        await this.client.append(id, { messages: [withoutLastCall(last)] });
      }
      return items.at(-1) as AgentInputItem;
    });
  }

  /** Deletes the session; the id stays, and the next write starts it again (in `namespace`). */
  async clearSession(): Promise<void> {
    await (await this.#session()).delete();
  }

  async #newest(id: string, limit: number): Promise<Message[]> {
    if (limit <= PAGE) return (await this.client.history(id, { tail: true, limit })).messages;
    const all = await this.#all(id);
    return all.slice(-limit);
  }

  async #all(id: string): Promise<Message[]> {
    const out: Message[] = [];
    let after = 0;
    for (;;) {
      const page = await this.client.history(id, { after, limit: PAGE });
      out.push(...page.messages);
      if (!page.has_more || page.next_after == null) return out;
      after = page.next_after;
    }
  }
}

/** A stored assistant message as a message to append again, less its last tool call and that
 * call's item (python/mnemo/agents.py _without_last_call: the same stored result). */
function withoutLastCall(m: Message): MessageInput {
  const out: MessageInput = { role: m.role, content: m.content };
  const calls = (m.tool_calls ?? []).slice(0, -1);
  if (calls.length) out.tool_calls = calls;
  if (m.name != null) out.name = m.name;
  if (m.tool_name != null) out.tool_name = m.tool_name;
  if (m.model != null) out.model = m.model;
  if (m.files?.length) out.files = m.files;
  const { [CALLS_KEY]: group, ...metadata } = m.metadata ?? {};
  if (Array.isArray(group) && group.length === m.tool_calls?.length) {
    const rest = group.slice(0, -1);
    if (rest.length === 1) metadata[ITEM_KEY] = rest[0];
    else metadata[CALLS_KEY] = rest;
  }
  if (Object.keys(metadata).length) out.metadata = metadata;
  if (m.pinned) out.pinned = true;
  return out;
}
