// What one accept knows of the workspace folders its files go into: each folder is looked at once
// per phase (an lstat of each component below the root, shared by every file in it), not per path.
import * as path from 'node:path';
import { toAbsolute } from '../../fs/paths';
import type { ApplyFs } from './applyFs';

export type FolderState =
  /** A real folder, reached from the root through real folders only: a path in it places to itself. */
  | { kind: 'folder'; mode: number }
  /** Not there; `missing` are the folders to create (parents first), `parentMode` that of the deepest one there. */
  | { kind: 'missing'; missing: string[]; parentMode: number }
  /** A file (or anything but a folder) is in the way at `at`, whose mode is `mode`. */
  | { kind: 'blocked'; at: string; mode: number }
  /** A symlink on the way (or the root is gone): paths below lead elsewhere; placeAgain says where. */
  | { kind: 'elsewhere' };

/** The folder part of a workspace-relative path ('' = the root). */
export function folderOf(file: string): string {
  const dir = path.posix.dirname(file);
  return dir === '.' ? '' : dir;
}

/**
 * The folders of one phase of an accept. The root is the workspace's realpath, so a folder whose
 * every component below it is a real folder (not a symlink) has no way out of the workspace; a
 * symlink anywhere on the way sends its files to the full, symlink-following placement.
 */
export class FolderChecks {
  private readonly known = new Map<string, Promise<FolderState>>();

  /** `rootState` carries the root's state over from an earlier phase (the root never moves). */
  constructor(
    private readonly root: string,
    private readonly fs: ApplyFs,
    rootState?: Promise<FolderState>,
  ) {
    if (rootState) this.known.set('', rootState);
  }

  /** A fresh set for the next phase: every folder is looked at again, right before it is written into. */
  nextPhase(): FolderChecks {
    return new FolderChecks(this.root, this.fs, this.state(''));
  }

  /** The state of `dir`, looked up at most once per phase; parents first, so each component is lstat'ed once. */
  state(dir: string): Promise<FolderState> {
    let known = this.known.get(dir);
    if (!known) {
      known = this.lookUp(dir);
      this.known.set(dir, known);
    }
    return known;
  }

  private async lookUp(dir: string): Promise<FolderState> {
    if (dir === '') {
      const info = await this.fs.lstat(this.root);
      return info?.type === 'directory' ? { kind: 'folder', mode: info.mode } : { kind: 'elsewhere' };
    }
    const parent = await this.state(folderOf(dir));
    if (parent.kind === 'blocked' || parent.kind === 'elsewhere') return parent;
    if (parent.kind === 'missing') return { kind: 'missing', missing: [...parent.missing, dir], parentMode: parent.parentMode };
    const info = await this.fs.lstat(toAbsolute(this.root, dir));
    if (!info) return { kind: 'missing', missing: [dir], parentMode: parent.mode };
    if (info.type === 'directory') return { kind: 'folder', mode: info.mode };
    if (info.type === 'symlink') return { kind: 'elsewhere' };
    return { kind: 'blocked', at: dir, mode: info.mode };
  }
}
