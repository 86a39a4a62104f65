// Re-placing a recorded path before anything touches it: it must still be itself inside the
// workspace — not leading out, nor elsewhere inside, through a folder that became a symlink.
import * as path from 'node:path';
import { resolveInsideWorkspace, toAbsolute } from '../fs/paths';
import type { CheckpointFs, CheckpointStat } from './checkpointFs';

export type PlacementProblem = 'outside-workspace' | 'path-changed';

export async function placementProblem(root: string, relative: string): Promise<PlacementProblem | undefined> {
  try {
    return (await resolveInsideWorkspace(root, relative)) === relative ? undefined : 'path-changed';
  } catch {
    return 'outside-workspace';
  }
}

/** Folders above `relative` that do not exist (parents first), or 'blocked' when a non-folder is in the way. */
export async function missingParents(fs: CheckpointFs, root: string, relative: string): Promise<string[] | 'blocked'> {
  const missing: string[] = [];
  for (let dir = path.posix.dirname(relative); dir !== '.' && dir !== ''; dir = path.posix.dirname(dir)) {
    const info = await fs.lstat(toAbsolute(root, dir));
    if (info?.type === 'directory') break;
    if (info) return 'blocked';
    missing.unshift(dir);
  }
  return missing;
}

/** Deepest first, so a folder is tried only after what was below it. */
export function deepestFirst(dirs: Iterable<string>): string[] {
  return [...new Set(dirs)].sort((a, b) => b.split('/').length - a.split('/').length || (a < b ? 1 : -1));
}

export function parentsFirst(dirs: Iterable<string>): string[] {
  return [...new Set(dirs)].sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1));
}

export function isAtOrBelow(dir: string, candidate: string): boolean {
  return candidate === dir || candidate.startsWith(`${dir}/`);
}

/**
 * The placement checks of one pass over many paths: each folder is re-placed once (a file placed
 * inside it lands on itself unless the folder does not, or the file itself is a symlink), so a
 * hundred files in one folder cost one realpath, not a hundred. A fresh set per pass, so every
 * folder is looked at again right before the pass that writes into it.
 */
export class PlacementPass {
  private readonly folders = new Map<string, Promise<PlacementProblem | undefined>>();
  private readonly parents = new Map<string, Promise<string[] | 'blocked'>>();

  constructor(
    private readonly root: string,
    private readonly fs: CheckpointFs,
  ) {}

  private folderProblem(dir: string): Promise<PlacementProblem | undefined> {
    if (dir === '.' || dir === '') return Promise.resolve(undefined);
    let known = this.folders.get(dir);
    if (!known) {
      known = placementProblem(this.root, dir);
      this.folders.set(dir, known);
    }
    return known;
  }

  /**
   * The file's placement problem, given its lstat taken in this pass: the full, symlink-following
   * placement only when its folder does not land on itself or the file is a symlink (never itself).
   */
  async problem(relative: string, seen: CheckpointStat | undefined): Promise<PlacementProblem | undefined> {
    const folderProblem = await this.folderProblem(path.posix.dirname(relative));
    if (!folderProblem && seen?.type !== 'symlink') return undefined;
    return (await placementProblem(this.root, relative)) ?? (seen?.type === 'symlink' ? 'path-changed' : undefined);
  }

  /** missingParents, once per folder in this pass. */
  missingParents(relative: string): Promise<string[] | 'blocked'> {
    const dir = path.posix.dirname(relative);
    let known = this.parents.get(dir);
    if (!known) {
      known = missingParents(this.fs, this.root, relative);
      this.parents.set(dir, known);
    }
    return known;
  }
}
