// The overlay's private copies of written files: one file per version, never changed once stored,
// written while the write that made it is still being checked, read back with one open and one read.
import { chmodSync, closeSync, constants as fsConstants, openSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { closeFd, closeFdQuietly, fchmodFd, openFd, readFd, writeAllFd } from '../../fs/descriptors';
import { createFileNow, INLINE_IO_MAX_BYTES, readNow } from '../../fs/inlineIo';

/** A blob being stored; nothing refers to it until the caller's entry does. */
export interface PendingBlob {
  readonly name: string;
  /** Gives the blob `mode` (when it was created with another), closes it, and throws what storing it met. */
  finish(mode: number): Promise<void>;
  /** Drops a blob whose write was refused; safe to call more than once, and a no-op after finish(). */
  abandon(): void;
}

function unlinkQuietly(file: string): void {
  unlink(file).catch(() => undefined);
}

const CREATE = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL;

/**
 * Starts storing `data` at `file` (created with `mode`, which the umask narrows as for any new
 * file): open and one write now, and in finish() a chmod only when the final mode differs, then close.
 */
export function startBlob(file: string, name: string, data: Uint8Array, mode: number): PendingBlob {
  if (data.byteLength <= INLINE_IO_MAX_BYTES) return storeNow(file, name, data, mode);
  const writing = (async (): Promise<number> => {
    const fd = await openFd(file, CREATE, mode);
    try {
      await writeAllFd(fd, data);
    } catch (error) {
      closeFdQuietly(fd);
      throw error;
    }
    return fd;
  })();
  writing.catch(() => undefined);
  let settled = false;
  return {
    name,
    async finish(finalMode) {
      settled = true;
      let fd: number;
      try {
        fd = await writing;
      } catch (error) {
        unlinkQuietly(file);
        throw error;
      }
      try {
        if ((finalMode & 0o777) !== (mode & 0o777)) await fchmodFd(fd, finalMode & 0o777);
      } catch (error) {
        closeFdQuietly(fd);
        unlinkQuietly(file);
        throw error;
      }
      try {
        await closeFd(fd);
      } catch (error) {
        unlinkQuietly(file);
        throw error;
      }
    },
    abandon() {
      if (settled) return;
      settled = true;
      writing.then(
        (fd) => {
          closeFdQuietly(fd);
          unlinkQuietly(file);
        },
        () => unlinkQuietly(file),
      );
    },
  };
}

/**
 * startBlob of a small content, in line (inlineIo.ts says why): stored and closed before it
 * returns, so nothing stays open; finish() then only corrects the mode (the folder is private).
 */
function storeNow(file: string, name: string, data: Uint8Array, mode: number): PendingBlob {
  let failure: { error: unknown } | undefined;
  try {
    createFileNow(file, CREATE, data, { createMode: mode });
  } catch (error) {
    failure = { error };
  }
  let settled = false;
  return {
    name,
    async finish(finalMode) {
      settled = true;
      if (failure) throw failure.error;
      try {
        if ((finalMode & 0o777) !== (mode & 0o777)) chmodSync(file, finalMode & 0o777);
      } catch (error) {
        unlinkQuietly(file);
        throw error;
      }
    },
    abandon() {
      if (settled) return;
      settled = true;
      if (!failure) unlinkQuietly(file);
    },
  };
}

const shortBlob = (offset: number, size: number) => Object.assign(new Error(`stored copy is ${offset} of ${size} bytes`), { code: 'EIO' });

/** The `size` bytes of a stored blob; a shorter file is a storage failure (EIO), not short content. */
export async function readBlob(file: string, size: number): Promise<Buffer> {
  if (size <= INLINE_IO_MAX_BYTES) {
    const fd = openSync(file, fsConstants.O_RDONLY);
    try {
      const { buffer, count } = readNow(fd, size);
      if (count < size) throw shortBlob(count, size);
      return buffer;
    } finally {
      closeSync(fd);
    }
  }
  const fd = await openFd(file, fsConstants.O_RDONLY);
  try {
    const buffer = Buffer.allocUnsafe(size);
    for (let offset = 0; offset < size; ) {
      const count = await readFd(fd, buffer, offset, size - offset, offset);
      if (count === 0) throw shortBlob(offset, size);
      offset += count;
    }
    return buffer;
  } finally {
    closeFdQuietly(fd);
  }
}
