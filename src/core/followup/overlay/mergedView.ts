// The overlay's merged view: what the speculation sees of the workspace — its own writes and
// deletions over the real files — and what it observed of the real files on the way, which each
// path's first change is later held against on accept.
import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import * as path from 'node:path';
import { specialKindOf } from '../../fs/fileKind';
import { assertCreatableNames, toAbsolute, type Placement, type Placer } from '../../fs/paths';
import { readRegularFile } from '../../fs/regularFile';
import { joinPath, comparePaths } from '../../fs/treeWalk';
import { FileNotFoundError, SpecialFileError, WriteRefusedError, type DirEntry, type FileStat, type WorkspaceFs, type WriteExpectation } from '../../fs/workspaceFs';
import type { ApplyFs } from './applyFs';
import { readBlob } from './blobs';
import { digestOf, HASH_INLINE_LIMIT } from './digest';
import { isAtOrBelow, isBelow, type BaseRecord, type OverlayEntry, type WrittenEntry } from './entries';
import { CHANGED_SINCE_SEEN, ObservationLog, identityOf, sameIdentity, trustedIdentity, type CurrentContent, type CurrentFile, type StatIdentity } from './observations';
import { codeOf, OverlayStorageError } from './overlayErrors';

/** Mode reported for files the speculation created (the real one gets the default mode on accept). */
export const NEW_FILE_MODE = 0o644;
const DIRECTORY_MODE = 0o755;
/** A real file whose change time is this close to a sandboxed command's start may have changed while it ran (coarse file-system clocks). */
export const SANDBOX_CLOCK_SLACK_MS = 100;

