// The copy-on-write overlay a speculation writes into: a WorkspaceFs over the real one whose writes
// land in `<tmp>/speculate-<uid>/<pid>/<id>/` and whose reads, listings and searches show the merged view.
import { rm, rmdir } from 'node:fs/promises';
import * as path from 'node:path';
import type { Placement, Placer } from '../fs/paths';
import { protectedPathsOr, ProtectedPathError } from '../fs/protectedPaths';
import { comparePaths } from '../fs/treeWalk';
import {
  FileNotFoundError,
  type DirEntry,
  type FileStat,
  type GlobOptions,
  type SearchMatch,
  type SearchOptions,
  type WorkspaceFs,
  type WriteOptions,
} from '../fs/workspaceFs';
import { processLock, type WorkspaceLock } from '../fs/workspaceLock';
import { flushed } from '../fs/pendingFlush';
import { nodeApplyFs, type ApplyFs } from './overlay/applyFs';
import { applyEntries, findConflicts, OverlayApplyError, type OverlayApplyResult, type BeforeReplaceHook, type Conflict } from './overlay/applyOverlay';
import type { PendingBlob } from './overlay/blobs';
import { BlobBook } from './overlay/blobBook';
import { digestOf } from './overlay/digest';
import { isAtOrBelow, isBelow, kindOf, type OverlayEntry, type WrittenEntry, type WrittenKind } from './overlay/entries';
import { MergedView, NEW_FILE_MODE } from './overlay/mergedView';
export { SANDBOX_CLOCK_SLACK_MS } from './overlay/mergedView';
import { codeOf, OverlayDiscardedError, OverlayStorageError } from './overlay/overlayErrors';
import { globMerged, searchMerged } from './overlay/overlaySearch';
import type { OverlayFsOptions } from './overlay/overlayOptions';
import { makeOverlayFolder } from './overlay/overlayFolder';
import { ReadWriteLock } from './overlay/readWriteLock';
import { sandboxLayerOf, takeSandboxChanges } from './overlay/sandboxExchange';
import { redoSlotsFor } from '../fs/redoSlots';
import type { SandboxChange, SandboxLayer } from '../sandbox/shellSandbox';

export { OverlayApplyError, type OverlayApplyResult, type ApplyStepHook, type BeforeReplaceHook, type Conflict, type ConflictReason, type ReplaceStep } from './overlay/applyOverlay';
export { cleanupStaleOverlays, isProcessAlive, recoverInterruptedApplies, type HousekeepingOptions, type RecoveryOutcome, type StaleCleanupReport } from './overlay/recovery';
export type { ApplyFs } from './overlay/applyFs';
export type { WrittenKind } from './overlay/entries';
export type { OverlayFsOptions } from './overlay/overlayOptions';
export { OverlayDiscardedError, OverlayStorageError } from './overlay/overlayErrors';


export interface WrittenFile {
  path: string;
  kind: WrittenKind;
}

export interface Disposable {
  dispose(): void;
}

/**
 * A WorkspaceFs whose writes stay in a private overlay folder until accepted. `root` and every
 * path it takes or returns are the real workspace's: tools run against it unchanged, and no overlay
 * path reaches the model, the history, or the UI.
 */
export class OverlayFs implements WorkspaceFs {
  readonly root: string;
  /** The speculation's changes and what it saw of the real files: reads, listings and the accept's bases. */
  private readonly view: MergedView;
  private readonly listeners = new Set<(paths: string[]) => void>();
  private readonly lock = new ReadWriteLock();
  /** Shared with every accept and live write into this workspace (see OverlayFsOptions.lock). */
  private readonly workspaceLock: WorkspaceLock;
  /** The workspace's writer lock, for an accept's other writes (commit ahead's refs) to hold the same. */
  get writerLock(): WorkspaceLock {
    return this.workspaceLock;
  }
  private readonly applyFs: ApplyFs;
  /** The blob files of its writes: numbered, stored, and dropped when nothing refers to them. */
  private readonly blobs: BlobBook;
  private discarded = false;

