// agents.ts — MnemoSession, a session store of the OpenAI Agents SDK (@openai/agents `Session`)
// kept in `mnemo serve`. getItems() without a limit returns the governed context (the server's
// context operation within maxTokens) when the history does not fit as it is; getItems(limit)
// returns the newest `limit` stored items. Items map to messages as items.ts says.
import type { AgentInputItem, Session } from '@openai/agents';
import { MnemoClient, type ClientOptions } from './client.js';
import { NotFoundError } from './errors.js';
import type { ContextResult } from './generated.js';
import { itemToMessage, messagesToItems, storedToItems, type InputItem } from './items.js';
import type { Message } from './types.js';

export interface MnemoSessionOptions extends ClientOptions {
  /** an existing session's UUID, or one to create on the first write; none: a new session */
  sessionId?: string;
  /** the token budget of getItems() (default: the server's memory.max_history_tokens) */
  maxTokens?: number;
  /** the context strategy of getItems() (default: the server's memory.strategy) */
  strategy?: string;
  /** the namespace of a session this creates */
  namespace?: string;
  /** a client to share (else one is made from the options) */
  client?: MnemoClient;
}

const PAGE = 10_000; // the history operation's largest page

/** Whether a built context differs from the stored history (something dropped, folded, trimmed). */
export function isGoverned(ctx: ContextResult): boolean {
  const r = ctx.report as {
    messages?: { dropped?: number }; parts?: { system?: number }; summary?: unknown;
    governance?: { tool_outputs?: { trimmed?: number; offloaded?: number } };
  };
  const t = r.governance?.tool_outputs;
  return Boolean((r.messages?.dropped ?? 0) > 0 || (r.parts?.system ?? 0) > 0 || r.summary || (t?.trimmed ?? 0) > 0 || (t?.offloaded ?? 0) > 0);
}

export class MnemoSession implements Session {
  readonly client: MnemoClient;
  readonly maxTokens: number | undefined;
  readonly strategy: string | undefined;
  readonly #namespace: string | undefined;
  #sessionId: Promise<string> | undefined;

  constructor(options: MnemoSessionOptions = {}) {
    this.client = options.client ?? new MnemoClient(options);
    this.maxTokens = options.maxTokens;
    this.strategy = options.strategy;
    this.#namespace = options.namespace;
    if (options.sessionId) this.#sessionId = Promise.resolve(options.sessionId);
  }

  /** The session's id; the first call creates the session when none was given. */
  getSessionId(): Promise<string> {
    this.#sessionId ??= this.client.sessionCreate({ namespace: this.#namespace }).then((r) => r.session.id);
    return this.#sessionId;
  }

  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const id = await this.getSessionId();
    try {
      if (limit !== undefined) {
        if (limit <= 0) return [];
        return storedToItems(await this.#newest(id, limit)) as AgentInputItem[];
      }
      const ctx = await this.client.context(id, { max_tokens: this.maxTokens, strategy: this.strategy });
      if (isGoverned(ctx)) return messagesToItems(ctx.messages ?? []) as AgentInputItem[];
      return storedToItems(await this.#all(id)) as AgentInputItem[];
    } catch (e) {
      if (e instanceof NotFoundError) return []; // not written yet
      throw e;
    }
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const id = await this.getSessionId();
    await this.client.append(id, { create: true, messages: items.map((i) => itemToMessage(i as InputItem)) });
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const id = await this.getSessionId();
    try {
      const [last] = await this.#newest(id, 1);
      if (!last) return undefined;
      await this.client.messageDelete(id, last.id);
      return storedToItems([last])[0] as AgentInputItem;
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  }

  /** Deletes the session's messages; the id stays, and the next write starts it again. */
  async clearSession(): Promise<void> {
    const id = await this.getSessionId();
    try {
      await this.client.sessionDelete(id);
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
    }
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
