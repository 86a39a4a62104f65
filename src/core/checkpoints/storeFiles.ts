// What the store's parts (recording, restore, recovery, prune) work with: its folders, blobs, clock
// and records. Declared below the store, which implements it, so that no part imports the store back.
import type { BlobStore } from './blobStore';
import type { CheckpointFs } from './checkpointFs';
import type { CheckpointRecord } from './record';
import type { RedoSlots } from '../fs/redoSlots';

export interface CheckpointStoreOptions {
  /** The engine's state folder (the extension's workspace storage, or the CLI's --state-dir). */
  stateDir: string;
  /** The workspace; its realpath names the store and anchors every path. */
  workspaceRoot: string;
  fs?: CheckpointFs;
  now?: () => number;
  /** Recorded in each recording; defaults to this process. */
  pid?: number;
  /** Defaults to `process.kill(pid, 0)`; tests pass their own to play a process that died. */
  isProcessAlive?: (pid: number) => boolean;
  /**
   * How an undo commits: 'redo-log' (default: one log whose fsync is the commit point, the rest
   * flushed after) or 'journal' (each temp fsync'd, a journal rewritten at the commit point).
   */
  commitWith?: 'redo-log' | 'journal';
  /** Observes each staged and committed file of an undo; a throw acts like a crash (tests only). */
  onRestoreStep?: (event: { phase: 'staged' | 'committed'; path: string }) => void;
}

export type CheckpointReadResult =
  | { ok: true; record: CheckpointRecord }
  | { ok: false; reason: 'unknown' | 'malformed'; message: string };

export interface StoreFiles {
  /** Realpath of the workspace. */
  readonly root: string;
  /** This workspace's folder in the state folder. */
  readonly dir: string;
  readonly options: CheckpointStoreOptions;
  readonly blobs: BlobStore;
  readonly recordsDir: string;
  readonly journalsDir: string;
  readonly fs: CheckpointFs;
  readonly pid: number;
  /** The redo-log slots of the journals folder for this process (see redoSlots.ts). */
  readonly slots: RedoSlots;
  now(): number;
  processAlive(pid: number): boolean;
  read(id: string): Promise<CheckpointReadResult>;
  write(record: CheckpointRecord, options?: { sync?: boolean }): Promise<void>;
  syncRecord(id: string): Promise<void>;
  remove(id: string): Promise<void>;
  records(): Promise<CheckpointRecord[]>;
  sizeOnDisk(): Promise<number>;
}
