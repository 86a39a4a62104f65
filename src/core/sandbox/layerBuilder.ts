// Builds the middle lower layer of the sandbox's overlay from the speculation's state: written files
// hard-linked (never copied) at their paths, deletions as whiteouts, and deleted folders that have
// new files below them spelled out child by child, so no xattr (opaque folder) is needed.
import { chmodSync, constants, copyFileSync, linkSync, lstatSync, mkdirSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import * as path from 'node:path';
import type { SandboxLayer } from './shellSandbox';

export interface LayerBuildInput {
  layer: SandboxLayer;
  /** The real workspace root (the layer below). */
  realRoot: string;
  /** An empty folder to build the layer in, on the same file system as `whiteout`. */
  dir: string;
  /** Path of a character device 0/0 (an overlayfs whiteout) on the same file system, to link from. */
  whiteout: () => Promise<string>;
}

export interface LayerBuildStats {
  linked: number;
  copied: number;
  whiteouts: number;
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function ancestorsOf(file: string): string[] {
  const parts = file.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

function isAtOrBelow(dir: string, candidate: string): boolean {
  return dir === '' || candidate === dir || candidate.startsWith(`${dir}/`);
}

/** Calls between yields to the event loop. */
const CALLS_PER_SLICE = 256;

function depth(file: string): number {
  return file.split('/').length;
}

export interface BuiltLayer {
  /** False when the layer is empty (nothing to stack, the real workspace is the view). */
  used: boolean;
  stats: LayerBuildStats;
  /**
   * Removes what the build made, by the names it made (no walk, no stat per entry), yielding to the
   * event loop as the build does; whatever it cannot remove is left for the run folder's own
   * removal, so a failure here loses nothing.
   */
  clear(): Promise<void>;
}

/** Fills `input.dir` with the layer. */
export async function buildLayer(input: LayerBuildInput): Promise<BuiltLayer> {
  const { layer, realRoot, dir } = input;
  const stats: LayerBuildStats = { linked: 0, copied: 0, whiteouts: 0 };
  /** Folders made (workspace paths, parents first; '' is `dir` itself) and entries made (absolute). */
  const made = new Set<string>(['']);
  const madeEntries: string[] = [];
  const at = (file: string) => path.join(dir, ...file.split('/'));

  // Synchronous calls, in slices with a yield between: a thousand tiny metadata calls cost far
  // less this way than as a thousand thread-pool round trips, and the event loop still breathes.
  let done = 0;
  const breathe = async () => {
    if (++done % CALLS_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
  };
  const clear = async (): Promise<void> => {
    const entries = madeEntries.splice(0);
    const folders = [...made].filter((folder) => folder !== '').reverse();
    made.clear();
    try {
      for (const entry of entries) {
        unlinkSync(entry);
        await breathe();
      }
      for (const folder of folders) rmdirSync(at(folder));
    } catch {
      // Left for the run folder's removal.
    }
  };
  if (layer.files.length === 0 && layer.deletedFiles.length === 0 && layer.deletedDirs.length === 0) return { used: false, stats, clear };

  const written = new Map(layer.files.map((file) => [file.path, file]));
  /** Folders that must be real folders in the layer because something written lies below them. */
  const keep = new Set<string>();
  for (const file of written.keys()) for (const ancestor of ancestorsOf(file)) keep.add(ancestor);
  const realAt = (file: string) => path.join(realRoot, ...file.split('/'));
  const makeDir = (folder: string): void => {
    if (made.has(folder)) return;
    makeDir(path.posix.dirname(folder) === '.' ? '' : path.posix.dirname(folder));
    // The topmost layer's folder is what the merged view shows: keep the real folder's mode.
    let mode = 0o755;
    try {
      const real = lstatSync(realAt(folder));
      if (real.isDirectory()) mode = real.mode & 0o7777;
    } catch {
      // A folder that exists only in the speculation.
    }
    mkdirSync(at(folder), { mode });
    chmodSync(at(folder), mode);
    made.add(folder);
  };
  const parentOf = (file: string) => (file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '');
  const whiteoutAt = async (file: string): Promise<void> => {
    makeDir(parentOf(file));
    linkSync(await input.whiteout(), at(file));
    madeEntries.push(at(file));
    stats.whiteouts++;
    await breathe();
  };

  // A deleted folder hides what is below it; one with new files below is spelled out instead
  // (every real child not written again gets its own whiteout), which covers its whole subtree.
  const whitedOut: string[] = [];
  const spelledOut: string[] = [];
  const covered = (file: string) => whitedOut.some((folder) => isAtOrBelow(folder, file)) || spelledOut.some((folder) => folder !== file && isAtOrBelow(folder, file));
  const spellOut = async (folder: string): Promise<void> => {
    spelledOut.push(folder);
    makeDir(folder);
    let names: string[] = [];
    try {
      names = readdirSync(realAt(folder));
    } catch (error) {
      if (errorCode(error) !== 'ENOENT' && errorCode(error) !== 'ENOTDIR') throw error;
    }
    for (const name of names) {
      const child = folder === '' ? name : `${folder}/${name}`;
      if (written.has(child)) continue;
      if (keep.has(child)) await spellOut(child);
      else await whiteoutAt(child);
    }
  };
  for (const deleted of [...layer.deletedDirs].sort((a, b) => depth(a) - depth(b))) {
    if (covered(deleted) || spelledOut.includes(deleted)) continue;
    if (keep.has(deleted)) {
      await spellOut(deleted);
    } else {
      await whiteoutAt(deleted);
      whitedOut.push(deleted);
    }
  }
  for (const deleted of layer.deletedFiles) {
    if (written.has(deleted) || keep.has(deleted) || covered(deleted)) continue;
    await whiteoutAt(deleted);
  }

  for (const file of layer.files) {
    makeDir(parentOf(file.path));
    const target = at(file.path);
    await breathe();
    stats[placeFile(file.contentPath, target, file.mode)]++;
    madeEntries.push(target);
  }
  return { used: true, stats, clear };
}

/** Puts a written file's bytes at `target`: hard-linked from its content file, or copied where a link cannot be (another disk, another mode). */
export function placeFile(contentPath: string, target: string, mode: number): 'linked' | 'copied' {
  if ((lstatSync(contentPath).mode & 0o7777) === mode) {
    try {
      linkSync(contentPath, target);
      return 'linked';
    } catch (error) {
      // Another file system (EXDEV) or no hard links there: fall back to a copy (a clone where possible).
      if (!['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP'].includes(errorCode(error) ?? '')) throw error;
    }
  }
  // A link shares the mode of its source; a file whose mode differs gets its own copy.
  copyFileSync(contentPath, target, constants.COPYFILE_FICLONE);
  chmodSync(target, mode);
  return 'copied';
}
