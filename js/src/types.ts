// types.ts — the shapes the operation table declares only as `object`: sessions, messages,
// search hits, events and summaries as the server returns them (the CLI's --json shapes,
// docs/cli.md and docs/http-api.md). The generator (scripts/generate.mjs) refers to them.

/** An OpenAI-style tool call, as stored on an assistant message. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** A message to append (`append`, one or each of `messages`). */
export interface MessageInput {
  role: Role;
  content?: string | null;
  /** assistant only: OpenAI tool calls */
  tool_calls?: ToolCall[];
  /** required for role tool */
  tool_call_id?: string;
  name?: string;
  /** the agent tool that produced it */
  tool_name?: string;
  model?: string;
  files?: string[];
  metadata?: Record<string, unknown>;
  pinned?: boolean;
  /** a retry with the same key stores nothing new */
  idempotency_key?: string;
}

/** A stored message. */
export interface Message {
  id: number;
  session_id: string;
  seq: number;
  role: Role;
  content: string | null;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  name: string | null;
  tool_name: string | null;
  model: string | null;
  files: string[] | null;
  metadata: Record<string, unknown>;
  idempotency_key: string | null;
  tokens: number;
  pinned: boolean;
  created_at: number;
  /** false past the session's turn limit */
  active: boolean;
}

/** A session (a thread when it has a tool name or a TTL). */
export interface Session {
  id: string;
  namespace: string;
  title: string | null;
  system_prompt?: string | null;
  metadata: Record<string, unknown>;
  parent_id?: string | null;
  created_at: number;
  updated_at: number;
  message_count?: number;
  ttl_ms: number;
  max_turns: number;
  turn_count: number;
  [field: string]: unknown;
}

/** A message of a built context (format openai): what to send to the model. */
export interface ContextMessage {
  role: Role | string;
  content: string | null | unknown[];
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  [field: string]: unknown;
}

/** One search hit, best first (`mnemo search --json`). */
export interface SearchHit {
  rank: number;
  score: number;
  /** cosine similarity (semantic, hybrid) */
  similarity: number;
  bm25: number;
  semantic_rank: number;
  keyword_rank: number;
  namespace: string;
  message: Message;
}

/** A session event (compaction, summariser failure, fallback). */
export interface SessionEvent {
  id: number;
  kind: string;
  created_at: number;
  data: Record<string, unknown>;
}

/** The session's global summary. */
export interface Summary {
  id: number;
  session_id: string;
  covers_upto: number;
  folded: number;
  text: string;
  tokens: number;
  model: string | null;
  summarizer: string;
  created_at: number;
}
