// The speculation's status line for the chat: words for every state (why it stopped, in the user's
// words), counts of what it ran and wrote, never overlay paths. Pure (no vscode import).
import type { SpeculationSnapshot } from '../../core/followup/speculation';
import type { SpeculationStatusView } from '../../shared/protocol';
import { boundarySentence } from './boundaryWords';

/** The speculation status line: words for every state, never overlay paths. */
export function speculationStatusOf(snapshot: SpeculationSnapshot | null, suggestionId?: string): SpeculationStatusView {
  if (!snapshot) return { state: 'idle', toolCalls: 0, filesWritten: [] };
  const base = {
    toolCalls: snapshot.toolCalls.filter((call) => call.executed).length,
    filesWritten: snapshot.filesWritten.map((file) => file.path),
    ...(suggestionId ? { suggestionId } : {}),
    ...(snapshot.commitAhead ? { commitAhead: { moves: snapshot.commitAhead.moves, log: snapshot.commitAhead.log, note: snapshot.commitAhead.note } } : {}),
  };
  switch (snapshot.status) {
    case 'running':
      return { state: 'running', ...base };
    case 'completed':
      return { state: 'ready', ...base };
    case 'boundary': {
      const boundary = snapshot.boundary ?? { type: 'limit' as const, tool: '', detail: 'stopped' };
      const record = snapshot.toolCalls.find((call) => call.decision === 'boundary');
      return {
        state: 'boundary',
        ...base,
        boundary: { type: boundary.type, tool: boundary.tool, detail: boundary.detail, text: boundarySentence(boundary, record, base.toolCalls) },
      };
    }
    case 'failed':
      return { state: 'failed', ...base, error: snapshot.errorReason ?? snapshot.error ?? 'failed' };
    case 'aborted':
      return { state: 'idle', toolCalls: 0, filesWritten: [] };
  }
}
