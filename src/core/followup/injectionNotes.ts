// The notes speculated turns carry into the main conversation when Tab applied less than the run
// wrote: files the user kept their own version of, left out, or trimmed hunk by hunk, marked on the
// results of the calls that wrote them, so the history stays honest about what happened.
import type { ChatMessage, ToolMessage } from '../messages';
import { droppedHunksNote, type DroppedHunks } from './hunkDrops';

/**
 * The speculated messages (paired) with their notes for the main conversation. Files the user kept
 * their own version of (`notApplied`) or left out before Tab (`excluded`), and hunks dropped
 * before Tab, are marked on the results of the calls that wrote them, so the history stays
 * honest about what happened.
 */
export function notedForInjection(
  messages: ChatMessage[],
  filesChangedBy: ReadonlyMap<string, readonly string[]>,
  droppedHunks: readonly DroppedHunks[],
  notApplied: readonly string[],
  excluded: readonly string[],
): ChatMessage[] {
  const kept = new Set(notApplied);
  const left = new Set(excluded);
  // A file not applied at all says so; its dropped hunks would be noise.
  const dropped = droppedHunks.filter((entry) => !kept.has(entry.path) && !left.has(entry.path));
  if (notApplied.length === 0 && excluded.length === 0 && dropped.length === 0) return messages;
  const droppedNoted = new Set<string>();
  const noted = messages.map((message) => {
    if (message.role !== 'tool') return message;
    const written = filesChangedBy.get(message.tool_call_id) ?? [];
    const notes: string[] = [];
    const keptHere = written.filter((file) => kept.has(file));
    const leftHere = written.filter((file) => left.has(file));
    if (keptHere.length > 0) notes.push(`(Note: not applied — the user kept their own version of ${keptHere.join(', ')}.)`);
    if (leftHere.length > 0) notes.push(`(Note: not applied — the user left ${leftHere.join(', ')} out when accepting.)`);
    for (const entry of dropped) {
      if (!written.includes(entry.path)) continue;
      notes.push(droppedHunksNote(entry));
      droppedNoted.add(entry.path);
    }
    return notes.length === 0 ? message : { ...message, content: `${message.content}\n${notes.join('\n')}` };
  });
  // A file whose writer is not known (a sandboxed command's change): the last result carries the note.
  const unnoted = dropped.filter((entry) => !droppedNoted.has(entry.path));
  const last = noted.map((message) => message.role).lastIndexOf('tool');
  if (unnoted.length > 0 && last >= 0) {
    const message = noted[last] as ToolMessage;
    noted[last] = { ...message, content: `${message.content}\n${unnoted.map(droppedHunksNote).join('\n')}` };
  }
  return noted;
}
