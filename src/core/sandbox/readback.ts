// Reads what a sandboxed command changed out of its overlay upper folder: regular files are writes
// (mode kept), 0/0 character devices deletions, and a folder whose old entries vanished from the
// merged view is one the command replaced (opaque). Symlinks, special files and .git changes are problems.
import { chmodSync, lstatSync, readdirSync, readFileSync, readlinkSync, type Dirent, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { sameIndexEntries } from './gitIndex';
import type { SandboxChange, SandboxProblem } from './shellSandbox';

export interface ReadbackInput {
  upper: string;
  /** The speculation's layer below the upper folder, or undefined when there was none. */
  layer: string | undefined;
  realRoot: string;
  /** The merged view as the command left it (through the keeper's /proc/<pid>/root), for opaque folders. */
  merged: string;
  maxWriteBytes: number;
}

export interface Readback {
  changes: SandboxChange[];
  problems: SandboxProblem[];
  /** Bytes of regular files the command left in the workspace. */
  writtenBytes: number;
}

type Kind = 'file' | 'directory' | 'symlink' | 'whiteout' | 'special';

function kindOf(info: Stats): Kind {
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'directory';
  if (info.isSymbolicLink()) return 'symlink';
  if (info.isCharacterDevice() && info.rdev === 0) return 'whiteout';
  return 'special';
}

/** The kind a directory entry names; a character device in the layer is one of our whiteouts. */
function kindOfEntry(entry: Dirent, inLayer: boolean): Kind {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isCharacterDevice() && inLayer) return 'whiteout';
  return 'special';
}

function entriesOrEmpty(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);
const parentOf = (file: string) => (file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '');
const nameOf = (file: string) => file.slice(file.lastIndexOf('/') + 1);
const under = (root: string, file: string) => (file === '' ? root : path.join(root, ...file.split('/')));

function isGitPath(file: string): boolean {
  return file.split('/').includes('.git');
}

interface Shown {
  kind: Kind;
  /** Where that version lives: in the layer or in the real workspace. */
  at: string;
}

/**
 * The workspace as the command was shown it (the layer over the real files), one folder listing
 * at a time (cached): a layer entry wins over the real one of its name, a whiteout hides it. The
 * real side is read now, after the command; a user's change during the command shows here and is
 * caught by the accept's conflict check (the overlay records it as changed since the start).
 */
class ShownView {
  private readonly listings = new Map<string, Map<string, Shown> | null>();

  constructor(private readonly layer: string | undefined, private readonly realRoot: string) {}

  /** What was at a path, or undefined when nothing was. */
  locate(file: string): Shown | undefined {
    if (file === '') return { kind: 'directory', at: this.realRoot };
    return this.listing(parentOf(file))?.get(nameOf(file));
  }

  /** The folder's entries, or null when the path was no folder. */
  listing(dir: string): Map<string, Shown> | null {
    const cached = this.listings.get(dir);
    if (cached !== undefined) return cached;
    const here = this.locate(dir);
    let entries: Map<string, Shown> | null = null;
    if (here?.kind === 'directory') {
      entries = new Map();
      const real = under(this.realRoot, dir);
      for (const entry of entriesOrEmpty(real)) entries.set(entry.name, { kind: kindOfEntry(entry, false), at: path.join(real, entry.name) });
      if (this.layer !== undefined) {
        const layered = under(this.layer, dir);
        for (const entry of entriesOrEmpty(layered)) {
          const kind = kindOfEntry(entry, true);
          if (kind === 'whiteout') entries.delete(entry.name);
          else entries.set(entry.name, { kind, at: path.join(layered, entry.name) });
        }
      }
    }
    this.listings.set(dir, entries);
    return entries;
  }

  /** Every file and folder below `dir`, files first then folders deepest first (the order to delete them). */
  subtree(dir: string): { files: string[]; dirs: string[] } {
    const files: string[] = [];
    const dirs: string[] = [];
    for (const [name, shown] of this.listing(dir) ?? []) {
      const child = join(dir, name);
      if (shown.kind === 'directory') {
        const below = this.subtree(child);
        files.push(...below.files);
        dirs.push(...below.dirs, child);
      } else {
        files.push(child);
      }
    }
    return { files, dirs };
  }
}

/** Files up to this size are compared in one synchronous read; larger ones asynchronously. */
const SYNC_COMPARE_BYTES = 1024 * 1024;
/** Entries handled between yields to the event loop (synchronous calls keep thread-pool hops away). */
const ENTRIES_PER_SLICE = 256;

async function sameContent(a: string, b: string, size: number): Promise<boolean> {
  if (size === 0) return true;
  if (size <= SYNC_COMPARE_BYTES) return readFileSync(a).equals(readFileSync(b));
  const [left, right] = await Promise.all([readFile(a), readFile(b)]);
  return left.equals(right);
}

/** Makes a file or folder the command left unreadable readable to us (it is our own copy; the mode is recorded first). */
function ensureReadable(file: string, info: Stats): void {
  const needed = info.isDirectory() ? 0o700 : 0o400;
  if ((info.mode & needed) !== needed) chmodSync(file, (info.mode & 0o7777) | needed);
}

