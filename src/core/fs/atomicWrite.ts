// Replacing a workspace file so that nothing is ever half-written: the new bytes go to a temp file
// beside it (same folder, same disk), are flushed, get the old file's mode and owner, and only then
// take its name by rename. On any failure the old file is untouched and the error says why.
import { randomBytes } from 'node:crypto';
import { constants as fsConstants, type Stats } from 'node:fs';
import { lstat, open, rename, stat, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { describeNoSpace, isNoSpace } from './diskSpace';
import { fsyncPath } from './inlineIo';
import { specialKindOf } from './fileKind';
import { tempBeside } from './tempNames';
import { SpecialFileError, WriteRefusedError } from './workspaceFs';

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(3, '0');
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** Whether this process can give a new file `info`'s owner and group (root can; others keep their own). */
export function canKeepOwnership(info: Pick<Stats, 'uid' | 'gid'>): boolean {
  if (typeof process.getuid !== 'function') return true;
  if (isRoot()) return true;
  if (info.uid !== process.getuid()) return false;
  return info.gid === process.getgid?.() || (process.getgroups?.() ?? []).includes(info.gid);
}

/**
 * Why `info` (an existing file) must not be replaced, or undefined: a file without its owner's
 * write bit was made read-only by someone (root honours that too), and one whose owner or group
 * this process cannot keep would silently change hands.
 */
export function replaceRefusal(relative: string, info: Pick<Stats, 'mode' | 'uid' | 'gid'>): WriteRefusedError | undefined {
  if ((info.mode & 0o200) === 0) {
    return new WriteRefusedError(relative, 'read-only', `${relative} is read-only (mode ${octal(info.mode)}); it was not changed. Make it writable (chmod u+w) if it should change.`);
  }
  if (!canKeepOwnership(info)) {
    return new WriteRefusedError(
      relative,
      'foreign-owner',
      `${relative} belongs to another user or group (uid ${info.uid}, gid ${info.gid}); replacing it would change its owner, so it was not changed.`,
    );
  }
  return undefined;
}

/** Why new files cannot go into `dir` (a folder made read-only), or undefined. */
export function folderRefusal(relativeDir: string, relativeFile: string, info: Pick<Stats, 'mode'>): WriteRefusedError | undefined {
  if ((info.mode & 0o200) !== 0) return undefined;
  return new WriteRefusedError(relativeFile, 'read-only', `The folder ${relativeDir || '.'} is read-only (mode ${octal(info.mode)}), so ${relativeFile} was not written. Make the folder writable if it should change.`);
}

/** Turns an I/O error of a write into words: which file, what happened, and that nothing changed. */
export async function describeWriteFailure(relative: string, absolute: string, error: unknown, neededBytes: number): Promise<Error> {
  const errno = code(error);
  const folder = path.dirname(absolute);
  if (isNoSpace(errno)) {
    return new WriteRefusedError(relative, 'no-space', `Could not write ${relative}: ${await describeNoSpace(folder, neededBytes)}. ${relative} was not changed; free some space and try again.`);
  }
  if (errno === 'EROFS') return new WriteRefusedError(relative, 'read-only-disk', `Could not write ${relative}: the disk holding ${folder} is mounted read-only. ${relative} was not changed.`);
  if (errno === 'EACCES' || errno === 'EPERM') {
    return new WriteRefusedError(relative, 'not-permitted', `Could not write ${relative}: permission denied in ${path.dirname(relative) === '.' ? 'the workspace folder' : path.dirname(relative)} (${errno}). ${relative} was not changed.`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Makes a folder's entries (renames, creations) durable. */
export async function fsyncFolder(dir: string): Promise<void> {
  // Some file systems refuse fsync on folders; the rename is still atomic there.
  await fsyncPath(dir, true);
}

export interface ReplaceOptions {
  /** Checked right before the rename: a stopped call replaces nothing. */
  signal?: AbortSignal;
}

/**
 * Writes `data` to `absolute` (shown to the user as `relative`) atomically. An existing file keeps
 * its mode bits exactly and its owner and group; a new one gets the default mode (umask applies),
 * as a plain write would. Hard links to the old file keep the old content (a new inode takes the name).
 */
export async function replaceFileAtomically(relative: string, absolute: string, data: Uint8Array, options: ReplaceOptions = {}): Promise<void> {
  const existing = await lstat(absolute).catch((error: unknown) => {
    if (code(error) === 'ENOENT') return undefined;
    throw error;
  });
  if (existing?.isDirectory()) throw new Error(`${relative} is a directory; give a file path.`);
  const special = existing && specialKindOf(existing);
  if (special) throw new SpecialFileError(relative, special);
  // A symlink here was placed after the path was resolved: replace the link's target, never the link.
  if (existing?.isSymbolicLink()) throw new Error(`${relative} became a symlink while it was being written; nothing was changed. Try again.`);
  // The folder counts for an existing file too: its replacement is a new entry in the folder, so a
  // folder made read-only (chmod 555) keeps its files as they are — for root as for anyone.
  const folder = await stat(path.dirname(absolute));
  const refusal = (existing && replaceRefusal(relative, existing)) || folderRefusal(path.posix.dirname(relative) === '.' ? '' : path.posix.dirname(relative), relative, folder);
  if (refusal) throw refusal;

  const temp = tempBeside(absolute, randomBytes(8).toString('hex'));
  let created = false;
  try {
    // O_EXCL + O_NOFOLLOW: never write through something that appeared under the temp name.
    const handle = await open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, existing ? 0o600 : 0o666);
    created = true;
    try {
      await handle.writeFile(data);
      if (existing) {
        // Owner first: chown clears set-id bits, so the mode goes on after it.
        if (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.()) await handle.chown(existing.uid, existing.gid);
        await handle.chmod(existing.mode & 0o7777);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    options.signal?.throwIfAborted();
    await rename(temp, absolute);
    created = false;
    // The new file is in place; a folder that cannot be flushed does not undo that.
    await fsyncFolder(path.dirname(absolute)).catch(() => undefined);
  } catch (error) {
    if (created) await unlink(temp).catch(() => undefined);
    if ((error as Error)?.name === 'AbortError' || options.signal?.aborted) throw error;
    throw await describeWriteFailure(relative, absolute, error, data.length);
  }
}
