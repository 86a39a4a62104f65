// Tool-call / tool-result pairing: before speculated messages join the main conversation, every
// tool call must have exactly one result right after its assistant message, and no result may dangle.
import type { AssistantMessage, ChatMessage, ToolMessage } from './index';

/**
 * Returns a repaired copy: tool calls without a result are removed from their assistant message,
 * results without a call (or duplicates) are dropped, and an assistant message left with neither
 * text nor calls is dropped. Never adds invented results.
 */
export function ensureToolResultPairing(messages: readonly ChatMessage[]): ChatMessage[] {
  const repaired: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message.role === 'tool') continue; // kept only when claimed by the assistant message before it
    if (message.role !== 'assistant' || !message.tool_calls || message.tool_calls.length === 0) {
      repaired.push(structuredClone(message));
      continue;
    }
    const results = new Map<string, ToolMessage>();
    let j = i + 1;
    for (; j < messages.length && messages[j].role === 'tool'; j++) {
      const result = messages[j] as ToolMessage;
      if (!results.has(result.tool_call_id)) results.set(result.tool_call_id, result);
    }
    const calls = message.tool_calls.filter((call) => results.has(call.id));
    // Everything else the message carries stays, in its place (reasoning_content must go back to
    // the servers that need it; the validity check compares the JSON).
    const assistant: AssistantMessage = structuredClone(message);
    if (calls.length > 0) assistant.tool_calls = structuredClone(calls);
    else delete assistant.tool_calls;
    if (calls.length > 0 || (assistant.content !== null && assistant.content !== '')) {
      repaired.push(assistant);
      for (const call of calls) repaired.push(structuredClone(results.get(call.id)!));
    }
    i = j - 1;
  }
  return repaired;
}

/** True when the messages need no repair: what ensureToolResultPairing would return unchanged. */
export function isToolResultPairingValid(messages: readonly ChatMessage[]): boolean {
  return JSON.stringify(ensureToolResultPairing(messages)) === JSON.stringify(messages);
}
