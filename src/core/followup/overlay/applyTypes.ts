// What accepting an overlay works with and answers: the conflicts it reports, its result, the hooks a
// checkpoint and the tests take, its input, and the error that names what it did apply.
import type { ApplyFs } from './applyFs';
import type { FileExpectation } from './applyJournal';
import type { OverlayEntry } from './entries';

export type ConflictReason =
  /** The real file changed after the speculation read (or saw) it. */
  | 'modified'
  /** The real file was deleted after the speculation read (or saw) it. */
  | 'deleted'
  /** A file appeared in the workspace where the speculation saw none and creates one. */
  | 'created'
  /** The path now leads outside the workspace (e.g. a folder was swapped for a symlink). */
  | 'outside-workspace'
  /** The path now resolves elsewhere inside the workspace through a symlink. */
  | 'path-changed'
  /** Something other than a file (a folder) is at the path now. */
  | 'not-a-file'
  /** A file sits where one of the path's folders should be. */
  | 'blocked'
  /** The real file (or the folder it goes into) was made read-only; it is never silently rewritten. */
  | 'read-only'
  /** The real file belongs to another user or group, which a replacement could not keep. */
  | 'foreign-owner';

export interface Conflict {
  /** Workspace-relative POSIX path. */
  path: string;
  reason: ConflictReason;
  /** Says what happened and what the user can do; never mentions the overlay's location. */
  message: string;
  /** Whether forcing this file (Overwrite) is possible; false for unsafe paths. */
  canOverwrite: boolean;
}

export interface OverlayApplyResult {
  /** Paths whose real file now holds the speculation's version (or is deleted as it asked). */
  applied: string[];
  /** Paths left untouched; the caller decides (overwrite with force, or keep the user's file). */
  conflicts: Conflict[];
}

/** Observes progress; a throw from it stops the accept on the spot, like a crash (tests only). */
export type ApplyStepHook = (event: { phase: 'staged' | 'logged' | 'committed'; path: string; index: number }) => void;

/** One file the accept is about to replace or delete, as its journal knows it. */
export interface ReplaceStep {
  path: string;
  action: 'write' | 'delete';
  /** What the real file held at the check (the journal's expectation). */
  expect: FileExpectation;
  /** What it will hold: the speculation's content, or absent for a deletion. */
  after: { exists: false } | { exists: true; sha256: string; size: number; mode: number | undefined };
}

/**
 * Runs before the first file is replaced (a checkpoint saves what is replaced), beside the staging
 * of the temps; the commit waits for it. A throw stops the accept with nothing changed; `refused`
 * paths (their state could not be saved) are left as they are, as conflicts.
 */
export type BeforeReplaceHook = (plan: {
  steps: ReplaceStep[];
  createdDirs: readonly string[];
  removedDirs: readonly string[];
  /** The accept commits with a redo log: save without fsync and hand back what the log must hold. */
  unsynced?: boolean;
}) => Promise<{ refused?: readonly string[]; deferred?: DeferredSave } | void>;

/** What a save made without fsync puts into the redo log, and how it is made durable after Tab. */
export interface DeferredSave {
  meta: unknown;
  chunks: Uint8Array[];
  sync(): Promise<void>;
}

export interface ApplyInput {
  root: string;
  overlayId: string;
  overlayDir: string;
  entries: ReadonlyMap<string, OverlayEntry>;
  /** Folders the overlay deleted; emptied ones are removed after the files. */
  deletedDirs: readonly string[];
  blobPath(blob: string): string;
  overwrite: ReadonlySet<string>;
  fs: ApplyFs;
  onStep?: ApplyStepHook;
  beforeReplace?: BeforeReplaceHook;
  /**
   * The state folder the accept's redo log goes in: then one fsync of the log is the commit point,
   * temps are renamed without fsync and flushed after the result is on screen. Without it the
   * journal in the overlay folder and a fsync per temp are used (nothing durable to keep a log in).
   */
  redoDir?: string;
  /** The process named in the redo log (recovery leaves a live one's log alone); this one by default. */
  pid?: number;
}

/** An accept that could not finish; names the files and says what did get applied. */
export class OverlayApplyError extends Error {
  constructor(
    message: string,
    /** The first file that failed. */
    readonly path: string,
    readonly applied: string[],
    readonly failed: { path: string; code: string }[],
    readonly conflicts: Conflict[],
    /**
     * True when the workspace itself refused (disk full, read-only disk, permission): running the
     * request live would meet the same wall, so it must not start without the user's consent.
     */
    readonly liveWouldFail = false,
  ) {
    super(message);
    this.name = 'OverlayApplyError';
  }
}

/** Whose disk failed: the workspace's, the overlay's (temp folder), or the state folder holding the redo log. */
export type StorageSide = 'workspace' | 'overlay' | 'state';

/**
 * How many files are checked or staged at once: enough to keep libuv's thread pool (4 threads)
 * busy. Measured from 4 to 256 in bench engine-accept: no gain above this, as the file system's
 * journal commits (one per new temp's fsync) are the limit, not the number of calls in flight.
 */
export const CONCURRENCY = 16;

/** A per-file failure carried out of the worker pool with the file it belongs to. */
export class StepFailure extends Error {
  constructor(readonly path: string, override readonly cause: unknown, readonly side: StorageSide = 'workspace') {
    super(path);
  }
}
