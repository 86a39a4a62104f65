// The copy-on-write overlay a speculation writes into: a WorkspaceFs over the real one whose writes
// land in `<tmp>/speculate-<uid>/<pid>/<id>/` and whose reads, listings and searches show the merged view.
import { randomUUID } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, mkdir, readFile, rm, rmdir, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { IgnoreStack, parseGitignore } from '../fs/gitignore';
import { specialKindOf } from '../fs/fileKind';
import { assertCreatableNames, toAbsolute, type Placement, type Placer } from '../fs/paths';
import { readRegularFile } from '../fs/regularFile';
import { choosePrivateBase, ensurePrivateFolder } from '../fs/privateFolders';
import { protectedPathsOr, ProtectedPathError, type ProtectedPaths } from '../fs/protectedPaths';
import { globToRegExp, literalPrefix } from '../fs/globMatch';
import { compareMatches, compileSearchPattern, isBinary, matchLines, MAX_SEARCH_FILE_BYTES, searchGlobFilter } from '../fs/textSearch';
import { ALWAYS_SKIPPED_DIRS, comparePaths, joinPath } from '../fs/treeWalk';
import {
  EngineFault,
  FileNotFoundError,
  PathOutsideWorkspaceError,
  SpecialFileError,
  WriteRefusedError,
  type DirEntry,
  type FileStat,
  type GlobOptions,
  type SearchMatch,
  type SearchOptions,
  type WorkspaceFs,
  type WriteExpectation,
  type WriteOptions,
} from '../fs/workspaceFs';
import { processLock, type WorkspaceLock } from '../fs/workspaceLock';
import { flushed } from '../fs/pendingFlush';
import { nodeApplyFs, type ApplyFs } from './overlay/applyFs';
import { applyEntries, findConflicts, OverlayApplyError, type ApplyResult, type ApplyStepHook, type BeforeReplaceHook, type Conflict } from './overlay/applyOverlay';
import { readBlob, startBlob, type PendingBlob } from './overlay/blobs';
import { digestOf, HASH_INLINE_LIMIT } from './overlay/digest';
import { isAtOrBelow, isBelow, kindOf, type BaseRecord, type OverlayEntry, type WrittenEntry, type WrittenKind } from './overlay/entries';
import { CHANGED_SINCE_SEEN, ObservationLog, identityOf, sameIdentity, trustedIdentity, type CurrentContent, type CurrentFile, type StatIdentity } from './overlay/observations';
import { ReadWriteLock } from './overlay/readWriteLock';
import type { SandboxChange, SandboxLayer } from '../sandbox/shellSandbox';
import { OVERLAY_PARENT } from './overlay/recovery';

export { OverlayApplyError, type ApplyResult, type ApplyStepHook, type BeforeReplaceHook, type Conflict, type ConflictReason, type ReplaceStep } from './overlay/applyOverlay';
export { cleanupStaleOverlays, isProcessAlive, recoverInterruptedApplies, type HousekeepingOptions, type RecoveryOutcome, type StaleCleanupReport } from './overlay/recovery';
export type { ApplyFs } from './overlay/applyFs';
export type { WrittenKind } from './overlay/entries';

/** Mode reported for files the speculation created (the real one gets the default mode on accept). */
const NEW_FILE_MODE = 0o644;
const DIRECTORY_MODE = 0o755;
const DEFAULT_GLOB_LIMIT = 100_000;
const DEFAULT_SEARCH_LIMIT = 10_000;
const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;
/** Tries at creating the overlay folder while other overlays' cleanups remove the shared pid folder. */
const CREATE_ATTEMPTS = 8;
/** How much replaced content the overlay folder may keep until cleanup() removes it in one go. */
const UNREFERENCED_BYTES = 32 * 1024 * 1024;
/** A real file whose change time is this close to a sandboxed command's start may have changed while it ran (coarse file-system clocks). */
export const SANDBOX_CLOCK_SLACK_MS = 100;

export interface OverlayFsOptions {
  /** The real workspace; reads fall through to it and accept writes to its root. */
  base: WorkspaceFs & Placer;
  /**
   * The temp folder under which `speculate-<uid>/<pid>/<id>/` is created; defaults to the OS temp
   * folder. When it lies inside the workspace (or `avoidRoots`), a fallback outside is taken.
   */
  tmpRoot?: string;
  /** Tried in order when tmpRoot lies inside a workspace; fallbackTempFolders() by default. */
  fallbackTmpRoots?: readonly string[];
  /** Other open workspaces the overlay must not live in (the base's own root always counts). */
  avoidRoots?: readonly string[];
  /**
   * speculate.protectedPaths (TOOLS.md's defaults when absent): a change to one of them is refused
   * with ProtectedPathError, whoever asks, so nothing that runs programs or holds secrets is ever
   * in an overlay to be applied by Tab.
   */
  protectedPaths?: ProtectedPaths;
  /**
   * The workspace lock held from an accept's check to its last rename (every accept and live
   * write into the folder takes it); by default the one this process shares for the folder.
   */
  lock?: WorkspaceLock;
  /** Names the overlay folder; defaults to a random UUID. */
  id?: string;
  /** Defaults to this process; stale cleanup removes folders of pids that no longer run. */
  pid?: number;
  /** Disk operations of accept; tests inject faults here. */
  applyFs?: ApplyFs;
  /**
   * The state folder accepts keep their redo log in (one fsync commits an accept; see applyEntries).
   * An accept with a checkpoint uses the checkpoint's folder; without either, the journal in the overlay.
   */
  redoDir?: string;
  /** Called after each staged and committed file of an accept; a throw acts like a crash (tests). */
  onApplyStep?: ApplyStepHook;
  /**
   * The wall clock files' times are compared with, to tell a file that changed just now (whose
   * next change may keep its times) from one that is sure to show any change; tests move it on.
   */
  clock?: () => number;
}

