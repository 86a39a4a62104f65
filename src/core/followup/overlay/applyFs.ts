// The disk operations that accepting an overlay (and recovering an interrupted accept) performs on
// real files, behind a port so tests can inject I/O faults and simulated crashes at any step.
import { constants as fsConstants, mkdirSync, renameSync, rmdirSync, unlinkSync } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { fsyncFolder } from '../../fs/atomicWrite';
import { closeFd, fchmodFd, fchownFd, fsyncFd, openFd, writeAllFd } from '../../fs/descriptors';
import { createFileNow, fsyncPath, INLINE_IO_MAX_BYTES, lstatNow } from '../../fs/inlineIo';
import { readFileQuickly } from '../../fs/regularFile';
import type { RedoFs } from '../../fs/redoRecovery';

const CREATE_NEW = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL;

/** This process's user and group (undefined off POSIX): asked once, as they never change, not once per file. */
export const processIds: { readonly uid: number | undefined; readonly gid: number | undefined } = { uid: process.getuid?.(), gid: process.getgid?.() };

export interface ApplyFsStat {
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  mtimeMs: number;
  mode: number;
  uid: number;
  gid: number;
  /** Change time and inode: a rewrite moves them even when it restores size and mtime. */
  ctimeMs: number;
  ino: number;
}

export interface DurableWriteOptions {
  /** Permission bits to set exactly (set-id bits included); undefined = the default for new files. */
  mode?: number;
  /** Owner and group to keep (an existing file's); changed only where they differ. */
  owner?: { uid: number; gid: number };
}

export interface ApplyFs extends RedoFs {
  readFile(absolute: string): Promise<Uint8Array>;
  /** Does not follow a final symlink; undefined when nothing is there. */
  lstat(absolute: string): Promise<ApplyFsStat | undefined>;
  /**
   * Creates `destination` (which must not exist) with `data`, gives it `mode` and `owner` when
   * given (else a new file's default mode), and flushes it to disk before resolving.
   */
  writeDurable(destination: string, data: Uint8Array | string, options?: DurableWriteOptions): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Removes a file; resolves quietly when it is already gone. */
  unlink(absolute: string): Promise<void>;
  /** Creates one directory level; resolves quietly when it already exists. */
  mkdir(absolute: string): Promise<void>;
  /** Removes an empty directory; false when it was not empty or not there. */
  rmdirIfEmpty(absolute: string): Promise<boolean>;
  /** Names of a directory's entries with their types (symlinks are not followed). */
  readdir(absolute: string): Promise<{ name: string; type: ApplyFsStat['type'] }[]>;
  /** Makes a directory's entries (renames, creations) durable. */
  fsyncDirectory(absolute: string): Promise<void>;
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Creates `destination` (which must not exist) with `data`. O_EXCL: never clobber something that
 * appeared under the temp name (nor follow a symlink there). Created with the default mode (umask
 * applies), which is what a new file gets; an existing file's mode is set explicitly. Plain
 * descriptors, no FileHandle: open, write, close, plus a chown or chmod only when asked for, and
 * the fsync only when `sync` (a redo log's commit already made the bytes durable).
 */
async function createNew(destination: string, data: Uint8Array, options: DurableWriteOptions & { sync: boolean }): Promise<void> {
  const owner = options.owner && (options.owner.uid !== processIds.uid || options.owner.gid !== processIds.gid) ? options.owner : undefined;
  // Without an fsync a small file is a few calls that cost less than one hand-off each: made in line.
  if (!options.sync && data.byteLength <= INLINE_IO_MAX_BYTES) {
    createFileNow(destination, CREATE_NEW, data, { mode: options.mode, owner });
    return;
  }
  const fd = await openFd(destination, CREATE_NEW);
  try {
    await writeAllFd(fd, data);
    // Owner before mode: chown clears set-id bits.
    if (owner) await fchownFd(fd, owner.uid, owner.gid);
    if (options.mode !== undefined) await fchmodFd(fd, options.mode);
    if (options.sync) await fsyncFd(fd);
  } catch (error) {
    await closeFd(fd).catch(() => undefined);
    await unlink(destination).catch(() => undefined);
    throw error;
  }
  await closeFd(fd);
}

/**
 * The real implementation on node:fs. Metadata calls (lstat, rename, unlink, mkdir, rmdir) and small
 * reads and writes without fsync are made in line (see inlineIo.ts): an accept of a hundred small
 * files is a few hundred of them, and each hand-off to the thread pool cost more than the call.
 */
export const nodeApplyFs: ApplyFs = {
  async readFile(absolute) {
    return readFileQuickly(absolute);
  },
  async lstat(absolute) {
    const info = lstatNow(absolute);
    if (!info) return undefined;
    const type = info.isFile() ? 'file' : info.isDirectory() ? 'directory' : info.isSymbolicLink() ? 'symlink' : 'other';
    return { type, size: info.size, mtimeMs: info.mtimeMs, mode: info.mode & 0o7777, uid: info.uid, gid: info.gid, ctimeMs: info.ctimeMs, ino: info.ino };
  },
  writeDurable(destination, data, options = {}) {
    return createNew(destination, typeof data === 'string' ? Buffer.from(data) : data, { ...options, sync: true });
  },
  createFile(destination, data, options) {
    return createNew(destination, data, options);
  },
  async fsyncFile(absolute) {
    await fsyncPath(absolute);
  },
  async rename(from, to) {
    renameSync(from, to);
  },
  async unlink(absolute) {
    try {
      unlinkSync(absolute);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  },
  async mkdir(absolute) {
    try {
      mkdirSync(absolute);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
  },
  async rmdirIfEmpty(absolute) {
    try {
      rmdirSync(absolute);
      return true;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw error;
    }
  },
  async readdir(absolute) {
    const entries = await readdir(absolute, { withFileTypes: true });
    return entries.map((entry) => ({
      name: entry.name,
      type: entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'symlink' : 'other',
    }));
  },
  fsyncDirectory: fsyncFolder,
};

export { errorCode };