export async function readBack(input: ReadbackInput): Promise<Readback> {
  const shown = new ShownView(input.layer, input.realRoot);
  const deletedFiles: string[] = [];
  const deletedDirs: string[] = [];
  const writes: SandboxChange[] = [];
  const problems: SandboxProblem[] = [];
  let writtenBytes = 0;
  let handled = 0;

  const deleteShown = (file: string, kind: Kind): void => {
    if (kind === 'directory') {
      const below = shown.subtree(file);
      deletedFiles.push(...below.files);
      deletedDirs.push(...below.dirs, file);
    } else {
      deletedFiles.push(file);
    }
  };

  const visit = async (dir: string): Promise<void> => {
    const upperDir = under(input.upper, dir);
    const entries = readdirSync(upperDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const before = shown.locate(dir);
    if (dir !== '' && before && before.kind !== 'directory') deleteShown(dir, before.kind);
    if (dir !== '' && before?.kind === 'directory') {
      // An old entry the upper folder does not mention is either still there (a copied-up folder)
      // or hidden (a folder the command removed and made again: opaque). The merged view decides.
      const mentioned = new Set(entries.map((entry) => entry.name));
      const unmentioned = [...(shown.listing(dir)?.keys() ?? [])].filter((name) => !mentioned.has(name));
      const merged = under(input.merged, dir);
      if (unmentioned.length > 0 && !unmentioned.some((name) => lstatOrUndefined(path.join(merged, name)))) {
        for (const name of unmentioned) deleteShown(join(dir, name), shown.locate(join(dir, name))!.kind);
      }
    }
    for (const entry of entries) {
      if (++handled % ENTRIES_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const file = join(dir, entry.name);
      const upperFile = path.join(upperDir, entry.name);
      const info = lstatSync(upperFile);
      const kind = kindOf(info);
      if (kind === 'directory') {
        ensureReadable(upperFile, info);
        await visit(file);
        continue;
      }
      const previous = shown.locate(file);
      if (kind === 'whiteout') {
        if (previous) deleteShown(file, previous.kind);
        continue;
      }
      if (kind === 'symlink') {
        const target = readlinkSync(upperFile);
        const resolved = path.resolve(under(input.realRoot, dir), target);
        const inside = resolved === input.realRoot || resolved.startsWith(`${input.realRoot}/`);
        problems.push({
          kind: 'symlink',
          path: file,
          detail: inside
            ? `it created the symlink ${file}, which a speculation cannot carry over to the workspace`
            : `it created the symlink ${file} pointing outside the workspace (${target})`,
        });
        continue;
      }
      if (kind === 'special') {
        problems.push({ kind: 'special-file', path: file, detail: `it created ${file}, which is neither a file nor a folder` });
        continue;
      }
      writtenBytes += info.size;
      ensureReadable(upperFile, info);
      const mode = info.mode & 0o7777;
      if (previous?.kind === 'directory') deleteShown(file, 'directory');
      if (previous?.kind === 'file') {
        const old = lstatSync(previous.at);
        // A copy-up without a change (touch, a rewrite of the same bytes) is not a change.
        if (old.size === info.size && (old.mode & 0o7777) === mode && (await sameContent(previous.at, upperFile, info.size))) continue;
      }
      writes.push({ kind: 'write', path: file, mode, size: info.size, contentPath: upperFile });
    }
  };
  await visit('');

  if (writtenBytes > input.maxWriteBytes) {
    problems.push({ kind: 'too-large', path: '', detail: `it wrote ${formatBytes(writtenBytes)}, more than the limit of ${formatBytes(input.maxWriteBytes)}` });
  }
  const gitChanges = unique([...deletedFiles, ...deletedDirs, ...writes.map((change) => change.path), ...problems.map((problem) => problem.path)].filter(isGitPath));
  if (gitChanges.length > 0 && !(await onlyIndexRefresh(gitChanges, shown, input.upper))) {
    problems.push({ kind: 'git', path: gitChanges[0], detail: `it changed the git repository (${gitChanges.slice(0, 3).join(', ')}${gitChanges.length > 3 ? ', …' : ''})` });
  }
  const isRefresh = gitChanges.length > 0 && problems.every((problem) => problem.kind !== 'git');
  const keep = (file: string) => !(isRefresh && isGitPath(file));
  const changes: SandboxChange[] = [
    ...unique(deletedFiles).filter(keep).map((file): SandboxChange => ({ kind: 'delete', path: file, type: 'file' })),
    ...unique(deletedDirs).filter(keep).map((dir): SandboxChange => ({ kind: 'delete', path: dir, type: 'directory' })),
    ...writes.filter((change) => keep(change.path)),
  ];
  return { changes, problems, writtenBytes };
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

/** Whether the only git change is `.git/index` with the same entries (git refreshed its stat cache). */
async function onlyIndexRefresh(changes: string[], shown: ShownView, upper: string): Promise<boolean> {
  if (changes.length !== 1 || changes[0] !== '.git/index') return false;
  const before = shown.locate('.git/index');
  if (before?.kind !== 'file') return false;
  try {
    return sameIndexEntries(await readFile(before.at), await readFile(path.join(upper, '.git', 'index')));
  } catch {
    return false;
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round(bytes / (1024 * 1024))} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}
