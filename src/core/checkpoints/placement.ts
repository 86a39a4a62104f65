// Re-placing a recorded path before anything touches it: it must still be itself inside the
// workspace — not leading out, nor elsewhere inside, through a folder that became a symlink.
import * as path from 'node:path';
import { resolveInsideWorkspace, toAbsolute } from '../fs/paths';
import type { CheckpointFs } from './checkpointFs';

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
