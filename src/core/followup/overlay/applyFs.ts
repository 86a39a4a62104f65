// The disk operations that accepting an overlay (and recovering an interrupted accept) performs on
// real files, behind a port so tests can inject I/O faults and simulated crashes at any step.
import { closeSync, constants as fsConstants, fstatSync } from 'node:fs';
import { mkdir, readdir, rmdir, unlink } from 'node:fs/promises';
import { fsyncFolder } from '../../fs/atomicWrite';
import { fchmodFd, fchownFd, fsyncFd, openFd, writeAllFd } from '../../fs/descriptors';
import { createFileNow, fsyncPath, INLINE_IO_MAX_BYTES, lstatNow, overwriteInPlaceNow, renameInLine, linkInLine } from '../../fs/inlineIo';
import { copyNew, linkNew } from '../../fs/storedCopies';
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
  /**
   * createFile (without fsync) of a stored copy in one call on the thread pool: `destination`
   * (which must not exist) gets `source`'s bytes and exactly `mode`. Nothing is left on failure.
   */
  copyNew(source: string, destination: string, mode: number): Promise<void>;
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
 * appeared under the temp name (nor follow a symlink there). Created with `mode` (the default for a
 * new file without one), which the umask may narrow: fstat says, and only then is it set exactly.
 * Plain descriptors, no FileHandle. The calls that change the disk (open, write, chown, chmod,
 * fsync) run on the thread pool, where a wait for the file system's journal holds no one else up
 * and many overlap; fstat and close, which never wait for it, are made in line.
 */
async function createNew(destination: string, data: Uint8Array, options: DurableWriteOptions & { sync: boolean }): Promise<void> {
  const owner = options.owner && (options.owner.uid !== processIds.uid || options.owner.gid !== processIds.gid) ? options.owner : undefined;
  // Unflushed and small (a small temp past the redo log's commit): in line, see nodeApplyFs.
  if (!options.sync && data.byteLength <= INLINE_IO_MAX_BYTES) return createFileNow(destination, CREATE_NEW, data, { createMode: options.mode, mode: options.mode, owner });
  const fd = await openFd(destination, CREATE_NEW, options.mode);
  try {
    await writeAllFd(fd, data);
    // Owner before mode: chown clears set-id bits.
    if (owner) await fchownFd(fd, owner.uid, owner.gid);
    if (options.mode !== undefined && (owner || (fstatSync(fd).mode & 0o7777) !== options.mode)) await fchmodFd(fd, options.mode);
    if (options.sync) await fsyncFd(fd);
  } catch (error) {
    closeQuietly(fd);
    await unlink(destination).catch(() => undefined);
    throw error;
  }
  closeSync(fd);
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // The write's own error is what the caller needs.
  }
}

/**
 * The real implementation on node:fs. Calls that only read (lstat, small reads) are made in line
 * (see inlineIo.ts): an accept of a hundred small files is hundreds of them, and each hand-off to
 * the thread pool cost more than the call. So are the renames and an unflushed link's two calls
 * (storedCopies.ts): with the redo log's commit in a slot made ahead no journal commit runs on the
 * wait for them to queue behind, and in line they measured 100 × 1 KB 34 → 25 ms, 1 × 1 KB 2.3 →
 * 1.7 ms (issue 28). Creating, writing and flushing files stays async: those overlap on the pool.
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
  linkNew,
  copyNew,
  async fsyncFile(absolute) {
    await fsyncPath(absolute);
  },
  overwriteInPlace: overwriteInPlaceNow,
  async link(existing, newName) {
    linkInLine(existing, newName);
  },
  async rename(from, to) {
    renameInLine(from, to);
  },
  async unlink(absolute) {
    try {
      await unlink(absolute);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  },
  async mkdir(absolute) {
    try {
      await mkdir(absolute);
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
    const entries = await readdir(absolute, { withFileTypes: true });
    return entries.map((entry) => ({
      name: entry.name,
      type: entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'symlink' : 'other',
    }));
  },
  fsyncDirectory: fsyncFolder,
};

export { errorCode };
