// Transcript items from stored messages (an accepted speculation's turns, a chat without its view),
// and the clipping of tool results the chat shows. Pure (no vscode import).
import type { ToolCallStatus as CoreToolStatus } from '../../core/chat/events';
import { userTextOf } from '../../core/context/attachments';
import type { ToolCallRecord } from '../../core/followup/speculation';
import type { ChatMessage } from '../../core/messages';
import type { ToolCallStatusView, ToolCallView, TranscriptItem } from '../../shared/protocol';

const MAX_RESULT_CHARS = 20_000;
export function clip(text: string): string {
  return text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}\n… (${text.length - MAX_RESULT_CHARS} more characters)` : text;
}

export function viewStatus(status: CoreToolStatus): ToolCallStatusView {
  // The webview shows every core status; the two lists are kept equal on purpose.
  return status;
}

/**
 * Rebuilds transcript items from messages (an accepted speculation's turns, or a stored chat without
 * its view). `onUser` learns which message each user item stands for, by its index in `messages`.
 */
export function itemsFromMessages(
  messages: readonly ChatMessage[],
  records: readonly ToolCallRecord[],
  nextId: () => string,
  speculated: boolean,
  onUser?: (itemId: string, messageIndex: number) => void,
): TranscriptItem[] {
  const byId = new Map(records.map((record) => [record.id, record]));
  const results = new Map<string, string>();
  for (const message of messages) if (message.role === 'tool') results.set(message.tool_call_id, message.content);
  const items: TranscriptItem[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role === 'user') {
      const id = nextId();
      items.push({ kind: 'user', id, text: userTextOf(message.content), ...(speculated ? { speculated } : {}) });
      onUser?.(id, index);
    }
    if (message.role !== 'assistant') continue;
    if (message.content) items.push({ kind: 'assistant', id: nextId(), text: message.content, speculated });
    if (message.tool_calls && message.tool_calls.length > 0) {
      const calls: ToolCallView[] = message.tool_calls.map((call) => {
        const record = byId.get(call.id);
        const result = results.get(call.id);
        return {
          callId: call.id,
          tool: call.function.name,
          summary: record?.summary || call.function.name,
          status: record?.ok === false ? 'error' : 'ok',
          ...(result !== undefined ? { result: clip(result) } : {}),
          ...(record?.sandboxed ? { sandbox: { writable: record.sandboxed.writable, changed: [...record.sandboxed.changed] } } : {}),
        };
      });
      items.push({ kind: 'toolGroup', id: nextId(), calls, done: true, ...(speculated ? { speculated } : {}) });
    }
  }
  return items;
}
