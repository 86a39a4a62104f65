// The chat's words and views for checkpoints: the line that ends a turn or an accept, and the files
// an undo found changed since. Pure TypeScript (no vscode import), unit-tested with the presenter.
import type { CheckpointSummary, RestoreConflict } from '../../core/checkpoints';
import type { DroppedHunks } from '../../core/followup/hunkDrops';
import type { CheckpointView, UndoConflictFile } from '../../shared/protocol';
import { speculationNoticeText } from '../../shared/protocol';

export function checkpointView(summary: CheckpointSummary): CheckpointView {
  return { checkpointId: summary.id, state: summary.state === 'undone' ? 'undone' : 'applied', files: summary.files.map((f) => ({ path: f.path, change: f.change })) };
}

/** "Changed src/a.ts", "Changed 3 files". */
export function changedText(summary: CheckpointSummary): string {
  const files = summary.files;
  return files.length === 1 ? `Changed ${files[0].path}` : `Changed ${files.length} files`;
}

/** The line after an accepted speculation: time saved, then what the user kept or left out. */
export function acceptLineText(event: { toolCalls: unknown[]; timeSavedMs: number; notApplied: string[]; excluded: string[]; continuesLive: boolean; droppedHunks?: readonly DroppedHunks[]; committedAhead?: { moved: string[]; indexNote?: string } }): string {
  const kept = event.notApplied.length > 0 ? ` · kept your version of ${event.notApplied.join(', ')}` : '';
  const left = event.excluded.length > 0 ? ` · left out ${event.excluded.join(', ')}` : '';
  const dropped = (event.droppedHunks ?? []).map((entry) => ` · left out ${entry.dropped.length} of ${entry.total} changes in ${entry.path} (${entry.dropped.join(', ')})`).join('');
  const live = event.continuesLive ? ' · continuing live' : '';
  const committed = event.committedAhead ? `${event.committedAhead.moved.length > 0 ? ` · committed ${event.committedAhead.moved.join(', ')}` : ''}${event.committedAhead.indexNote ? ` · ${event.committedAhead.indexNote}` : ''}` : '';
  return `${speculationNoticeText(event.toolCalls.length, event.timeSavedMs)}${committed}${kept}${left}${dropped}${live}`;
}

export function undoConflictFiles(conflicts: readonly RestoreConflict[]): UndoConflictFile[] {
  return conflicts.map((c) => ({ path: c.path, reason: c.message, canRestore: c.canForce }));
}
