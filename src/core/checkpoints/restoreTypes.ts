// What an undo or redo of a checkpoint works with and answers: the items it brings back, the
// conflicts it reports (in words, with whether they can be forced), its outcome and its errors.
import type { CheckpointStat } from './checkpointFs';
import type { FileState } from './fileState';

export type Direction = 'undo' | 'redo';

export type RestoreConflictReason =
  /** Changed since (the content differs from what the change — or the undo — left). */
  | 'modified'
  /** Deleted since. */
  | 'deleted'
  /** Created again since (the change had deleted it). */
  | 'created'
  /** A folder or a link is at the path now. */
  | 'not-a-file'
  /** The path now leads outside the workspace through a symlink. */
  | 'outside-workspace'
  /** The path now resolves elsewhere inside the workspace. */
  | 'path-changed'
  /** A file is where one of the path's folders should be. */
  | 'blocked'
  /** The saved copy is missing or damaged. */
  | 'unavailable';

export interface RestoreConflict {
  path: string;
  reason: RestoreConflictReason;
  /** Says what happened and what the user can do. */
  message: string;
  /** Whether Restore (force) can take it anyway; false for unsafe paths and lost copies. */
  canForce: boolean;
}

export type RestoreFailure = {
  ok: false;
  reason: 'unknown' | 'malformed' | 'already-undone' | 'not-undone' | 'recording' | 'busy' | 'workspace-gone';
  message: string;
};

export type RestoreOutcome = { ok: true; restored: string[]; conflicts: RestoreConflict[] } | RestoreFailure;

export type RestorePlan = { ok: true; restorable: string[]; conflicts: RestoreConflict[] } | RestoreFailure;

export interface RestoreOptions {
  /** true = every conflict that can be forced; a list = those paths only. */
  force?: boolean | readonly string[];
  /** Paths to leave as they are (kept, like a conflict the user answered with Keep mine). */
  keep?: readonly string[];
}

/** One path to bring from `expect` (what should be there now) to `target`. */
export interface Item {
  path: string;
  expect: FileState;
  target: FileState;
}

export interface Evaluated {
  item: Item;
  /** What is there now. */
  current: FileState;
  data: Uint8Array | undefined;
  seen: CheckpointStat | undefined;
  /** Folders to create for a write. */
  missing: string[];
  /** The bytes to put back, when the evaluation read them (the redo-log commit). */
  targetData?: Uint8Array;
  /** The mode of the stored copy `targetData` was read from; none when it came from memory. */
  targetStoredMode?: number;
}

export function sinceWords(direction: Direction): string {
  return direction === 'undo' ? 'after this change was made' : 'after it was undone';
}

export function conflictOf(file: string, reason: RestoreConflictReason, direction: Direction): RestoreConflict {
  const since = sinceWords(direction);
  const messages: Record<RestoreConflictReason, string> = {
    modified: `"${file}" was changed ${since}; your version was kept. Compare the two, then choose Restore or Keep mine.`,
    deleted: `"${file}" was deleted ${since}; it was not brought back. Choose Restore to bring it back, or Keep mine to leave it deleted.`,
    created: `"${file}" was created again ${since}; your file was kept. Compare the two, then choose Restore or Keep mine.`,
    'not-a-file': `"${file}" is a folder or a link now; it was left as it is. Move it away, then undo again.`,
    'outside-workspace': `"${file}" now leads outside the workspace (a folder on its path became a symlink); it was not touched.`,
    'path-changed': `"${file}" now leads somewhere else through a symlink; it was not touched.`,
    blocked: `A file is in the way of one of the folders of "${file}"; it was not restored. Move that file away, then undo again.`,
    unavailable: `Speculate's saved copy of "${file}" is missing or damaged; the file was not touched.`,
  };
  const canForce = reason === 'modified' || reason === 'deleted' || reason === 'created';
  return { path: file, reason, message: messages[reason], canForce };
}

/** Paths checked, saved and staged at once. */
export const CONCURRENCY = 8;

/** A disk failure while staging, carried out of the worker pool with the file it belongs to. */
export class StageFailure extends Error {
  constructor(readonly path: string, override readonly cause: unknown) {
    super(path);
  }
}

/** Raised when the disk refused the restore; names the file and says what was restored. */
export class RestoreError extends Error {
  constructor(message: string, readonly path: string, readonly restored: string[]) {
    super(message);
    this.name = 'RestoreError';
  }
}

export type JournalRecovery = { checkpointId: string; outcome: 'rolled-back' | 'rolled-forward' | 'abandoned'; restored: string[] };