export function ancestorsOf(file: string): string[] {
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

export class MergedView {
  readonly root: string;
  /** The speculation's changes, by workspace path. */
  readonly entries = new Map<string, OverlayEntry>();
  /** Base folders deleted in the overlay; they and what is below them are hidden. */
  readonly deletedDirs = new Set<string>();
  /** What the speculation saw of real files; the base of each file's first write comes from it. */
  readonly observations = new ObservationLog();

  constructor(
    readonly base: WorkspaceFs & Placer,
    /** The overlay folder (its blobs are below it). */
    private readonly dir: string,
    private readonly applyFs: ApplyFs,
    /** The wall clock files' times are compared with (tests move it on). */
    private readonly clock: (() => number) | undefined,
  ) {
    this.root = base.root;
  }

  writtenPaths(): string[] {
    return [...this.entries].filter(([, entry]) => entry.kind === 'written').map(([file]) => file);
  }
  /** Below a folder the overlay deleted (and not re-created by a write). */
  hidden(file: string): boolean {
    for (const dir of this.deletedDirs) if (isAtOrBelow(dir, file)) return true;
    return false;
  }
  hasWrittenBelow(dir: string): boolean {
    for (const [file, entry] of this.entries) if (entry.kind === 'written' && isBelow(dir, file)) return true;
    return false;
  }
  /** A folder that exists only in the overlay changed when its newest file did (stable across stats). */
  latestWriteBelow(dir: string): number {
    let latest = 0;
    for (const [file, entry] of this.entries) if (entry.kind === 'written' && isBelow(dir, file)) latest = Math.max(latest, entry.mtimeMs);
    return latest;
  }
  /** Whether the base's version of this file is what the merged view shows. */
  baseShowsFile(file: string): boolean {
    return !this.entries.has(file) && !this.hidden(file);
  }
  /** Whether the base's folder at this path is part of the merged view. */
  baseShowsDirectory(dir: string): boolean {
    return dir === '' || (this.entries.get(dir) === undefined && !this.hidden(dir));
  }
  /** Whether the merged view at this path is (also) the base's file or folder. */
  async baseHas(target: string, type: FileStat['type']): Promise<boolean> {
    const visible = type === 'directory' ? this.baseShowsDirectory(target) : this.baseShowsFile(target);
    return visible && (await this.base.stat(target))?.type === type;
  }
  async readBlob(file: string, entry: WrittenEntry): Promise<Uint8Array> {
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
  async placed(file: string): Promise<Placement> {
    const info = await lstatOrUndefined(toAbsolute(this.root, file));
    if (!info || info.isSymbolicLink()) return this.base.place(file);
    return { relative: file, target: info, foundDepth: file === '' ? 0 : file.split('/').length, found: info };
  }
  /** Reads `file` in the merged view; `real` is its placement when the caller has it (a read-through then costs one open and one read). */
  async readMerged(file: string, real?: Placement): Promise<Uint8Array> {
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
  realStat(file: string) {
    return this.applyFs.lstat(toAbsolute(this.root, file));
  }
  /** Records that the speculation saw this real path (stat, listing, glob or search) unless it knows it already. */
  async observe(file: string, info?: FileStat): Promise<void> {
    if (this.observations.knows(file) || this.entries.has(file)) return;
    if (info && info.type !== 'file') return;
    const real = await this.realStat(file);
    if (!real) this.observations.sawMissing(file);
    else if (real.type === 'file') this.observations.sawStat(file, identityOf(real));
  }
  /** observe() for a path whose lstat the caller already has. */
  noteSeen(file: string, info: Stats | undefined): void {
    if (this.observations.knows(file) || this.entries.has(file)) return;
    if (!info) this.observations.sawMissing(file);
    else if (info.isFile()) this.observations.sawStat(file, identityOf(info));
  }
  async observeAll(files: Iterable<string>): Promise<void> {
    await Promise.all([...new Set(files)].map((file) => this.observe(file)));
  }
  async statMerged(file: string, real?: Placement): Promise<FileStat | undefined> {
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
  async listMerged(dir: string): Promise<DirEntry[]> {
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
  async walkMerged(dir: string): Promise<{ files: string[]; dirs: string[] }> {
    const files: string[] = [];
    const dirs: string[] = [];
    for (const entry of await this.listMerged(dir)) {
      const child = joinPath(dir, entry.name);
      if ((await this.base.resolve(child)) !== child) continue;
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
  async recordBase(file: string, real: Placement): Promise<BaseRecord> {
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
  hashWhileUnchanged(relative: string, file: string, identity: StatIdentity): Promise<string> {
    return readRegularFile(toAbsolute(this.root, relative), file).then(
      (read) => (sameIdentity(identityOf(read.info), identity) ? digestOf(read.data) : CHANGED_SINCE_SEEN),
      () => CHANGED_SINCE_SEEN,
    );
  }
  /** The merged view's type at `file`, given the base's type there (`fromBase`); records what it saw of the base as statMerged does. */
  mergedType(file: string, fromBase: { type: FileStat['type'] | undefined; info?: Stats }): FileStat['type'] | undefined {
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
  assertWritable(file: string, real: Placement): void {
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
  blobPath(blob: string): string {
    return path.join(this.dir, 'blobs', blob);
  }
  now(): number {
    return (this.clock ?? Date.now)();
  }

  /** Records what a sandboxed command found at a path it changed, as of its start (see applySandboxChanges). */
  async sawBeforeSandbox(file: string, startedAt: number): Promise<void> {
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

  /**
   * The entry a caller means: paths from writtenFiles() or a conflict are used as they are, so a
   * file whose folder has since become a symlink out of the workspace can still be dropped.
   */
  async entryKey(requested: string): Promise<string> {
    return this.entries.has(requested) ? requested : this.base.resolve(requested);
  }

  /** Compare-and-replace on the merged view: the speculation's own file must still be as its tool read it. */
  async assertAsExpected(file: string, expect: WriteExpectation): Promise<void> {
    const info = await this.statMerged(file);
    const present = info?.type === 'file';
    if (!expect.exists ? !present : present && ('sha256' in expect ? (await digestOf(await this.readMerged(file))) === expect.sha256 : info.size === expect.size && info.mtimeMs === expect.mtimeMs)) return;
    throw new WriteRefusedError(file, 'changed', `${file} was changed after it was read; it was not written. Read it again and redo the change.`);
  }
}