export interface WrittenFile {
  path: string;
  kind: WrittenKind;
}

export interface Disposable {
  dispose(): void;
}

/** What the user is told when the temp folder fails; the run stops there (its next suggestion tries again). */
function storageProblem(path: string, action: 'store' | 'read' | 'create', code: string): string {
  const again = 'the next suggestion will try again';
  if (code === 'ENOSPC' || code === 'EDQUOT') return `Couldn't run ahead: the temp folder is full. Free some space there (or point TMPDIR at a roomier folder); ${again}.`;
  if (code === 'EROFS') return `Couldn't run ahead: the temp folder is on a read-only disk. Point TMPDIR at a writable folder; ${again}.`;
  const what = action === 'create' ? 'its private folder' : `its copy of "${path}"`;
  return `Couldn't run ahead: the temp folder could not ${action === 'read' ? 'read' : 'hold'} ${what} (${code}); ${again}.`;
}

/**
 * The overlay's own storage (the temp folder) failed: a failure of the speculation, never a tool
 * result for the model. Names the workspace path, never the overlay's location.
 */
export class OverlayStorageError extends EngineFault {
  constructor(readonly path: string, action: 'store' | 'read' | 'create', readonly code: string) {
    super(storageProblem(path, action, code));
    this.name = 'OverlayStorageError';
  }
}

/** Codes of a temp folder that cannot hold the overlay: said as a storage failure, not as raw errno. */
const STORAGE_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/** The overlay was cleaned up (accepted or aborted) and can no longer be used. */
export class OverlayDiscardedError extends Error {
  constructor() {
    super('This speculation was already discarded; its files are no longer available. Run the prompt again.');
    this.name = 'OverlayDiscardedError';
  }
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'unknown error';
}

function ancestorsOf(file: string): string[] {
  const parts = file.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** What stat reports for a real path, from the lstat of its placed (symlink-free) location. */
function fileStatOf(info: Stats | undefined): FileStat | undefined {
  if (!info) return undefined;
  const type = info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'special';
  return { type, size: info.size, mtimeMs: info.mtimeMs, mode: info.mode & 0o7777 };
}

function typeOfStats(info: Stats | undefined): FileStat['type'] | undefined {
  return fileStatOf(info)?.type;
}

async function lstatOrUndefined(absolute: string): Promise<Stats | undefined> {
  try {
    return await lstat(absolute);
  } catch (error) {
    if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return undefined;
    throw error;
  }
}

async function makeOverlayDirectory(dir: string, id: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    if (codeOf(error) === 'EEXIST') throw new Error(`A speculation named "${id}" already exists; give each speculation its own id.`);
    throw error;
  }
}

/**
 * A WorkspaceFs whose writes stay in a private overlay folder until accepted. `root` and every
 * path it takes or returns are the real workspace's: tools run against it unchanged, and no overlay
 * path reaches the model, the history, or the UI.
 */
