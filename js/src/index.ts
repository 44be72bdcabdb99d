// index.ts — @mnemo/client: the typed client of `mnemo serve` and its errors. The framework
// adapters are subpaths: @mnemo/client/agents (OpenAI Agents SDK), @mnemo/client/langchain,
// @mnemo/client/langgraph (a LangGraph.js checkpointer).
export { MnemoClient, retryDelayMs, type ClientOptions } from './client.js';
export * from './errors.js';
export * from './generated.js';
export type * from './types.js';
