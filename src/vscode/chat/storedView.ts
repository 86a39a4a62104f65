// The presenter's picture of a chat as it is stored beside the messages (StoredChat.view), checked
// when it is read back (a stored chat is data from disk), and settled: nothing streams after a reload.
import { isTranscriptItem, type TranscriptItem } from '../../shared/protocol';

/** The presenter's picture of a chat as it is stored beside the messages (StoredChat.view). */
export interface PresenterView {
  transcript: TranscriptItem[];
  /** [user item id, index of its message in the history]. */
  userHistory: [string, number][];
  counter: number;
}

export function isPresenterView(value: unknown): value is PresenterView {
  if (typeof value !== 'object' || value === null) return false;
  const view = value as Record<string, unknown>;
  return (
    Array.isArray(view.transcript) &&
    view.transcript.every(isTranscriptItem) &&
    Array.isArray(view.userHistory) &&
    view.userHistory.every((pair) => Array.isArray(pair) && typeof pair[0] === 'string' && Number.isInteger(pair[1])) &&
    typeof view.counter === 'number' &&
    Number.isInteger(view.counter)
  );
}

/** A stored item as it shows after a reload: no stream open, every tool group finished. */
export function settled(item: TranscriptItem): TranscriptItem {
  if (item.kind === 'assistant' && item.streaming) {
    const { streaming: _streaming, ...rest } = item;
    return rest;
  }
  if (item.kind === 'toolGroup' && !item.done) return { ...item, done: true };
  return item;
}
