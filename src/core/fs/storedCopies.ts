// New files made from stored copies (the overlay's blobs, the checkpoints' content store) without
// the bytes passing through this process: a hard link where the disk allows, else one copyfile.
import { closeSync, constants as fsConstants, fchmodSync, fstatSync, linkSync, lutimesSync, openSync } from 'node:fs';
import { copyFile, link, lutimes, unlink } from 'node:fs/promises';
import { fchmodFd, fsyncFd } from './descriptors';
import { lstatNow } from './inlineIo';

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Gives `destination` (which must not exist) the bytes of `source`, a stored copy nothing writes to
 * any more, as a second name of the same file: the disk allocates no new file (on ext4 that
 * allocation costs more than the rest of a small file's accept). It gets exactly `mode` and the
 * current time (a build tool must see it changed now), and is flushed when `sync`. Throws where
 * hard links cannot be made (another disk: EXDEV); nothing is left on failure. Unflushed, the link,
 * its time and its mode are made in line (metadata calls, each less than its hand-off: an undo of
 * 100 × 1 KB staged in 19 ms with the mode's hand-off, see nodeApplyFs); a flushed one's calls run
 * on the thread pool, where its fsync overlaps others. `sourceMode` is the source's mode as the
 * caller just saw it: a second name shares it, so when it is `mode` the link needs no look.
 */
export async function linkNew(source: string, destination: string, options: { mode: number; sync: boolean; sourceMode?: number }): Promise<void> {
  if (options.sync) await link(source, destination);
  else linkSync(source, destination);
  try {
    // lutimes and the descriptor's O_NOFOLLOW: the name just made is a file; nothing else is touched.
    const now = new Date();
    if (options.sync) await lutimes(destination, now, now);
    else lutimesSync(destination, now, now);
    const modeKnown = options.sourceMode !== undefined && (options.sourceMode & 0o7777) === options.mode;
    if ((!modeKnown && ((lstatNow(destination)?.mode ?? 0) & 0o7777) !== options.mode) || options.sync) {
      const fd = openSync(destination, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
      try {
        if ((fstatSync(fd).mode & 0o7777) !== options.mode) {
          if (options.sync) await fchmodFd(fd, options.mode);
          else fchmodSync(fd, options.mode);
        }
        if (options.sync) await fsyncFd(fd);
      } finally {
        closeSync(fd);
      }
    }
  } catch (error) {
    await unlink(destination).catch(() => undefined);
    throw error;
  }
}

/**
 * A new file at `destination` (which must not exist) holding `source`'s bytes, with exactly `mode`,
 * not flushed: one copyfile (open both, copy, close) where open, write and close are three hand-offs.
 */
export async function copyNew(source: string, destination: string, mode: number): Promise<void> {
  try {
    await copyFile(source, destination, fsConstants.COPYFILE_EXCL);
  } catch (error) {
    // EEXIST: what is there is not ours to remove.
    if (errorCode(error) !== 'EEXIST') await unlink(destination).catch(() => undefined);
    throw error;
  }
  try {
    // The copy has the source's mode; set exactly (set-id bits too) only where it differs.
    if (((lstatNow(destination)?.mode ?? 0) & 0o7777) !== mode) {
      const fd = openSync(destination, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
      try {
        await fchmodFd(fd, mode);
      } finally {
        closeSync(fd);
      }
    }
  } catch (error) {
    await unlink(destination).catch(() => undefined);
    throw error;
  }
}
