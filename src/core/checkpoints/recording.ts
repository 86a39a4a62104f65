// Recording one checkpoint while its change happens: each path's state before is saved (bytes in
// the blob store, then the record) and flushed to disk before the caller may replace the file.
import { toAbsolute } from '../fs/paths';
import { forEachLimited } from '../fs/pool';
import { ABSENT, sameContent, stateOf, type FileState } from './fileState';
import { isAtOrBelow, missingParents, placementProblem } from './placement';
import { newCheckpointId, summaryOf, type CheckpointFile, type CheckpointGitMoves, type CheckpointOrigin, type CheckpointRecord, type CheckpointSummary } from './record';
import type { StoreFiles } from './storeFiles';

export interface CaptureRequest {
  /** Workspace-relative path, as placed by the caller. */
  path: string;
  /** What the caller saw there; a file that holds something else now is refused, not captured. */
  expect?: FileState;
  /** What the caller will leave there, when it knows (an accept does; a tool write does not). */
  after?: FileState;
  /**
   * Save the state again even if the path was captured before: for a path the change has not
   * touched yet (an accept's conflict the user now overwrites), whose file may have changed since.
   */
  refresh?: boolean;
}

export type RefusalReason = 'changed' | 'not-a-file' | 'outside-workspace' | 'path-changed';

/** Paths read and saved at once. */
const CONCURRENCY = 8;

export interface CaptureResult {
  /** Paths whose before-state is not saved: the caller must not replace them. */
  refused: { path: string; reason: RefusalReason }[];
  /** With `unsynced`: what the caller's redo log must hold for the capture to count as saved. */
  deferred?: DeferredCapture;
}

/** What a checkpoint puts into a redo log: its record and the bytes of the blobs it wrote. */
export interface CheckpointRedoMeta {
  record: CheckpointRecord;
  /** The blobs this capture stored, in the order of `DeferredCapture.chunks`. */
  blobs: { hash: string; length: number }[];
}

/**
 * A capture written without fsync: durable only once the caller's redo log (holding `meta` and
 * `chunks`) is; `sync` makes the blobs and the record durable themselves (the log's flush).
 */
export interface DeferredCapture {
  meta: CheckpointRedoMeta;
  chunks: Uint8Array[];
  sync(): Promise<void>;
}

export interface CaptureOptions {
  /** Write blobs and record without fsync: the caller's redo log makes them durable (see DeferredCapture). */
  unsynced?: boolean;
}

/** Folders the change makes or removes, when the caller knows them (an accept's journal does). */
export interface CaptureDirs {
  /** Made for new files (removed again by undo once empty). */
  created?: readonly string[];
  /** Removed once its deletions emptied them (made again by undo). */
  removed?: readonly string[];
}

export class CheckpointRecording {
  readonly id: string;
  private readonly record: CheckpointRecord;
  private readonly captured = new Map<string, CheckpointFile>();
  private persisted = false;
  private finished = false;
  /** Captures and the finish run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: StoreFiles,
    origin: CheckpointOrigin,
  ) {
    const now = store.now();
    this.id = newCheckpointId(now);
    this.record = {
      version: 1,
      id: this.id,
      workspaceRoot: store.root,
      createdAt: now,
      origin,
      state: 'recording',
      pid: store.pid,
      files: [],
      createdDirs: [],
      removedDirs: [],
    };
  }

  /** Whether `path` already has its before-state saved in this checkpoint. */
  has(path: string): boolean {
    return this.captured.has(path);
  }

  get done(): boolean {
    return this.finished;
  }

  /**
   * Saves the before-state of every path not captured yet and makes it durable (blobs, then the
   * record) before resolving. A throw means nothing new is saved: the caller must not write.
   */
  capture(requests: readonly CaptureRequest[], dirs: CaptureDirs = {}, options: CaptureOptions = {}): Promise<CaptureResult> {
    return this.serially(() => this.captureNow(requests, dirs, options));
  }

  /**
   * Records the refs an accept moved (commit ahead), durably: the checkpoint then exists even when
   * no file changed, so Undo moves them back.
   */
  noteGit(moves: Omit<CheckpointGitMoves, 'state'>): Promise<void> {
    return this.serially(async () => {
      if (this.finished) throw new Error('This checkpoint is already finished; start a new one.');
      const next: CheckpointRecord = { ...this.record, git: { ...moves, state: 'applied' } };
      await this.store.write(next);
      this.record.git = next.git;
      this.persisted = true;
    });
  }

