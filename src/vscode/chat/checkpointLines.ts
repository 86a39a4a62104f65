// The checkpoints in the chat: the line at each turn's end with its Undo / Redo / Changes, updated
// when a checkpoint is undone or redone, and the block of files an undo found changed since.
import type { CheckpointSummary, RestoreConflict } from '../../core/checkpoints';
import type { TranscriptItem, UndoConflictResolution, UndoDirection } from '../../shared/protocol';
import { checkpointView, undoConflictFiles } from '../checkpoints/checkpointViews';
import type { TranscriptModel } from './transcriptModel';

export class CheckpointLines {
  constructor(private readonly model: TranscriptModel) {}

  /** The line at the end of a live turn or an accept. */
  turnEnd(text: string, checkpoint: CheckpointSummary | null, historyLength: number, speculated: boolean): void {
    const item: TranscriptItem = {
      kind: 'turnEnd',
      id: this.model.nextId('t'),
      text,
      historyLength,
      ...(checkpoint ? { checkpoint: checkpointView(checkpoint) } : {}),
      ...(speculated ? { speculated } : {}),
    };
    this.model.append([item]);
  }

  /** A checkpoint was undone or redone: every line that shows it says so. */
  changed(summary: CheckpointSummary): void {
    const view = checkpointView(summary);
    for (const item of this.model.items) if (item.kind === 'turnEnd' && item.checkpoint?.checkpointId === view.checkpointId) item.checkpoint = view;
    this.model.post({ type: 'checkpointUpdate', checkpoint: view });
  }

  /**
   * The checkpoints of the lines after the item `itemId` (a turn-end line for Restore to here, a
   * user message for Edit & resend) that are not undone, newest first.
   */
  checkpointsAfter(itemId: string): string[] {
    const items = this.model.items;
    const at = items.findIndex((t) => t.id === itemId && (t.kind === 'turnEnd' || t.kind === 'user'));
    if (at < 0) return [];
    const later = items.slice(at + 1).flatMap((t) => (t.kind === 'turnEnd' && t.checkpoint?.state === 'applied' ? [t.checkpoint.checkpointId] : []));
    return [...new Set(later)].reverse();
  }

  /** Shows the files an undo (or redo) found changed since; returns the block's id. */
  undoConflicts(checkpointId: string, direction: UndoDirection, conflicts: readonly RestoreConflict[]): string {
    const id = this.model.nextId('uc');
    this.model.append([{ kind: 'undoConflicts', id, checkpointId, direction, files: undoConflictFiles(conflicts) }]);
    return id;
  }

  undoConflictResolved(id: string, path: string, resolution: UndoConflictResolution): void {
    const file = this.model.find('undoConflicts', id)?.files.find((f) => f.path === path);
    if (!file) return;
    file.resolution = resolution;
    this.model.post({ type: 'undoConflictResolved', id, path, resolution });
  }
}
