// The disk operations checkpoints perform (store, undo, recovery), behind a port so tests can inject
// I/O faults and simulated crashes at any step. Every path is absolute; nothing here follows a final symlink.
import { constants as fsConstants, mkdirSync, renameSync, rmdirSync, unlinkSync } from 'node:fs';
import { open, readdir, unlink, utimes } from 'node:fs/promises';
import { createFileNow, fsyncPath, INLINE_IO_MAX_BYTES, lstatNow } from '../fs/inlineIo';
import { readFileQuickly } from '../fs/regularFile';
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

const CREATE_NEW = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL;

/** 'wx': never clobber what appeared under the name; a failed write leaves nothing behind. Flushed only when `sync`. */
async function createNew(absolute: string, data: Uint8Array | string, mode: number | undefined, sync: boolean): Promise<void> {
  // Without an fsync a small file is made in line (see inlineIo.ts).
  if (!sync && data.length <= INLINE_IO_MAX_BYTES) {
    createFileNow(absolute, CREATE_NEW, typeof data === 'string' ? Buffer.from(data) : data, { createMode: mode ?? 0o600, mode });
    return;
  }
  const handle = await open(absolute, 'wx', mode ?? 0o600);
  try {
    await handle.writeFile(data);
    if (mode !== undefined) await handle.chmod(mode);
    if (sync) await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(absolute).catch(() => undefined);
    throw error;
  }
  await handle.close();
}

/** On node:fs; metadata calls and small reads and writes without fsync are made in line (see inlineIo.ts). */
export const nodeCheckpointFs: CheckpointFs = {
  async lstat(absolute) {
    const info = lstatNow(absolute);
    return info && { type: typeOf(info), size: info.size, mtimeMs: info.mtimeMs, mode: info.mode & 0o7777, uid: info.uid };
  },
  async readFile(absolute) {
    return readFileQuickly(absolute);
  },
  writeDurable(absolute, data, mode) {
    return createNew(absolute, data, mode, true);
  },
  createFile(absolute, data, options) {
    return createNew(absolute, data, options.mode, options.sync);
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
  async mkdir(absolute, mode) {
    try {
      mkdirSync(absolute, { mode: mode ?? 0o777 });
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
