// Small file-system calls made on the spot instead of on libuv's thread pool: for a metadata call or
// a write of a few KB the two hand-offs of an async call cost more than the call (issue 28's profile).
import * as fs from 'node:fs';
import { fdatasyncFd, fsyncFd } from './descriptors';

/**
 * Up to this size a read or a write (a copy into the page cache, tens of µs) is made in line; a
 * larger one stays async so it never holds the event loop for long. fsync is never made in line:
 * it waits for the disk. Same figure as HASH_INLINE_LIMIT: above it a hand-off pays for itself.
 */
export const INLINE_IO_MAX_BYTES = 256 * 1024;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** lstat now; undefined when nothing is there (or a parent is not a folder). */
export function lstatNow(absolute: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(absolute);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** Writes all of `data` at the descriptor's position, looping over short writes. */
export function writeAllNow(fd: number, data: Uint8Array): void {
  for (let offset = 0; offset < data.byteLength; ) offset += fs.writeSync(fd, data, offset, data.byteLength - offset);
}

/** Reads exactly `size` bytes from the start; fewer only when the file ends first (the count says). */
export function readNow(fd: number, size: number): { buffer: Buffer; count: number } {
  const buffer = Buffer.allocUnsafe(size);
  let count = 0;
  while (count < size) {
    const read = fs.readSync(fd, buffer, count, size - count, count);
    if (read === 0) break;
    count += read;
  }
  return { buffer, count };
}

/**
 * Creates `destination` with `flags` (O_CREAT | O_EXCL: never over anything) and `data`, then the
 * owner (before the mode: chown clears set-id bits) and the mode when asked for, and closes it. On
 * failure nothing stays behind: no descriptor, no file.
 */
export function createFileNow(destination: string, flags: number, data: Uint8Array, options: { createMode?: number; mode?: number; owner?: { uid: number; gid: number } } = {}): void {
  const fd = fs.openSync(destination, flags, options.createMode);
  try {
    writeAllNow(fd, data);
    if (options.owner) fs.fchownSync(fd, options.owner.uid, options.owner.gid);
    // Exactly `mode`: set where the umask narrowed it, or where chown may have cleared set-id bits.
    if (options.mode !== undefined && (options.owner || (fs.fstatSync(fd).mode & 0o7777) !== options.mode)) fs.fchmodSync(fd, options.mode);
  } catch (error) {
    fs.closeSync(fd);
    try {
      fs.unlinkSync(destination);
    } catch {
      // Already gone; the write's own error is what the caller needs.
    }
    throw error;
  }
  fs.closeSync(fd);
}

/** Codes of a file system that does not fsync folders; its renames are atomic all the same. */
const FOLDER_FSYNC_REFUSALS: ReadonlySet<string> = new Set(['EINVAL', 'EISDIR', 'EPERM']);

/**
 * fsync of a file or folder by path: open and close in line, only the fsync (which waits for the
 * disk) on the thread pool — one hand-off instead of three. `folder`: a refusal of the fsync itself
 * by a file system that has none for folders is not an error.
 */
export async function fsyncPath(absolute: string, folder = false): Promise<void> {
  const fd = fs.openSync(absolute, fs.constants.O_RDONLY);
  try {
    await fsyncFd(fd);
  } catch (error) {
    if (!folder || !FOLDER_FSYNC_REFUSALS.has(errorCode(error) ?? '')) throw error;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes `data` over the start of the existing file `absolute` and fdatasyncs it: open (no O_CREAT,
 * O_NOFOLLOW) and the write in line when small (a copy into the page cache), only the flush on the
 * thread pool. Into blocks the file already has, the flush writes the data and no metadata: no
 * journal commit, which is most of what a new file's fsync costs on ext4.
 */
export async function overwriteInPlaceNow(absolute: string, data: Uint8Array): Promise<void> {
  const fd = fs.openSync(absolute, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW);
  try {
    if (data.byteLength <= INLINE_IO_MAX_BYTES) {
      for (let offset = 0; offset < data.byteLength; ) offset += fs.writeSync(fd, data, offset, data.byteLength - offset, offset);
    } else {
      for (let offset = 0; offset < data.byteLength; ) {
        offset += await new Promise<number>((resolve, reject) => fs.write(fd, data, offset, data.byteLength - offset, offset, (error, written) => (error ? reject(error) : resolve(written))));
      }
    }
    await fdatasyncFd(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * rename(2) in line: a metadata change of one folder entry, tens of µs, less than the two hand-offs
 * of an async call; past a redo log's commit point nothing else waits on the journal meanwhile.
 */
export function renameInLine(from: string, to: string): void {
  fs.renameSync(from, to);
}

/** link(2) in line, for the same reason as renameInLine. */
export function linkInLine(existing: string, newName: string): void {
  fs.linkSync(existing, newName);
}
