// Reads what a sandboxed command changed out of its overlay upper folder: regular files are writes
// (mode kept), 0/0 character devices deletions, and a folder whose old entries vanished from the
// merged view is one the command replaced (opaque). Symlinks, special files and .git changes are problems.
import { chmod, lstat, readdir, readFile, readlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
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

async function lstatOrUndefined(file: string): Promise<Stats | undefined> {
  try {
    return await lstat(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

async function listOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);

function isGitPath(file: string): boolean {
  return file.split('/').includes('.git');
}

/**
 * The workspace as the command was shown it (the layer over the real files), asked path by path.
 * The real side is read now, after the command: a user's change during the command shows here and
 * is caught by the accept's conflict check (the caller records it as changed since the start).
 */
class ShownView {
  constructor(private readonly layer: string | undefined, private readonly realRoot: string) {}

  private inLayer(file: string): string | undefined {
    return this.layer === undefined ? undefined : path.join(this.layer, ...file.split('/'));
  }

  /** Where the shown version of a path lives, and what it is; undefined when it was absent. */
  async locate(file: string): Promise<{ at: string; kind: Kind } | undefined> {
    // Walk down: a whiteout or a non-folder in the layer on the way hides the real files below.
    const parts = file === '' ? [] : file.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      const layered = this.inLayer(prefix);
      const info = layered ? await lstatOrUndefined(layered) : undefined;
      if (!info) continue;
      const kind = kindOf(info);
      if (kind === 'whiteout') return undefined;
      if (kind !== 'directory') return i === parts.length ? { at: layered!, kind } : undefined;
      if (i === parts.length) return { at: layered!, kind };
    }
    const real = path.join(this.realRoot, ...parts);
    const info = await lstatOrUndefined(real);
    return info ? { at: real, kind: kindOf(info) } : undefined;
  }

  /** Names in a folder of the shown view. */
  async children(dir: string): Promise<string[]> {
    const here = await this.locate(dir);
    if (here?.kind !== 'directory') return [];
    const names = new Set<string>();
    const layered = this.inLayer(dir);
    const hidden = new Set<string>();
    if (layered) {
      for (const name of await listOrEmpty(layered)) {
        const info = await lstatOrUndefined(path.join(layered, name));
        if (info && kindOf(info) === 'whiteout') hidden.add(name);
        else names.add(name);
      }
    }
    // A folder that is a file in the layer would have ended locate() above, so the real one shows through.
    for (const name of await listOrEmpty(path.join(this.realRoot, ...(dir === '' ? [] : dir.split('/'))))) {
      if (!hidden.has(name)) names.add(name);
    }
    return [...names];
  }

  /** Every file and folder below `dir`, files first then folders deepest first (the order to delete them). */
  async subtree(dir: string): Promise<{ files: string[]; dirs: string[] }> {
    const files: string[] = [];
    const dirs: string[] = [];
    for (const name of await this.children(dir)) {
      const child = join(dir, name);
      const info = await this.locate(child);
      if (info?.kind === 'directory') {
        const below = await this.subtree(child);
        files.push(...below.files);
        dirs.push(...below.dirs, child);
      } else if (info) {
        files.push(child);
      }
    }
    return { files, dirs };
  }
}

async function sameContent(a: string, b: string, size: number): Promise<boolean> {
  if (size === 0) return true;
  const [left, right] = await Promise.all([readFile(a), readFile(b)]);
  return left.equals(right);
}

/** Makes a file or folder the command left unreadable readable to us (it is our own copy; the mode is recorded first). */
async function ensureReadable(file: string, info: Stats): Promise<void> {
  const needed = info.isDirectory() ? 0o700 : 0o400;
  if ((info.mode & needed) !== needed) await chmod(file, (info.mode & 0o7777) | needed);
}

export async function readBack(input: ReadbackInput): Promise<Readback> {
  const shown = new ShownView(input.layer, input.realRoot);
  const deletedFiles: string[] = [];
  const deletedDirs: string[] = [];
  const writes: SandboxChange[] = [];
  const problems: SandboxProblem[] = [];
  let writtenBytes = 0;

  const deleteShown = async (file: string, kind: Kind): Promise<void> => {
    if (kind === 'directory') {
      const below = await shown.subtree(file);
      deletedFiles.push(...below.files);
      deletedDirs.push(...below.dirs, file);
    } else {
      deletedFiles.push(file);
    }
  };

  const visit = async (dir: string): Promise<void> => {
    const upperDir = path.join(input.upper, ...(dir === '' ? [] : dir.split('/')));
    const names = await readdir(upperDir);
    const before = await shown.locate(dir);
    if (dir !== '' && before && before.kind !== 'directory') await deleteShown(dir, before.kind);
    if (dir !== '' && before?.kind === 'directory') {
      // An old entry the upper folder does not mention is either still there (a copied-up folder)
      // or hidden (a folder the command removed and made again: opaque). The merged view decides.
      const mentioned = new Set(names);
      const unmentioned = (await shown.children(dir)).filter((name) => !mentioned.has(name));
      let opaque = unmentioned.length > 0;
      for (const name of unmentioned) {
        if (await lstatOrUndefined(path.join(input.merged, ...(dir === '' ? [] : dir.split('/')), name))) {
          opaque = false;
          break;
        }
      }
      if (opaque) {
        for (const name of unmentioned) {
          const child = join(dir, name);
          const info = await shown.locate(child);
          if (info) await deleteShown(child, info.kind);
        }
      }
    }
    for (const name of names.sort()) {
      const file = join(dir, name);
      const upperFile = path.join(upperDir, name);
      const info = await lstat(upperFile);
      const kind = kindOf(info);
      if (kind === 'directory') {
        await ensureReadable(upperFile, info);
        await visit(file);
        continue;
      }
      const previous = await shown.locate(file);
      if (kind === 'whiteout') {
        if (!previous) continue;
        await deleteShown(file, previous.kind);
        continue;
      }
      if (kind === 'symlink') {
        const target = await readlink(upperFile);
        const resolved = path.resolve(path.join(input.realRoot, ...dir.split('/').filter(Boolean)), target);
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
      await ensureReadable(upperFile, info);
      const mode = info.mode & 0o7777;
      if (previous?.kind === 'directory') await deleteShown(file, 'directory');
      if (previous?.kind === 'file') {
        const old = await lstat(previous.at);
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
  const before = await shown.locate('.git/index');
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
