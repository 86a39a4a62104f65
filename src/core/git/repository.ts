// Which repositories commit-ahead takes on: the workspace's own plain repository (a `.git` folder,
// not a file or symlink), objects all its own (no alternates, no symlinks), loose refs the files
// backend can compare-and-swap. A workspace is untrusted input: anything else stays a boundary.
import { lstat, readdir } from 'node:fs/promises';
import * as path from 'node:path';
import { runGit } from './gitCommand';

export interface GitRepository {
  /** Absolute, symlink-resolved workspace root. */
  root: string;
  /** root/.git, a real folder. */
  gitDir: string;
  /** Hex digits of an object id: 40 (SHA-1) or 64 (SHA-256). */
  oidLength: 40 | 64;
}

export type RepositoryCheck = { ok: true; repository: GitRepository } | { ok: false; reason: string };

async function lstatOrUndefined(file: string) {
  try {
    return await lstat(file);
  } catch {
    return undefined;
  }
}

/** The first symlink among the entries of `dir` (not recursive), or undefined. */
async function symlinkIn(dir: string): Promise<string | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  for (const name of names) if ((await lstatOrUndefined(path.join(dir, name)))?.isSymbolicLink()) return path.join(dir, name);
  return undefined;
}

export async function checkRepository(root: string): Promise<RepositoryCheck> {
  const gitDir = path.join(root, '.git');
  const info = await lstatOrUndefined(gitDir);
  if (!info) return { ok: false, reason: 'the workspace has no git repository of its own' };
  if (!info.isDirectory()) return { ok: false, reason: 'its .git is not a folder (a linked worktree, a submodule or a symlink), which commit-ahead does not take on' };
  for (const dir of [gitDir, path.join(gitDir, 'objects'), path.join(gitDir, 'objects', 'info'), path.join(gitDir, 'objects', 'pack'), path.join(gitDir, 'refs')]) {
    const link = await symlinkIn(dir);
    if (link) return { ok: false, reason: `the repository holds a symlink (${path.relative(root, link)}), which git would follow out of the workspace` };
  }
  if (await lstatOrUndefined(path.join(gitDir, 'objects', 'info', 'alternates'))) return { ok: false, reason: 'the repository borrows objects from elsewhere (objects/info/alternates)' };
  if (await lstatOrUndefined(path.join(gitDir, 'commondir'))) return { ok: false, reason: 'the repository shares its data with another (commondir)' };
  const config = await runGit(['config', '--local', '--list'], { gitDir });
  if (config.code !== 0) return { ok: false, reason: `git cannot read the repository (${config.stderr.trim().split('\n')[0] ?? 'unknown error'})` };
  const settings = new Map<string, string>();
  for (const line of config.stdout.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) settings.set(line.slice(0, at).toLowerCase(), line.slice(at + 1));
  }
  if (settings.get('core.bare') === 'true') return { ok: false, reason: 'the repository is bare' };
  if (settings.has('core.worktree')) return { ok: false, reason: 'the repository names another work tree (core.worktree)' };
  if ((settings.get('extensions.refstorage') ?? 'files') !== 'files') return { ok: false, reason: 'the repository keeps its refs in a reftable, which commit-ahead does not take on' };
  const format = settings.get('extensions.objectformat') ?? 'sha1';
  if (format !== 'sha1' && format !== 'sha256') return { ok: false, reason: `the repository's object format ${format} is unknown` };
  return { ok: true, repository: { root, gitDir, oidLength: format === 'sha1' ? 40 : 64 } };
}
