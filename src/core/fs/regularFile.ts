// Reading one regular file in as few round trips as the disk allows: open (never blocking on a FIFO,
// never through a symlink swapped in), one read of its size, and an fstat only when it is not known.
import { closeSync, constants as fsConstants, fstatSync, openSync, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { readFd } from './descriptors';
import { INLINE_IO_MAX_BYTES, readNow } from './inlineIo';
import { specialKindOf } from './fileKind';
import { FileNotFoundError, PathOutsideWorkspaceError, SpecialFileError } from './workspaceFs';

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

const OPEN_FLAGS = fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOCTTY | fsConstants.O_NOFOLLOW;
/** Read size for a file whose fstat size is 0 (being written, or a pseudo file): read on to the end. */
const UNKNOWN_SIZE_CHUNK = 64 * 1024;

async function readRest(fd: number, total: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for (;;) {
    const chunk = Buffer.allocUnsafe(UNKNOWN_SIZE_CHUNK);
    const count = await readFd(fd, chunk, 0, chunk.length, total);
    if (count === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, count));
    total += count;
  }
}

function openError(error: unknown, relative: string): unknown {
  const code = errorCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return new FileNotFoundError(relative);
  if (code === 'EISDIR') return new Error(`${relative || '.'} is a directory, not a file.`);
  if (code === 'ELOOP') return new PathOutsideWorkspaceError(relative, 'became a symlink while it was being read');
  return error;
}

/**
 * The whole content of a file, as fs.readFile gives it (up to the size fstat reports; to the end
 * for a size of 0); a small one is read in line, a large one (or an empty one) by fs.readFile.
 */
export async function readFileQuickly(absolute: string): Promise<Buffer> {
  // O_NONBLOCK: a FIFO swapped in must not hold the event loop; anything but a regular file goes the old way.
  const fd = openSync(absolute, OPEN_FLAGS & ~fsConstants.O_NOFOLLOW);
  try {
    const info = fstatSync(fd);
    const size = info.size;
    if (info.isFile() && size > 0 && size <= INLINE_IO_MAX_BYTES) {
      const { buffer, count } = readNow(fd, size);
      return count === size ? buffer : buffer.subarray(0, count);
    }
  } finally {
    closeSync(fd);
  }
  return readFile(absolute);
}

/**
 * The bytes of the regular file at `absolute` (an already placed path, shown as `relative`) and
 * its stat. FIFOs, sockets and devices are refused with SpecialFileError (O_NONBLOCK: a FIFO swapped
 * in after the caller's check still opens at once); a symlink that appeared at the path since it
 * was placed is refused, never followed. The read stops at the file's size, as fs.readFile does.
 *
 * `known` is the caller's lstat of the path (taken when it was placed): then no fstat is asked
 * unless the read comes up short of its size — the file changed meanwhile, and fstat says into what.
 * Without it, the stat returned is the fstat of exactly what was read.
 */
export async function readRegularFile(absolute: string, relative: string, known?: Stats): Promise<{ data: Buffer; info: Stats }> {
  // Opened, checked and (up to INLINE_IO_MAX_BYTES) read in line: each hand-off to the thread pool
  // costs more than these calls (inlineIo.ts); a large file is read on the thread pool.
  let fd: number;
  try {
    fd = openSync(absolute, OPEN_FLAGS);
  } catch (error) {
    throw openError(error, relative);
  }
  try {
    const checked = (): Stats => {
      const info = fstatSync(fd);
      if (info.isDirectory()) throw new Error(`${relative || '.'} is a directory, not a file.`);
      const special = specialKindOf(info);
      if (special) throw new SpecialFileError(relative, special);
      return info;
    };
    const info = known?.isFile() ? known : checked();
    if (info.size === 0) return { data: await readRest(fd, 0), info };
    let buffer: Buffer;
    let offset = 0;
    if (info.size <= INLINE_IO_MAX_BYTES) {
      ({ buffer, count: offset } = readNow(fd, info.size));
    } else {
      buffer = Buffer.allocUnsafe(info.size);
      while (offset < info.size) {
        const count = await readFd(fd, buffer, offset, info.size - offset, offset);
        if (count === 0) break;
        offset += count;
      }
    }
    if (offset === info.size) return { data: buffer, info };
    // Shorter than it was: truncated, or replaced by something else since the caller looked.
    return { data: buffer.subarray(0, offset), info: info === known ? checked() : info };
  } catch (error) {
    if (errorCode(error) === 'EISDIR') throw new Error(`${relative || '.'} is a directory, not a file.`);
    throw error;
  } finally {
    closeSync(fd);
  }
}