  /** The folder a redo log of a change recorded here belongs in: beside the checkpoint's own journals. */
  get redoDir(): string {
    return this.store.journalsDir;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async captureNow(requests: readonly CaptureRequest[], dirs: CaptureDirs, options: CaptureOptions): Promise<CaptureResult> {
    const unsynced = options.unsynced === true;
    const written: { hash: string; data: Uint8Array }[] = [];
    if (this.finished) throw new Error('This checkpoint is already finished; start a new one.');
    const store = this.store;
    const refused: CaptureResult['refused'] = [];
    const added: CheckpointFile[] = [];
    const createdDirs: string[] = [];
    // Each path on its own, a few at a time: the blobs' fsyncs dominate, and the disk batches them.
    const fresh = [...new Map(requests.map((r) => [r.path, r])).values()].filter((request) => {
      const existing = request.refresh ? undefined : this.captured.get(request.path);
      if (existing && request.after) existing.after = request.after;
      return !existing;
    });
    const outcomes: (CheckpointFile | { refused: RefusalReason } | undefined)[] = new Array(fresh.length);
    const missingBy: string[][] = fresh.map(() => []);
    await forEachLimited(fresh, CONCURRENCY, async (request, index) => {
      const problem = await placementProblem(store.root, request.path);
      if (problem) {
        outcomes[index] = { refused: problem };
        return;
      }
      const absolute = toAbsolute(store.root, request.path);
      const info = await store.fs.lstat(absolute);
      if (info && info.type !== 'file') {
        outcomes[index] = { refused: 'not-a-file' };
        return;
      }
      let before: FileState = ABSENT;
      if (info) {
        const data = await store.fs.readFile(absolute);
        before = stateOf(data, info.mode);
        if (request.expect && !sameContent(before, request.expect)) {
          outcomes[index] = { refused: 'changed' };
          return;
        }
        if (!unsynced) await store.blobs.put(data);
        else {
          const stored = await store.blobs.putUnsynced(data);
          if (stored.written) written.push({ hash: stored.hash, data });
        }
      } else if (request.expect?.exists) {
        outcomes[index] = { refused: 'changed' };
        return;
      } else {
        const missing = await missingParents(store.fs, store.root, request.path);
        if (missing !== 'blocked') missingBy[index] = missing;
      }
      outcomes[index] = { path: request.path, before, after: request.after ?? null };
    });
    for (const [index, outcome] of outcomes.entries()) {
      if (!outcome) continue;
      if ('refused' in outcome) refused.push({ path: fresh[index].path, reason: outcome.refused });
      else added.push(outcome);
      createdDirs.push(...missingBy[index]);
    }
    createdDirs.push(...(dirs.created ?? []));
    const removed = (dirs.removed ?? []).filter((dir) => !this.record.removedDirs.includes(dir));
    if (added.length === 0 && removed.length === 0 && !requests.some((r) => r.after && this.captured.has(r.path))) return { refused };
    if (!unsynced) await store.blobs.flush();
    const replaced = new Set(added.map((f) => f.path));
    const next: CheckpointRecord = {
      ...this.record,
      files: [...this.record.files.filter((f) => !replaced.has(f.path)), ...added],
      createdDirs: [...new Set([...this.record.createdDirs, ...createdDirs])],
      removedDirs: [...this.record.removedDirs, ...removed],
    };
    await store.write(next, { sync: !unsynced });
    // Only once durable (or held by the caller's log) does the recording count the paths as captured.
    Object.assign(this.record, { files: next.files, createdDirs: next.createdDirs, removedDirs: next.removedDirs });
    for (const file of added) this.captured.set(file.path, file);
    this.persisted = true;
    if (!unsynced) return { refused };
    const deferred: DeferredCapture = {
      meta: { record: next, blobs: written.map((blob) => ({ hash: blob.hash, length: blob.data.byteLength })) },
      chunks: written.map((blob) => blob.data),
      sync: async () => {
        await Promise.all(written.map((blob) => store.fs.fsyncFile(store.blobs.pathOf(blob.hash))));
        if (written.length > 0) await store.blobs.flush();
        await store.syncRecord(next.id);
      },
    };
    return { refused, deferred };
  }

  /**
   * Ends the recording: `applied` (when given) names the paths that were really changed; the
   * others are dropped. Paths whose after-state is unknown are read from the disk now. Returns
   * null when nothing changed (the record is then removed).
   */
  finish(applied?: readonly string[]): Promise<CheckpointSummary | null> {
    return this.serially(async () => {
      if (this.finished) return null;
      this.finished = true;
      if (!this.persisted) return null;
      const record = await completeRecord(this.store, this.record, applied ? new Set(applied) : undefined);
      return record ? summaryOf(record) : null;
    });
  }
}

/** The state of a path right now; undefined for something that is not a file (a folder, a symlink). */
export async function currentState(store: StoreFiles, relative: string): Promise<FileState | undefined> {
  const absolute = toAbsolute(store.root, relative);
  const info = await store.fs.lstat(absolute);
  if (!info) return ABSENT;
  if (info.type !== 'file') return undefined;
  return stateOf(await store.fs.readFile(absolute), info.mode);
}

/**
 * Turns a record still 'recording' into its final form (live finish, or recovery after a crash):
 * fills unknown after-states from the disk, drops paths that did not change, keeps only folders
 * that new files still need. Writes it as 'applied', or removes it when nothing is left.
 */
export async function completeRecord(store: StoreFiles, record: CheckpointRecord, applied: Set<string> | undefined): Promise<CheckpointRecord | undefined> {
  const files: CheckpointFile[] = [];
  for (const file of record.files) {
    if (applied && !applied.has(file.path)) continue;
    let after = file.after;
    if (!after) {
      // A tool wrote it: what is on disk now is what the change left (a folder there: nothing to keep).
      const now = await currentState(store, file.path);
      if (!now) continue;
      after = now;
    } else if (!applied) {
      // Recovery of a known change: still as before means the crash came first. Anything else keeps
      // the recorded after, so a later edit by the user is a conflict for undo, never taken as ours.
      const now = await currentState(store, file.path);
      if (now && sameContent(now, file.before)) continue;
    }
    if (after && !sameContent(file.before, after)) files.push({ path: file.path, before: file.before, after });
  }
  const created = files.filter((f) => !f.before.exists).map((f) => f.path);
  const final: CheckpointRecord = {
    ...record,
    state: 'applied',
    files,
    createdDirs: record.createdDirs.filter((dir) => created.some((file) => isAtOrBelow(dir, file))),
  };
  if (files.length === 0 && !record.git) {
    await store.remove(record.id);
    return undefined;
  }
  await store.write(final);
  return final;
}
