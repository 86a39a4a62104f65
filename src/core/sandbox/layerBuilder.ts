// Builds the middle lower layer of the sandbox's overlay from the speculation's state: written files
// hard-linked (never copied) at their paths, deletions as whiteouts, and deleted folders that have
// new files below them spelled out child by child, so no xattr (opaque folder) is needed.
import { constants } from 'node:fs';
import { chmod, copyFile, link, lstat, mkdir, readdir } from 'node:fs/promises';
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

function depth(file: string): number {
  return file.split('/').length;
}

/** Fills `input.dir`; returns false when the layer is empty (nothing to stack, the real workspace is the view). */
export async function buildLayer(input: LayerBuildInput): Promise<{ used: boolean; stats: LayerBuildStats }> {
  const { layer, realRoot, dir } = input;
  const stats: LayerBuildStats = { linked: 0, copied: 0, whiteouts: 0 };
  if (layer.files.length === 0 && layer.deletedFiles.length === 0 && layer.deletedDirs.length === 0) return { used: false, stats };

  const written = new Map(layer.files.map((file) => [file.path, file]));
  /** Folders that must be real folders in the layer because something written lies below them. */
  const keep = new Set<string>();
  for (const file of written.keys()) for (const ancestor of ancestorsOf(file)) keep.add(ancestor);
  const made = new Set<string>(['']);
  const at = (file: string) => path.join(dir, ...file.split('/'));
  const realAt = (file: string) => path.join(realRoot, ...file.split('/'));

  const makeDir = async (folder: string): Promise<void> => {
    if (made.has(folder)) return;
    await makeDir(path.posix.dirname(folder) === '.' ? '' : path.posix.dirname(folder));
    // The topmost layer's folder is what the merged view shows: keep the real folder's mode.
    let mode = 0o755;
    try {
      const real = await lstat(realAt(folder));
      if (real.isDirectory()) mode = real.mode & 0o7777;
    } catch {
      // A folder that exists only in the speculation.
    }
    await mkdir(at(folder), { mode });
    await chmod(at(folder), mode);
    made.add(folder);
  };
  const parentOf = (file: string) => (file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '');
  const whiteoutAt = async (file: string): Promise<void> => {
    await makeDir(parentOf(file));
    await link(await input.whiteout(), at(file));
    stats.whiteouts++;
  };

  // A deleted folder hides what is below it; one with new files below is spelled out instead
  // (every real child not written again gets its own whiteout), which covers its whole subtree.
  const whitedOut: string[] = [];
  const spelledOut: string[] = [];
  const covered = (file: string) => whitedOut.some((folder) => isAtOrBelow(folder, file)) || spelledOut.some((folder) => folder !== file && isAtOrBelow(folder, file));
  const spellOut = async (folder: string): Promise<void> => {
    spelledOut.push(folder);
    await makeDir(folder);
    let names: string[] = [];
    try {
      names = await readdir(realAt(folder));
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
    await makeDir(parentOf(file.path));
    const target = at(file.path);
    const source = await lstat(file.contentPath);
    if ((source.mode & 0o7777) === file.mode) {
      try {
        await link(file.contentPath, target);
        stats.linked++;
        continue;
      } catch (error) {
        // Another file system (EXDEV) or no hard links there: fall back to a copy (a clone where possible).
        if (!['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP'].includes(errorCode(error) ?? '')) throw error;
      }
    }
    // A link shares the mode of its source; a file whose mode differs gets its own copy.
    await copyFile(file.contentPath, target, constants.COPYFILE_FICLONE);
    await chmod(target, file.mode);
    stats.copied++;
  }
  return { used: true, stats };
}
