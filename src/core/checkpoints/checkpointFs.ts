// The disk operations checkpoints perform (store, undo, recovery), behind a port so tests can inject
// I/O faults and simulated crashes at any step. Every path is absolute; nothing here follows a final symlink.
import { closeSync, constants as fsConstants, fstatSync, type Stats } from 'node:fs';
import { mkdir, readdir, rmdir, unlink, utimes } from 'node:fs/promises';
import { closeFdQuietly, fchmodFd, fsyncFd, openFd, writeAllFd } from '../fs/descriptors';
import { createFileNow, fsyncPath, INLINE_IO_MAX_BYTES, lstatNow, overwriteInPlaceNow, renameInLine, linkInLine } from '../fs/inlineIo';
import { linkNew } from '../fs/storedCopies';
import { readFileQuickly, readRegularFile } from '../fs/regularFile';
import type { RedoFs } from '../fs/redoRecovery';

export interface CheckpointStat {
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  mtimeMs: number;
  mode: number;
  uid: number;
}

export interface CheckpointFs extends RedoFs {
  /** Undefined when nothing is there (or a parent is not a folder). */
  lstat(absolute: string): Promise<CheckpointStat | undefined>;
  readFile(absolute: string): Promise<Uint8Array>;
  /**
   * A regular file's bytes and the stat of exactly what was read, from one open (never through a
   * final symlink; a FIFO or device is refused): for the store's own copies, whose mode a hard link
   * to them shares.
   */
  readWithStat(absolute: string): Promise<{ data: Uint8Array; stat: CheckpointStat }>;
  /** Creates `absolute` (which must not exist) with `data`, sets `mode` when given, flushes it to disk. */
  writeDurable(absolute: string, data: Uint8Array | string, mode?: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Removes a file; quiet when it is already gone. */
  unlink(absolute: string): Promise<void>;
  /** Creates one folder level; quiet when it exists. */
  mkdir(absolute: string, mode?: number): Promise<void>;
  /** Removes an empty folder; false when it is not empty or not there. */
  rmdirIfEmpty(absolute: string): Promise<boolean>;
  /** Entry names; an empty list when the folder does not exist. */
  readdir(absolute: string): Promise<string[]>;
  /** Makes a folder's renames and creations durable. */
  fsyncDirectory(absolute: string): Promise<void>;
  /** Marks a file as just used (blob reuse keeps it out of the collector's grace period). */
  touch(absolute: string): Promise<void>;
}

export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function typeOf(info: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): CheckpointStat['type'] {
  return info.isFile() ? 'file' : info.isDirectory() ? 'directory' : info.isSymbolicLink() ? 'symlink' : 'other';
}

function statOf(info: Stats): CheckpointStat {
  return { type: typeOf(info), size: info.size, mtimeMs: info.mtimeMs, mode: info.mode & 0o7777, uid: info.uid };
}

const CREATE_NEW = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL;

/**
 * O_EXCL: never clobber what appeared under the name; a failed write leaves nothing behind. Flushed
 * only when `sync`. Created with `mode`, which the umask may narrow: fstat says, and only then is it
 * set exactly. A flushed file's calls that change the disk run on the thread pool (its fsync
 * overlaps others), fstat and close in line.
 */
async function createNew(absolute: string, data: Uint8Array | string, mode: number | undefined, sync: boolean): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  // Unflushed and small: in line, like the accept's (see nodeApplyFs); no thread-pool hand-offs.
  if (!sync && bytes.byteLength <= INLINE_IO_MAX_BYTES) return createFileNow(absolute, CREATE_NEW, bytes, { createMode: mode ?? 0o600, mode });
  const fd = await openFd(absolute, CREATE_NEW, mode ?? 0o600);
  try {
    await writeAllFd(fd, bytes);
    if (mode !== undefined && (fstatSync(fd).mode & 0o7777) !== mode) await fchmodFd(fd, mode);
    if (sync) await fsyncFd(fd);
  } catch (error) {
    closeFdQuietly(fd);
    await unlink(absolute).catch(() => undefined);
    throw error;
  }
  closeSync(fd);
}

/** On node:fs; calls that only read (lstat, small reads) are made in line (see inlineIo.ts and nodeApplyFs). */
export const nodeCheckpointFs: CheckpointFs = {
  async lstat(absolute) {
    const info = lstatNow(absolute);
    return info && statOf(info);
  },
  async readFile(absolute) {
    return readFileQuickly(absolute);
  },
  async readWithStat(absolute) {
    const { data, info } = await readRegularFile(absolute, absolute);
    return { data, stat: statOf(info) };
  },
  writeDurable(absolute, data, mode) {
    return createNew(absolute, data, mode, true);
  },
  createFile(absolute, data, options) {
    return createNew(absolute, data, options.mode, options.sync);
  },
  linkNew,
  async fsyncFile(absolute) {
    await fsyncPath(absolute);
  },
  overwriteInPlace: overwriteInPlaceNow,
  async link(existing, newName) {
    linkInLine(existing, newName);
  },
  async rename(from, to) {
    // In line, as the accept's (see nodeApplyFs): an undo's renames are its wait too.
    renameInLine(from, to);
  },
  async unlink(absolute) {
    try {
      await unlink(absolute);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  },
  async mkdir(absolute, mode) {
    try {
      await mkdir(absolute, { mode: mode ?? 0o777 });
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
  },
  async rmdirIfEmpty(absolute) {
    try {
      await rmdir(absolute);
      return true;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw error;
    }
  },
  async readdir(absolute) {
    try {
      return await readdir(absolute);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw error;
    }
  },
  async fsyncDirectory(absolute) {
    // Some file systems refuse fsync on folders; their renames are still atomic.
    await fsyncPath(absolute, true);
  },
  async touch(absolute) {
    const now = new Date();
    await utimes(absolute, now, now).catch(() => undefined);
  },
};
