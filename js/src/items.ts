// items.ts — Responses input items (the OpenAI Agents SDK's AgentInputItem shape) to mnemo
// messages and back. A message item is a message of its role; a function_call is an assistant
// message with one tool call, consecutive ones (parallel calls) one assistant message with all
// of them; a function_call_result (function_call_output on the wire) is a tool message answering
// it; any other item type is an empty assistant message. Every item is also kept as it came in
// the message's metadata under "agents_item" (a group of calls: "agents_items") and returned from
// there, so a round trip loses nothing (ids, providerData, reasoning); messages other clients
// wrote, and the messages of a built context, are turned into items from their fields.
import type { ContextMessage, Message, MessageInput, ToolCall } from './types.js';

export const ITEM_KEY = 'agents_item';
/** The function_call items of one assistant message holding several calls (the Python session
 * stores parallel calls so, which the context keeps whole). */
export const CALLS_KEY = 'agents_items';

/** A Responses input item, as loose as the SDK's union (its fields are checked where used). */
export type InputItem = { type?: string; role?: string; [field: string]: unknown };

/** The text of a content value: a string, a text part, or the text of its parts (text, refusal);
 * anything else as JSON. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content && typeof content === 'object' && typeof (content as { text?: unknown }).text === 'string') {
    return (content as { text: string }).text; // one text part ({type: 'text', text})
  }
  if (!Array.isArray(content)) return content == null ? '' : JSON.stringify(content);
  return content
    .map((p) => (p && typeof p === 'object' ? (p.text ?? p.refusal ?? '') : typeof p === 'string' ? p : ''))
    .filter((t) => typeof t === 'string')
    .join('');
}

/** One item as the message to append. */
export function itemToMessage(item: InputItem): MessageInput {
  const metadata = { [ITEM_KEY]: item };
  const type = item.type ?? 'message';
  if (type === 'message') {
    const role = item.role === 'developer' ? 'system' : item.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'system') {
      return { role: 'assistant', content: '', metadata };
    }
    return { role, content: contentText(item.content), metadata };
  }
  if (type === 'function_call') {
    const call: ToolCall = { id: String(item.callId), type: 'function', function: { name: String(item.name), arguments: String(item.arguments ?? '') } };
    return { role: 'assistant', content: null, tool_calls: [call], metadata };
  }
  if (type === 'function_call_result') {
    return { role: 'tool', tool_call_id: String(item.callId), tool_name: item.name ? String(item.name) : undefined, content: contentText(item.output), metadata };
  }
  return { role: 'assistant', content: '', metadata };
}

/** Items as the messages to append, as python/mnemo/agents.py items_to_messages: consecutive
 * function_calls share one assistant message, because the context builder sends tool results
 * only right after the message holding all their calls. */
export function itemsToMessages(items: InputItem[]): MessageInput[] {
  const out: MessageInput[] = [];
  let calls: InputItem[] = []; // the function_calls of out.at(-1), when it holds calls
  for (const item of items) {
    const msg = itemToMessage(item);
    const isCall = item.type === 'function_call';
    if (isCall && calls.length) {
      const group = out[out.length - 1];
      group.tool_calls = [...(group.tool_calls ?? []), ...(msg.tool_calls ?? [])];
      calls.push(item);
      group.metadata = { [CALLS_KEY]: [...calls] };
      continue;
    }
    calls = isCall ? [item] : [];
    out.push(msg);
  }
  return out;
}

/** Items from chat messages (a stored message without its item, or a built context's). */
export function messagesToItems(messages: Array<ContextMessage | Message>): InputItem[] {
  const names = new Map<string, string>(); // call id -> tool name, for the results
  const items: InputItem[] = [];
  for (const m of messages) {
    const text = contentText(m.content);
    if (m.role === 'assistant') {
      if (text) items.push({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] });
      for (const c of m.tool_calls ?? []) {
        names.set(c.id, c.function.name);
        items.push({ type: 'function_call', callId: c.id, name: c.function.name, arguments: c.function.arguments, status: 'completed' });
      }
      if (!text && !m.tool_calls?.length) items.push({ type: 'message', role: 'assistant', status: 'completed', content: [] });
    } else if (m.role === 'tool') {
      const callId = String(m.tool_call_id ?? '');
      const name = (m as Message).tool_name ?? names.get(callId) ?? '';
      items.push({ type: 'function_call_result', callId, name, status: 'completed', output: text });
    } else {
      items.push({ type: 'message', role: m.role === 'system' ? 'system' : 'user', content: text });
    }
  }
  return items;
}

/** Stored messages as items: the kept item (or kept calls, one per tool call) when there is. */
export function storedToItems(messages: Message[]): InputItem[] {
  const items: InputItem[] = [];
  for (const m of messages) {
    const kept = m.metadata?.[ITEM_KEY];
    const calls = m.metadata?.[CALLS_KEY];
    if (kept && typeof kept === 'object') items.push(kept as InputItem);
    else if (Array.isArray(calls) && calls.length === (m.tool_calls?.length ?? -1) &&
             calls.every((c) => c && typeof c === 'object')) items.push(...(calls as InputItem[]));
    else items.push(...messagesToItems([m]));
  }
  return items;
}