export class OverlayFs implements WorkspaceFs {
  readonly root: string;
  private readonly entries = new Map<string, OverlayEntry>();
  /** Base folders deleted in the overlay; they and what is below them are hidden. */
  private readonly deletedDirs = new Set<string>();
  private readonly listeners = new Set<(paths: string[]) => void>();
  private readonly lock = new ReadWriteLock();
  /** Shared with every accept and live write into this workspace (see OverlayFsOptions.lock). */
  private readonly workspaceLock: WorkspaceLock;
  /** The workspace's writer lock, for an accept's other writes (commit ahead's refs) to hold the same. */
  get writerLock(): WorkspaceLock {
    return this.workspaceLock;
  }
  /** What the speculation saw of real files; the base of each file's first write comes from it. */
  private readonly observations = new ObservationLog();
  private readonly applyFs: ApplyFs;
  private blobCount = 0;
  /** Blobs nothing refers to any more, oldest first: left for cleanup() to remove with the folder, up to UNREFERENCED_BYTES. */
  private readonly unreferenced: { blob: string; size: number }[] = [];
  private unreferencedBytes = 0;
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
  }

  static async create(options: OverlayFsOptions): Promise<OverlayFs> {
    const id = options.id ?? randomUUID();
    if (!SAFE_ID.test(id)) throw new Error(`"${id}" cannot name a speculation; use letters, digits, "-", "_" or ".".`);
    const tempBase = await choosePrivateBase({ preferred: options.tmpRoot, fallbacks: options.fallbackTmpRoots, avoid: [options.base.root, ...(options.avoidRoots ?? [])] });
    const parent = path.join(tempBase, OVERLAY_PARENT);
    const pidDir = path.join(parent, String(options.pid ?? process.pid));
    const dir = path.join(pidDir, id);
    let made = false;
    try {
      await ensurePrivateFolder(parent);
      for (let attempt = 1; ; attempt++) {
        try {
          await ensurePrivateFolder(pidDir);
          await makeOverlayDirectory(dir, id);
          made = true;
          break;
        } catch (error) {
          // Another overlay's cleanup() removes the pid folder when it is empty, which it is until our
          // mkdir lands: ensure it again. Bounded, so a folder that keeps vanishing still fails.
          if (codeOf(error) === 'ENOENT' && attempt < CREATE_ATTEMPTS) continue;
          throw error;
        }
      }
      // Safe from here: the pid folder holds our folder, so no cleanup's rmdir can remove it.
      await mkdir(path.join(dir, 'blobs'), { mode: 0o700 });
    } catch (error) {
      if (made) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      if (STORAGE_CODES.has(codeOf(error))) throw new OverlayStorageError('', 'create', codeOf(error));
      throw error;
    }
    return new OverlayFs(options.base, id, dir, options);
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
    return [...this.entries].map(([file, entry]) => ({ path: file, kind: kindOf(entry) })).sort((a, b) => comparePaths(a.path, b.path));
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
      return findConflicts({ root: this.root, fs: this.applyFs }, this.entries);
    });
  }

  // ---- the sandbox (SANDBOX.md) ------------------------------------------------------------------

  /** What a sandboxed command must see of this speculation: the files it wrote (their blobs, to be linked) and what it deleted. */
  async sandboxLayer(): Promise<SandboxLayer> {
    return this.lock.shared(async () => {
      this.assertUsable();
      const files: { path: string; contentPath: string; mode: number }[] = [];
      const deletedFiles: string[] = [];
      for (const [file, entry] of this.entries) {
        if (entry.kind === 'written') files.push({ path: file, contentPath: this.blobPath(entry.blob), mode: (entry.mode ?? NEW_FILE_MODE) & 0o777 });
        else deletedFiles.push(file);
      }
      return { files, deletedFiles, deletedDirs: [...this.deletedDirs] };
    });
  }

  /**
   * Takes a sandboxed command's changes (deletions first, then writes) as ordinary overlay changes.
   * Each path is held on accept against what the command found: the speculation's own earlier sight
   * of it, else the real file — unless that changed after `startedAt` (for a file that was absent,
   * its nearest folder), and then accept asks rather than overwrite. All or nothing: a path the
   * overlay cannot place as itself is refused before anything changes; a storage failure undoes
   * what this call did; so is a protected path (ProtectedPathError). Returns the paths changed.
   */
  async applySandboxChanges(changes: readonly SandboxChange[], startedAt: number): Promise<string[]> {
    return this.lock.exclusive(async () => {
      this.assertUsable();
      for (const change of changes) {
        if ((await this.resolve(change.path)) !== change.path) {
          throw new PathOutsideWorkspaceError(change.path, 'was changed by the command through a symlink, which the speculation cannot carry over');
        }
        // A command may not slip a protected file (.vscode/tasks.json, .env, …) into the speculation either.
        this.assertUnprotected(change.path, change.path);
      }
      const savedEntries = new Map(this.entries);
      const savedDirs = new Set(this.deletedDirs);
      const firstBlob = this.blobCount + 1;
      const retired: string[] = [];
      const changed: string[] = [];
      try {
        for (const change of changes) {
          // Before any stat of ours: that would record the file as it is now, not as the command found it.
          if (change.kind === 'write' || change.type === 'file') await this.sawBeforeSandbox(change.path, startedAt);
          const info = await this.statMerged(change.path);
          if (change.kind === 'delete' && change.type === 'file') {
            if (info?.type !== 'file') continue;
            await this.deleteFileMerged(change.path, retired);
          } else if (change.kind === 'delete') {
            if (info?.type !== 'directory' || (await this.listMerged(change.path)).length > 0) continue;
            this.deletedDirs.add(change.path);
          } else {
            await this.writeMerged(change.path, await readFile(change.contentPath), change.mode, retired);
          }
          changed.push(change.path);
        }
      } catch (error) {
        this.entries.clear();
        for (const [file, entry] of savedEntries) this.entries.set(file, entry);
        this.deletedDirs.clear();
        for (const dir of savedDirs) this.deletedDirs.add(dir);
        for (let blob = firstBlob; blob <= this.blobCount; blob++) await unlink(this.blobPath(String(blob))).catch(() => undefined);
        throw error instanceof OverlayStorageError ? error : new OverlayStorageError(changes[0]?.path ?? '', 'store', codeOf(error));
      }
      for (const blob of retired) await unlink(this.blobPath(blob)).catch(() => undefined);
      this.emit(changed);
      return changed;
    });
  }

  /** Records what a sandboxed command found at a path it changed, as of its start (see applySandboxChanges). */
  private async sawBeforeSandbox(file: string, startedAt: number): Promise<void> {
    if (this.entries.has(file) || this.observations.knows(file)) return;
    const since = startedAt - SANDBOX_CLOCK_SLACK_MS;
    const real = await this.realStat(file);
    if (real) {
      if (real.ctimeMs >= since) this.observations.sawChanged(file);
      else if (real.type === 'file') this.observations.sawStat(file, identityOf(real));
      return;
    }
    // Absent now: absent at the start too, unless the nearest folder changed since (the user may have deleted it).
    for (const dir of ancestorsOf(file).reverse().concat([''])) {
      const folder = await this.realStat(dir);
      if (!folder) continue;
      if (folder.ctimeMs >= since || folder.mtimeMs >= since) this.observations.sawChanged(file);
      else this.observations.sawMissing(file);
      return;
    }
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
      return this.readMerged(placed.relative, placed);
    });
  }

  async stat(requested: string): Promise<FileStat | undefined> {
    return this.lock.shared(async () => {
      this.assertUsable();
      const placed = await this.base.place(requested);
      return this.statMerged(placed.relative, placed);
    });
  }

  async list(requested: string): Promise<DirEntry[]> {
    return this.lock.shared(async () => {
      this.assertUsable();
      return this.listMerged(await this.resolve(requested));
    });
  }

  async writeFile(requested: string, data: Uint8Array | string, options: WriteOptions = {}): Promise<void> {
    await this.lock.exclusive(async () => {
      this.assertUsable();
      options.signal?.throwIfAborted();
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      // The copy is stored while the path is placed and checked (nothing shows it until its entry
      // is set; a refused write drops it), so a write costs about what a plain one does.
      const blob = this.startBlob(bytes, this.entries.get(requested));
      try {
        const placed = await this.base.place(requested);
        const file = placed.relative;
        this.assertUnprotected(requested, file);
        if (options.expect) await this.assertAsExpected(file, options.expect);
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
      const info = await this.statMerged(target, placed);
      if (!info) throw new FileNotFoundError(target);
      if (info.type === 'file') {
        await this.deleteFileMerged(target, undefined, placed);
      } else {
        if ((await this.listMerged(target)).length > 0) throw new Error(`Directory ${target} is not empty; delete the files inside it first.`);
        this.deletedDirs.add(target);
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
      const info = await this.statMerged(source);
      if (!info) throw new FileNotFoundError(source);
      const existing = await this.statMerged(target);
      if (info.type === 'file') {
        if (existing?.type === 'directory') throw new Error(`${target} is a directory; give a file path to rename ${source} to.`);
        await this.moveFile(source, target);
        this.emit([source, target]);
        return;
      }
      if (isBelow(source, target)) throw new Error(`Cannot move ${source} into itself.`);
      if (existing?.type === 'file') throw new Error(`${target} is a file; cannot replace it with the directory ${source}.`);
      if (existing && (await this.listMerged(target)).length > 0) throw new Error(`Directory ${target} is not empty; cannot move ${source} onto it.`);
      const { files, dirs } = await this.walkMerged(source);
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
      for (const dir of [source, ...dirs]) if (!this.hasWrittenBelow(dir)) this.deletedDirs.add(dir);
      this.emit(changed);
    });
  }

  async glob(pattern: string, options: GlobOptions = {}): Promise<string[]> {
    return this.lock.shared(async () => {
      this.assertUsable();
      const cwd = await this.resolve(options.cwd ?? '');
      const cwdInfo = await this.statMerged(cwd);
      if (!cwdInfo) throw new FileNotFoundError(cwd || '.');
      if (cwdInfo.type !== 'directory') throw new Error(`${cwd} is a file, not a directory to search in.`);
      const limit = options.limit ?? DEFAULT_GLOB_LIMIT;
      const respectGitignore = options.respectGitignore ?? true;
      const normalised = this.relativePattern(pattern);
      if (normalised === '') return [];

      const found = new Set<string>();
      if (await this.baseHas(cwd, 'directory')) {
        // Removing touched files can only shrink the base's answer by that many.
        const fromBase = await this.base.glob(pattern, { ...options, cwd, limit: limit + this.entries.size });
        for (const file of fromBase) if (this.baseShowsFile(file)) found.add(file);
        await this.observeAll(found);
      }
      const { prefix, rest } = literalPrefix(normalised);
      const start = prefix === '' ? cwd : await this.resolve(joinPath(cwd, prefix));
      const regex = globToRegExp(rest);
      const startPrefix = start === '' ? '' : `${start}/`;
      for (const file of this.writtenPaths()) {
        if (!isBelow(start, file) || !regex.test(file.slice(startPrefix.length))) continue;
        if (await this.walkReaches(file, start, respectGitignore)) found.add(file);
      }
      return [...found].sort(comparePaths).slice(0, limit);
    });
  }

  /** The base's matches minus files the overlay touched, plus matches in the overlay's own files. */
  async search(pattern: string, options: SearchOptions = {}): Promise<SearchMatch[]> {
    return this.lock.shared(async () => {
      this.assertUsable();
      const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
      const regex = compileSearchPattern(pattern);
      const start = await this.resolve(options.path ?? '');
      const startInfo = await this.statMerged(start);
      if (!startInfo) throw new FileNotFoundError(start || '.');
      const isDirectory = startInfo.type === 'directory';

      const results: SearchMatch[] = [];
      if (await this.baseHas(start, startInfo.type)) {
        // A touched file's base matches are dropped; ask for more when that may have cut the answer short.
        for (let asked = limit; ; asked *= 4) {
          const fromBase = await this.base.search(pattern, { ...options, path: start, limit: asked });
          const kept = fromBase.filter((match) => this.baseShowsFile(match.path));
          if (fromBase.length < asked || kept.length === fromBase.length || kept.length >= limit || asked >= 1_000_000) {
            results.push(...kept);
            await this.observeAll(kept.map((match) => match.path));
            break;
          }
        }
      }
      const wanted = searchGlobFilter(options.glob, isDirectory ? start : '');
      for (const file of this.writtenPaths()) {
        const inScope = isDirectory ? isBelow(start, file) && (await this.walkReaches(file, start, true)) : file === start;
        if (!inScope || !wanted(file)) continue;
        options.signal?.throwIfAborted();
        const entry = this.entries.get(file) as WrittenEntry;
        if (entry.size > MAX_SEARCH_FILE_BYTES) continue;
        const data = await this.readBlob(file, entry);
        if (isBinary(data)) continue;
        results.push(...matchLines(file, Buffer.from(data).toString('utf8'), regex, limit));
      }
      return results.sort(compareMatches).slice(0, limit);
    });
  }

  // ---- accept, discard, cleanup ---------------------------------------------------------------

  /**
   * Accept: writes every touched file whose real version is still the one the overlay started from
   * (or that `overwrite` names) atomically into the workspace; the others come back as conflicts and
   * stay in the overlay for the user to decide. `skip` leaves files out (Keep mine) without a report. Applied paths leave the overlay. Throws
   * OverlayApplyError (naming the files) when the disk refuses; see applyEntries for what is applied then.
   */
  async applyToReal(options: { overwrite?: readonly string[]; skip?: readonly string[]; beforeReplace?: BeforeReplaceHook; redoDir?: string } = {}): Promise<ApplyResult> {
    return this.lock.exclusive(async () => {
      this.assertUsable();
      const overwrite = new Set<string>();
      for (const requested of options.overwrite ?? []) overwrite.add(await this.entryKey(requested));
      const skip = new Set<string>();
      for (const requested of options.skip ?? []) skip.add(await this.entryKey(requested));
      const selected = new Map([...this.entries].filter(([file]) => !skip.has(file)));
      return this.applySelected(selected, overwrite, [...this.deletedDirs], options.beforeReplace, options.redoDir);
    });
  }

  /** Resolves once the flush of every accept into this workspace so far is done (its files durable, its log gone). */
  flushed(): Promise<void> {
    return flushed(this.root);
  }

  /** Accepts one file; `force` writes it even when the user changed the real file (Overwrite). */
  async applyFile(requested: string, options: { force?: boolean } = {}): Promise<ApplyResult> {
    return this.lock.exclusive(async () => {
      this.assertUsable();
      const file = await this.entryKey(requested);
      const entry = this.entries.get(file);
      if (!entry) return { applied: [], conflicts: [] };
      return this.applySelected(new Map([[file, entry]]), new Set(options.force ? [file] : []), []);
    });
  }

  /** Drops the speculation's change to one path (Keep mine); the real file is not touched. */
  async discard(requested: string): Promise<void> {
    await this.lock.exclusive(async () => {
      this.assertUsable();
      const file = await this.entryKey(requested);
      const entry = this.entries.get(file);
      if (!entry) return;
      await this.forget(file, entry);
      this.emit([file]);
    });
  }

  /** Removes the overlay folder; safe to call more than once. Later calls on this overlay throw. */
  async cleanup(): Promise<void> {
    await this.lock.exclusive(async () => {
      this.discarded = true;
      this.entries.clear();
      this.deletedDirs.clear();
      await rm(this.dir, { recursive: true, force: true });
      // The pid folder goes too once no other overlay of this process is in it.
      await rmdir(path.dirname(this.dir)).catch(() => undefined);
    });
    this.listeners.clear();
  }

  private async applySelected(selected: ReadonlyMap<string, OverlayEntry>, overwrite: ReadonlySet<string>, deletedDirs: string[], beforeReplace?: BeforeReplaceHook, redoDir?: string): Promise<ApplyResult> {
    const logDir = redoDir ?? this.options.redoDir;
    const input = {
      root: this.root,
      overlayId: this.id,
      overlayDir: this.dir,
      entries: new Map(selected),
      deletedDirs,
      blobPath: (blob: string) => this.blobPath(blob),
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
      const entry = this.entries.get(file);
      if (entry) await this.forget(file, entry);
    }
    for (const dir of deletedDirs) {
      if (![...this.entries.keys()].some((file) => isAtOrBelow(dir, file))) this.deletedDirs.delete(dir);
    }
    this.emit([...applied]);
  }

  private async forget(file: string, entry: OverlayEntry): Promise<void> {
    this.entries.delete(file);
    if (entry.kind === 'written') this.dropBlob(entry);
  }

  /**
   * A blob nothing refers to any more (replaced, applied, discarded). cleanup() removes the whole
   * folder anyway, so it stays until then — one removal instead of one per write — unless the
   * folder would keep more than UNREFERENCED_BYTES that way; the oldest go first, not waited for.
   */
  private dropBlob(entry: Pick<WrittenEntry, 'blob' | 'size'>): void {
    this.unreferenced.push({ blob: entry.blob, size: entry.size });
    this.unreferencedBytes += entry.size;
    while (this.unreferencedBytes > UNREFERENCED_BYTES) {
      const oldest = this.unreferenced.shift();
      if (!oldest) break;
      this.unreferencedBytes -= oldest.size;
      unlink(this.blobPath(oldest.blob)).catch(() => undefined);
    }
  }

  // ---- the merged view --------------------------------------------------------------------------

  /**
   * The entry a caller means: paths from writtenFiles() or a conflict are used as they are, so a
   * file whose folder has since become a symlink out of the workspace can still be dropped.
   */
  private async entryKey(requested: string): Promise<string> {
    return this.entries.has(requested) ? requested : this.resolve(requested);
  }

  /** Compare-and-replace on the merged view: the speculation's own file must still be as its tool read it. */
  private async assertAsExpected(file: string, expect: WriteExpectation): Promise<void> {
    const info = await this.statMerged(file);
    const present = info?.type === 'file';
    if (!expect.exists ? !present : present && ('sha256' in expect ? (await digestOf(await this.readMerged(file))) === expect.sha256 : info.size === expect.size && info.mtimeMs === expect.mtimeMs)) return;
    throw new WriteRefusedError(file, 'changed', `${file} was changed after it was read; it was not written. Read it again and redo the change.`);
  }

  private assertUnprotected(requested: string, file: string): void {
    const hit = protectedPathsOr(this.options.protectedPaths).matchWrite(this.root, requested, file);
    if (hit) throw new ProtectedPathError(hit);
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  private assertUsable(): void {
    if (this.discarded) throw new OverlayDiscardedError();
  }

  private blobPath(blob: string): string {
    return path.join(this.dir, 'blobs', blob);
  }

  private writtenPaths(): string[] {
    return [...this.entries].filter(([, entry]) => entry.kind === 'written').map(([file]) => file);
  }

  /** Below a folder the overlay deleted (and not re-created by a write). */
  private hidden(file: string): boolean {
    for (const dir of this.deletedDirs) if (isAtOrBelow(dir, file)) return true;
    return false;
  }

  private hasWrittenBelow(dir: string): boolean {
    for (const [file, entry] of this.entries) if (entry.kind === 'written' && isBelow(dir, file)) return true;
    return false;
  }

  /** A folder that exists only in the overlay changed when its newest file did (stable across stats). */
  private latestWriteBelow(dir: string): number {
    let latest = 0;
    for (const [file, entry] of this.entries) if (entry.kind === 'written' && isBelow(dir, file)) latest = Math.max(latest, entry.mtimeMs);
    return latest;
  }

  /** Whether the base's version of this file is what the merged view shows. */
  private baseShowsFile(file: string): boolean {
    return !this.entries.has(file) && !this.hidden(file);
  }

  /** Whether the base's folder at this path is part of the merged view. */
  private baseShowsDirectory(dir: string): boolean {
    return dir === '' || (this.entries.get(dir) === undefined && !this.hidden(dir));
  }

  /** Whether the merged view at this path is (also) the base's file or folder. */
  private async baseHas(target: string, type: FileStat['type']): Promise<boolean> {
    const visible = type === 'directory' ? this.baseShowsDirectory(target) : this.baseShowsFile(target);
    return visible && (await this.base.stat(target))?.type === type;
  }

  private async readBlob(file: string, entry: WrittenEntry): Promise<Uint8Array> {
    try {
      return await readBlob(this.blobPath(entry.blob), entry.size);
    } catch (error) {
      throw new OverlayStorageError(file, 'read', codeOf(error));
    }
  }

  /**
   * Where an already placed path (an entry, a listing's child, a placed path's folder) is on disk:
   * one lstat, as no symlink is left on it — unless one was put there since, which the base then
   * places in full, as it would have for any path.
   */
  private async placed(file: string): Promise<Placement> {
    const info = await lstatOrUndefined(toAbsolute(this.root, file));
    if (!info || info.isSymbolicLink()) return this.base.place(file);
    return { relative: file, target: info, foundDepth: file === '' ? 0 : file.split('/').length, found: info };
  }

  /** Reads `file` in the merged view; `real` is its placement when the caller has it (a read-through then costs one open and one read). */
  private async readMerged(file: string, real?: Placement): Promise<Uint8Array> {
    const entry = this.entries.get(file);
    if (entry?.kind === 'written') return this.readBlob(file, entry);
    if (file === '' || this.hasWrittenBelow(file)) throw new Error(`${file || '.'} is a directory, not a file.`);
    if (entry?.kind === 'deleted' || this.hidden(file)) throw new FileNotFoundError(file);
    const placed = real ?? (await this.placed(file));
    const info = placed.target;
    if (!info) {
      this.observations.sawMissing(file);
      throw new FileNotFoundError(file);
    }
    if (info.isDirectory()) throw new Error(`${file} is a directory, not a file.`);
    // Refused before it is opened: opening a FIFO or a device can block or have effects.
    const special = specialKindOf(info);
    if (special) throw new SpecialFileError(file, special);
    const seenAt = this.now();
    let read: { data: Buffer; info: Stats };
    try {
      read = await readRegularFile(toAbsolute(this.root, placed.relative), file, info);
    } catch (error) {
      if (error instanceof FileNotFoundError) this.observations.sawMissing(file);
      throw error;
    }
    const identity = trustedIdentity(read.info, seenAt);
    // A large file that is sure to show any change is hashed only if the speculation changes it.
    const hash = identity && read.data.length > HASH_INLINE_LIMIT ? undefined : digestOf(read.data);
    this.observations.readContent(file, hash, read.data.length, read.info.mode & 0o7777, identity);
    return read.data;
  }

  /** The real file's lstat (the path is already resolved, so no symlink is left on it). */
  private realStat(file: string) {
    return this.applyFs.lstat(toAbsolute(this.root, file));
  }

  /** Records that the speculation saw this real path (stat, listing, glob or search) unless it knows it already. */
  private async observe(file: string, info?: FileStat): Promise<void> {
    if (this.observations.knows(file) || this.entries.has(file)) return;
    if (info && info.type !== 'file') return;
    const real = await this.realStat(file);
    if (!real) this.observations.sawMissing(file);
    else if (real.type === 'file') this.observations.sawStat(file, identityOf(real));
  }

  /** observe() for a path whose lstat the caller already has. */
  private noteSeen(file: string, info: Stats | undefined): void {
    if (this.observations.knows(file) || this.entries.has(file)) return;
    if (!info) this.observations.sawMissing(file);
    else if (info.isFile()) this.observations.sawStat(file, identityOf(info));
  }

  private async observeAll(files: Iterable<string>): Promise<void> {
    await Promise.all([...new Set(files)].map((file) => this.observe(file)));
  }

  private async statMerged(file: string, real?: Placement): Promise<FileStat | undefined> {
    const entry = this.entries.get(file);
    if (entry?.kind === 'written') return { type: 'file', size: entry.size, mtimeMs: entry.mtimeMs, mode: entry.mode ?? NEW_FILE_MODE };
    if (file !== '' && this.hasWrittenBelow(file)) {
      const fromBase = this.baseShowsDirectory(file) ? fileStatOf((real ?? (await this.placed(file))).target) : undefined;
      if (fromBase?.type === 'directory') return fromBase;
      return { type: 'directory', size: 0, mtimeMs: this.latestWriteBelow(file), mode: DIRECTORY_MODE };
    }
    if (entry?.kind === 'deleted' || this.hidden(file)) return undefined;
    const target = (real ?? (await this.placed(file))).target;
    if (!target?.isDirectory()) this.noteSeen(file, target);
    return fileStatOf(target);
  }

  private async listMerged(dir: string): Promise<DirEntry[]> {
    const info = await this.statMerged(dir);
    if (!info) throw new FileNotFoundError(dir || '.');
    if (info.type !== 'directory') throw new Error(`${dir} is a file, not a directory.`);
    const names = new Map<string, DirEntry['type']>();
    if (this.baseShowsDirectory(dir)) {
      const fromBase = (await this.base.stat(dir))?.type === 'directory' ? await this.base.list(dir) : [];
      this.observations.listed(dir, fromBase.map((entry) => entry.name));
      await this.observeAll(fromBase.filter((entry) => entry.type === 'file').map((entry) => joinPath(dir, entry.name)));
      for (const entry of fromBase) {
        const child = joinPath(dir, entry.name);
        if (this.entries.has(child) || this.hidden(child)) continue;
        names.set(entry.name, entry.type);
      }
    }
    const prefix = dir === '' ? '' : `${dir}/`;
    for (const file of this.writtenPaths()) {
      if (!isBelow(dir, file)) continue;
      const rest = file.slice(prefix.length);
      const slash = rest.indexOf('/');
      names.set(slash < 0 ? rest : rest.slice(0, slash), slash < 0 ? 'file' : 'directory');
    }
    return [...names].map(([name, type]) => ({ name, type })).sort((a, b) => comparePaths(a.name, b.name));
  }

  /** Every file and folder below `dir` in the merged view; symlinked folders are not entered. */
  private async walkMerged(dir: string): Promise<{ files: string[]; dirs: string[] }> {
    const files: string[] = [];
    const dirs: string[] = [];
    for (const entry of await this.listMerged(dir)) {
      const child = joinPath(dir, entry.name);
      if ((await this.resolve(child)) !== child) continue;
      if (entry.type === 'file') {
        files.push(child);
      } else {
        dirs.push(child);
        const below = await this.walkMerged(child);
        files.push(...below.files);
        dirs.push(...below.dirs);
      }
    }
    return { files, dirs };
  }

  /**
   * The base a path's first change is checked against on accept: what the speculation observed of
   * the real file (a read's hash, a stat, "absent"), else the file as it is now. Its content is read
   * only then, and — when its identity is sure to show a change — in the background: the hash is
   * needed by accept, not by the write.
   */
  private async recordBase(file: string, real: Placement): Promise<BaseRecord> {
    const info = real.target;
    if (!info?.isFile()) return this.observations.baseFor(file, { exists: false });
    const identity = identityOf(info);
    const now: CurrentFile = { exists: true, size: info.size, mtimeMs: info.mtimeMs, mode: info.mode & 0o7777, identity, trusted: trustedIdentity(info, this.now()) };
    if (!this.observations.needsContent(file, identity)) return this.observations.baseFor(file, now);
    let content: CurrentContent;
    if (now.trusted) {
      content = { sha256: this.hashWhileUnchanged(real.relative, file, now.trusted), size: info.size, identity: now.trusted };
    } else {
      const seenAt = this.now();
      const read = await readRegularFile(toAbsolute(this.root, real.relative), file);
      content = { sha256: digestOf(read.data), size: read.data.length, identity: trustedIdentity(read.info, seenAt) };
    }
    return this.observations.baseFor(file, now, content);
  }

  /**
   * The hash of a real file read in the background, if the file read still has `identity` (then it
   * holds what it held when the identity was taken); CHANGED_SINCE_SEEN otherwise. Never rejects.
   */
  private hashWhileUnchanged(relative: string, file: string, identity: StatIdentity): Promise<string> {
    return readRegularFile(toAbsolute(this.root, relative), file).then(
      (read) => (sameIdentity(identityOf(read.info), identity) ? digestOf(read.data) : CHANGED_SINCE_SEEN),
      () => CHANGED_SINCE_SEEN,
    );
  }

  /** The merged view's type at `file`, given the base's type there (`fromBase`); records what it saw of the base as statMerged does. */
  private mergedType(file: string, fromBase: { type: FileStat['type'] | undefined; info?: Stats }): FileStat['type'] | undefined {
    const entry = this.entries.get(file);
    if (entry?.kind === 'written') return 'file';
    if (file !== '' && this.hasWrittenBelow(file)) return 'directory';
    if (entry?.kind === 'deleted' || this.hidden(file)) return undefined;
    if (fromBase.type !== 'directory') this.noteSeen(file, fromBase.info);
    return fromBase.type;
  }

  /**
   * Refuses a write the merged view cannot take (a folder there, a file in the way, an unsafe new
   * name), from the placement alone: the folders before the deepest existing component exist,
   * the ones after it do not.
   */
  private assertWritable(file: string, real: Placement): void {
    if (file === '') throw new Error('Cannot write to the workspace folder itself; give a file path.');
    const depth = file.split('/').length;
    const baseAt = (level: number): { type: FileStat['type'] | undefined; info?: Stats } => {
      if (level < real.foundDepth) return { type: 'directory' };
      if (level === real.foundDepth) return real.found === 'directory' ? { type: 'directory' } : { type: typeOfStats(real.found), info: real.found };
      return { type: undefined };
    };
    const info = this.mergedType(file, baseAt(depth));
    if (info === 'directory') throw new Error(`${file} is a directory; give a file path.`);
    if (info === 'special') throw new SpecialFileError(file, 'special file');
    let firstNew = info ? depth : 0;
    for (const [index, dir] of ancestorsOf(file).entries()) {
      const above = this.mergedType(dir, baseAt(index + 1));
      if (above === 'file' || above === 'special') throw new Error(`Cannot write ${file}: ${dir} is a file, not a directory.`);
      if (!info && above) firstNew = index + 1;
    }
    assertCreatableNames(file, firstNew);
  }

  /**
   * Starts storing a blob for new content. It gets its file's mode (the overlay folder is private
   * either way), so the sandbox can show it to a command through a hard link instead of a copy;
   * the mode is guessed from what is known before the path is placed, and corrected if need be.
   */
  private startBlob(data: Uint8Array, previous: OverlayEntry | undefined): PendingBlob {
    const blob = String(++this.blobCount);
    const guess = previous?.kind === 'written' ? (previous.mode ?? NEW_FILE_MODE) : previous?.base.exists ? previous.base.mode : NEW_FILE_MODE;
    return startBlob(this.blobPath(blob), blob, data, guess & 0o777);
  }

  /**
   * Stores new content for `file`; `mode` overrides the kept mode (a moved file keeps its own).
   * The replaced blob is removed, or handed to `retired` when the caller may still undo. `real` and
   * `pending` come from a caller that placed the path and started the blob already.
   */
  private async writeMerged(file: string, data: Uint8Array, mode: number | undefined, retired?: string[], real?: Placement, pending?: PendingBlob): Promise<void> {
    const previous = this.entries.get(file);
    const blob = pending ?? this.startBlob(data, previous);
    try {
      const placed = real ?? (await this.base.place(file));
      this.assertWritable(file, placed);
      // The base (reading the real file only for a blind first write) is worked out while the blob
      // is written; the new content's hash is for accept, and is not waited for.
      const base = previous ? previous.base : await this.recordBase(file, placed);
      const keptMode = previous?.kind === 'written' ? previous.mode : base.exists ? base.mode : undefined;
      const entryMode = mode ?? keptMode;
      try {
        await blob.finish((entryMode ?? NEW_FILE_MODE) & 0o777);
      } catch (error) {
        throw new OverlayStorageError(file, 'store', codeOf(error));
      }
      const entry: WrittenEntry = { kind: 'written', base, blob: blob.name, sha256: digestOf(data), size: data.length, mtimeMs: Date.now(), mode: entryMode };
      this.entries.set(file, entry);
      if (previous?.kind === 'written') this.retire(previous, retired);
    } catch (error) {
      blob.abandon();
      throw error;
    }
  }

  private retire(previous: WrittenEntry, retired: string[] | undefined): void {
    if (retired) retired.push(previous.blob);
    else this.dropBlob(previous);
  }

  private async deleteFileMerged(file: string, retired?: string[], real?: Placement): Promise<void> {
    const previous = this.entries.get(file);
    const base = previous ? previous.base : await this.recordBase(file, real ?? (await this.placed(file)));
    if (previous?.kind === 'written') this.retire(previous, retired);
    // A file the speculation created and deletes again leaves no trace.
    if (base.exists) this.entries.set(file, { kind: 'deleted', base });
    else this.entries.delete(file);
  }

  private async moveFile(source: string, target: string): Promise<void> {
    const data = await this.readMerged(source);
    const mode = (await this.statMerged(source))?.mode;
    await this.writeMerged(target, data, mode);
    await this.deleteFileMerged(source);
  }

  /** A glob pattern relative to the workspace (absolute ones must point inside it). */
  private relativePattern(pattern: string): string {
    let text = pattern;
    if (path.isAbsolute(text)) {
      if (text !== this.root && !text.startsWith(`${this.root}/`)) throw new PathOutsideWorkspaceError(pattern, 'is an absolute pattern outside the workspace');
      text = text.slice(this.root.length).replace(/^\/+/, '');
    }
    text = text.replace(/^(\.\/)+/, '');
    if (text.split('/').includes('..')) throw new PathOutsideWorkspaceError(pattern, 'uses ".." to leave the searched folder');
    return text;
  }

  /**
   * Whether a walk from `start` (the one glob and search use on the real workspace) would reach
   * this overlay file: never into .git or node_modules, and past .gitignore rules when asked.
   */
  private async walkReaches(file: string, start: string, respectGitignore: boolean): Promise<boolean> {
    const below = file.slice(start === '' ? 0 : start.length + 1).split('/');
    if (below.slice(0, -1).some((name) => ALWAYS_SKIPPED_DIRS.has(name))) return false;
    if (!respectGitignore) return true;
    let stack = IgnoreStack.EMPTY;
    const dirs = ['', ...ancestorsOf(file)];
    for (const [index, dir] of dirs.entries()) {
      if (isBelow(start, dir) && stack.isIgnored(dir, true)) return false;
      const text = await this.gitignoreText(joinPath(dir, '.gitignore'));
      if (text !== undefined) stack = stack.with(parseGitignore(text, dir));
      if (index === dirs.length - 1) return !stack.isIgnored(file, false);
    }
    return true;
  }

  private async gitignoreText(file: string): Promise<string | undefined> {
    try {
      const info = await this.statMerged(file);
      return info?.type === 'file' ? Buffer.from(await this.readMerged(file)).toString('utf8') : undefined;
    } catch {
      return undefined;
    }
  }
}