  private constructor(
    private readonly base: WorkspaceFs & Placer,
    readonly id: string,
    /** The overlay folder; for the engine's own use, never to be shown. */
    readonly dir: string,
    private readonly options: OverlayFsOptions,
  ) {
    this.root = base.root;
    this.applyFs = options.applyFs ?? nodeApplyFs;
    this.workspaceLock = options.lock ?? processLock(base.root);
    this.view = new MergedView(base, dir, this.applyFs, options.clock);
    this.blobs = new BlobBook((blob) => this.view.blobPath(blob));
  }

  static async create(options: OverlayFsOptions): Promise<OverlayFs> {
    const { id, dir } = await makeOverlayFolder(options);
    const overlay = new OverlayFs(options.base, id, dir, options);
    // The accept's redo log goes into a slot made now, while the speculation runs (redoSlots.ts).
    if (options.redoDir) void redoSlotsFor(options.redoDir, overlay.applyFs, options.pid ?? process.pid).prepare();
    return overlay;
  }

  // ---- change events and inspection -------------------------------------------------------

  /** Fires after each write, delete, rename, discard and accept with the workspace paths involved. */
  onDidChange(listener: (paths: string[]) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private emit(paths: string[]): void {
    if (paths.length === 0) return;
    const snapshot = [...new Set(paths)].sort(comparePaths);
    for (const listener of [...this.listeners]) {
      try {
        listener(snapshot);
      } catch {
        // A failing listener (UI) must not turn a successful write into a failed tool call.
      }
    }
  }

  /** Every path the speculation changed, sorted. */
  writtenFiles(): WrittenFile[] {
    return [...this.view.entries].map(([file, entry]) => ({ path: file, kind: kindOf(entry) })).sort((a, b) => comparePaths(a.path, b.path));
  }

  /** The real workspace's current content of a path (the left side of a diff); undefined when absent. */
  async readOriginal(requested: string): Promise<Uint8Array | undefined> {
    this.assertUsable();
    const file = await this.resolve(requested);
    const info = await this.base.stat(file);
    return info?.type === 'file' ? this.base.readFile(file) : undefined;
  }

  /** The conflicts an accept would report right now; writes nothing. */
  async checkConflicts(): Promise<Conflict[]> {
    return this.lock.shared(async () => {
      this.assertUsable();
      return findConflicts({ root: this.root, fs: this.applyFs }, this.view.entries);
    });
  }

  // ---- the sandbox (SANDBOX.md) ------------------------------------------------------------------

  /** What a sandboxed command must see of this speculation: the files it wrote (their blobs, to be linked) and what it deleted. */
  async sandboxLayer(): Promise<SandboxLayer> {
    return this.lock.shared(async () => {
      this.assertUsable();
      return sandboxLayerOf(this.view);
    });
  }

  /** Takes a sandboxed command's changes as ordinary overlay changes, all or nothing (sandboxExchange.ts); returns the paths changed. */
  async applySandboxChanges(changes: readonly SandboxChange[], startedAt: number): Promise<string[]> {
    return this.lock.exclusive(async () => {
      this.assertUsable();
      const changed = await takeSandboxChanges(
        {
          view: this.view,
          blobs: this.blobs,
          resolve: (requested) => this.resolve(requested),
          assertUnprotected: (file) => this.assertUnprotected(file, file),
          write: (file, data, mode, retired) => this.writeMerged(file, data, mode, retired),
          deleteFile: (file, retired) => this.deleteFileMerged(file, retired),
        },
        changes,
        startedAt,
      );
      this.emit(changed);
      return changed;
    });
  }

  // ---- WorkspaceFs --------------------------------------------------------------------------

  /** The base's symlink-aware placement: workspace paths in, workspace paths out. */
  resolve(requested: string): Promise<string> {
    return this.base.resolve(requested);
  }

  async readFile(requested: string): Promise<Uint8Array> {
    return this.lock.shared(async () => {
      this.assertUsable();
      const placed = await this.base.place(requested);
      return this.view.readMerged(placed.relative, placed);
    });
  }

  async stat(requested: string): Promise<FileStat | undefined> {
    return this.lock.shared(async () => {
      this.assertUsable();
      const placed = await this.base.place(requested);
      return this.view.statMerged(placed.relative, placed);
    });
  }

  async list(requested: string): Promise<DirEntry[]> {
    return this.lock.shared(async () => {
      this.assertUsable();
      return this.view.listMerged(await this.resolve(requested));
    });
  }

  async writeFile(requested: string, data: Uint8Array | string, options: WriteOptions = {}): Promise<void> {
    await this.lock.exclusive(async () => {
      this.assertUsable();
      options.signal?.throwIfAborted();
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      // The copy is stored while the path is placed and checked (nothing shows it until its entry
      // is set; a refused write drops it), so a write costs about what a plain one does.
      const blob = this.blobs.start(bytes, this.view.entries.get(requested));
      try {
        const placed = await this.base.place(requested);
        const file = placed.relative;
        this.assertUnprotected(requested, file);
        if (options.expect) await this.view.assertAsExpected(file, options.expect);
        await this.writeMerged(file, bytes, undefined, undefined, placed, blob);
        this.emit([file]);
      } catch (error) {
        blob.abandon();
        throw error;
      }
    });
  }

  /** Deletes a file, or a folder only when it is empty in the merged view (like the real workspace). */
  async delete(requested: string): Promise<void> {
    await this.lock.exclusive(async () => {
      this.assertUsable();
      const placed = await this.base.place(requested);
      const target = placed.relative;
      if (target === '') throw new Error('Cannot delete the workspace folder itself.');
      this.assertUnprotected(requested, target);
      const info = await this.view.statMerged(target, placed);
      if (!info) throw new FileNotFoundError(target);
      if (info.type === 'file') {
        await this.deleteFileMerged(target, undefined, placed);
      } else {
        if ((await this.view.listMerged(target)).length > 0) throw new Error(`Directory ${target} is not empty; delete the files inside it first.`);
        this.view.deletedDirs.add(target);
      }
      this.emit([target]);
    });
  }

  /**
   * Moves a file (delete old + write new with the old content and mode; each path keeps its own
   * base for the accept's checks) or a folder (each file below it). Empty folders and symlinks
   * inside a moved folder are not carried along.
   */
  async rename(from: string, to: string): Promise<void> {
    await this.lock.exclusive(async () => {
      this.assertUsable();
      const source = await this.resolve(from);
      const target = await this.resolve(to);
      if (source === '' || target === '') throw new Error('Cannot rename the workspace folder itself.');
      this.assertUnprotected(from, source);
      this.assertUnprotected(to, target);
      if (source === target) return;
      const info = await this.view.statMerged(source);
      if (!info) throw new FileNotFoundError(source);
      const existing = await this.view.statMerged(target);
      if (info.type === 'file') {
        if (existing?.type === 'directory') throw new Error(`${target} is a directory; give a file path to rename ${source} to.`);
        await this.moveFile(source, target);
        this.emit([source, target]);
        return;
      }
      if (isBelow(source, target)) throw new Error(`Cannot move ${source} into itself.`);
      if (existing?.type === 'file') throw new Error(`${target} is a file; cannot replace it with the directory ${source}.`);
      if (existing && (await this.view.listMerged(target)).length > 0) throw new Error(`Directory ${target} is not empty; cannot move ${source} onto it.`);
      const { files, dirs } = await this.view.walkMerged(source);
      // Every file that moves is a change at both ends: checked before anything moves.
      for (const file of files) {
        this.assertUnprotected(file, file);
        this.assertUnprotected(target + file.slice(source.length), target + file.slice(source.length));
      }
      const changed: string[] = [source, target];
      for (const file of files) {
        const moved = target + file.slice(source.length);
        await this.moveFile(file, moved);
        changed.push(file, moved);
      }
      for (const dir of [source, ...dirs]) if (!this.view.hasWrittenBelow(dir)) this.view.deletedDirs.add(dir);
      this.emit(changed);
    });
  }



  glob(pattern: string, options: GlobOptions = {}): Promise<string[]> {
    return this.lock.shared(async () => {
      this.assertUsable();
      return globMerged(this.view, pattern, options);
    });
  }

  /** The base's matches minus files the overlay touched, plus matches in the overlay's own files. */
  search(pattern: string, options: SearchOptions = {}): Promise<SearchMatch[]> {
    return this.lock.shared(async () => {
      this.assertUsable();
      return searchMerged(this.view, pattern, options);
    });
  }

  // ---- accept, discard, cleanup ---------------------------------------------------------------

  /**
   * Accept: writes every touched file whose real version is still the one the overlay started from
   * (or that `overwrite` names) atomically into the workspace; the others come back as conflicts and
   * stay in the overlay for the user to decide. `skip` leaves files out (Keep mine) without a report. Applied paths leave the overlay. Throws
   * OverlayApplyError (naming the files) when the disk refuses; see applyEntries for what is applied then.
   */
  async applyToReal(options: { overwrite?: readonly string[]; skip?: readonly string[]; beforeReplace?: BeforeReplaceHook; redoDir?: string } = {}): Promise<OverlayApplyResult> {
    return this.lock.exclusive(async () => {
      this.assertUsable();
      const overwrite = new Set<string>();
      for (const requested of options.overwrite ?? []) overwrite.add(await this.view.entryKey(requested));
      const skip = new Set<string>();
      for (const requested of options.skip ?? []) skip.add(await this.view.entryKey(requested));
      const selected = new Map([...this.view.entries].filter(([file]) => !skip.has(file)));
      return this.applySelected(selected, overwrite, [...this.view.deletedDirs], options.beforeReplace, options.redoDir);
    });
  }

  /** Resolves once the flush of every accept into this workspace so far is done (its files durable, its log gone). */
  flushed(): Promise<void> {
    return flushed(this.root);
  }

  /** Accepts one file; `force` writes it even when the user changed the real file (Overwrite). */
  async applyFile(requested: string, options: { force?: boolean } = {}): Promise<OverlayApplyResult> {
    return this.lock.exclusive(async () => {
      this.assertUsable();
      const file = await this.view.entryKey(requested);
      const entry = this.view.entries.get(file);
      if (!entry) return { applied: [], conflicts: [] };
      return this.applySelected(new Map([[file, entry]]), new Set(options.force ? [file] : []), []);
    });
  }

  /** Drops the speculation's change to one path (Keep mine); the real file is not touched. */
  async discard(requested: string): Promise<void> {
    await this.lock.exclusive(async () => {
      this.assertUsable();
      const file = await this.view.entryKey(requested);
      const entry = this.view.entries.get(file);
      if (!entry) return;
      await this.forget(file, entry);
      this.emit([file]);
    });
  }

  /** Removes the overlay folder; safe to call more than once. Later calls on this overlay throw. */
  async cleanup(): Promise<void> {
    await this.lock.exclusive(async () => {
      this.discarded = true;
      this.view.entries.clear();
      this.view.deletedDirs.clear();
      await rm(this.dir, { recursive: true, force: true });
      // The pid folder goes too once no other overlay of this process is in it.
      await rmdir(path.dirname(this.dir)).catch(() => undefined);
    });
    this.listeners.clear();
  }

  private async applySelected(selected: ReadonlyMap<string, OverlayEntry>, overwrite: ReadonlySet<string>, deletedDirs: string[], beforeReplace?: BeforeReplaceHook, redoDir?: string): Promise<OverlayApplyResult> {
    const logDir = redoDir ?? this.options.redoDir;
    const input = {
      root: this.root,
      overlayId: this.id,
      overlayDir: this.dir,
      entries: new Map(selected),
      deletedDirs,
      blobPath: (blob: string) => this.view.blobPath(blob),
      overwrite,
      fs: this.applyFs,
      onStep: this.options.onApplyStep,
      ...(beforeReplace ? { beforeReplace } : {}),
      ...(logDir ? { redoDir: logDir } : {}),
      ...(this.options.pid !== undefined ? { pid: this.options.pid } : {}),
    };
    let applied: string[];
    try {
      // Held from the first check to the last rename: a second window's accept of the same file
      // then checks against this one's result and reports a conflict instead of replacing it.
      // An earlier accept's (or undo's) flush finishes first: its log must be gone before this one checks.
      const result = await this.workspaceLock.hold(async () => {
        await flushed(this.root);
        return applyEntries(input);
      });
      applied = result.applied;
      await this.afterApply(applied, deletedDirs);
      return result;
    } catch (error) {
      if (error instanceof OverlayApplyError) await this.afterApply(error.applied, deletedDirs);
      throw error;
    }
  }

  /** Applied paths now live in the workspace; the overlay lets reads fall through to them again. */
  private async afterApply(applied: readonly string[], deletedDirs: readonly string[]): Promise<void> {
    for (const file of applied) {
      const entry = this.view.entries.get(file);
      if (entry) await this.forget(file, entry);
    }
    for (const dir of deletedDirs) {
      if (![...this.view.entries.keys()].some((file) => isAtOrBelow(dir, file))) this.view.deletedDirs.delete(dir);
    }
    this.emit([...applied]);
  }

  private async forget(file: string, entry: OverlayEntry): Promise<void> {
    this.view.entries.delete(file);
    if (entry.kind === 'written') this.blobs.drop(entry);
  }

  // ---- checks and the writing side ------------------------------------------------------------

  private assertUnprotected(requested: string, file: string): void {
    const hit = protectedPathsOr(this.options.protectedPaths).matchWrite(this.root, requested, file);
    if (hit) throw new ProtectedPathError(hit);
  }


  private assertUsable(): void {
    if (this.discarded) throw new OverlayDiscardedError();
  }























  /**
   * Stores new content for `file`; `mode` overrides the kept mode (a moved file keeps its own).
   * The replaced blob is removed, or handed to `retired` when the caller may still undo. `real` and
   * `pending` come from a caller that placed the path and started the blob already.
   */
  private async writeMerged(file: string, data: Uint8Array, mode: number | undefined, retired?: string[], real?: Placement, pending?: PendingBlob): Promise<void> {
    const previous = this.view.entries.get(file);
    const blob = pending ?? this.blobs.start(data, previous);
    try {
      const placed = real ?? (await this.base.place(file));
      this.view.assertWritable(file, placed);
      // The base (reading the real file only for a blind first write) is worked out while the blob
      // is written; the new content's hash is for accept, and is not waited for.
      const base = previous ? previous.base : await this.view.recordBase(file, placed);
      const keptMode = previous?.kind === 'written' ? previous.mode : base.exists ? base.mode : undefined;
      const entryMode = mode ?? keptMode;
      try {
        await blob.finish((entryMode ?? NEW_FILE_MODE) & 0o777);
      } catch (error) {
        throw new OverlayStorageError(file, 'store', codeOf(error));
      }
      const entry: WrittenEntry = { kind: 'written', base, blob: blob.name, sha256: digestOf(data), size: data.length, mtimeMs: Date.now(), mode: entryMode };
      this.view.entries.set(file, entry);
      if (previous?.kind === 'written') this.blobs.retire(previous, retired);
    } catch (error) {
      blob.abandon();
      throw error;
    }
  }

  private async deleteFileMerged(file: string, retired?: string[], real?: Placement): Promise<void> {
    const previous = this.view.entries.get(file);
    const base = previous ? previous.base : await this.view.recordBase(file, real ?? (await this.view.placed(file)));
    if (previous?.kind === 'written') this.blobs.retire(previous, retired);
    // A file the speculation created and deletes again leaves no trace.
    if (base.exists) this.view.entries.set(file, { kind: 'deleted', base });
    else this.view.entries.delete(file);
  }

  private async moveFile(source: string, target: string): Promise<void> {
    const data = await this.view.readMerged(source);
    const mode = (await this.view.statMerged(source))?.mode;
    await this.writeMerged(target, data, mode);
    await this.deleteFileMerged(source);
  }



}
