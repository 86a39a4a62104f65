// Creates the store's folders private to the user (0700) and refuses ones that are symlinks or
// belong to someone else: another user must not be able to plant or read saved file contents.
import { lstat, mkdir } from 'node:fs/promises';

/** The state folder cannot hold checkpoints; says which folder and why. */
export class CheckpointFolderError extends Error {
  constructor(readonly dir: string, why: string) {
    super(`The checkpoint folder ${dir} cannot be used (${why}). Choose a writable state folder of your own.`);
    this.name = 'CheckpointFolderError';
  }
}

export async function ensurePrivateDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new CheckpointFolderError(dir, (error as NodeJS.ErrnoException).code ?? String(error));
  }
  const info = await lstat(dir);
  const ownedByUs = typeof process.getuid !== 'function' || info.uid === process.getuid();
  if (!info.isDirectory()) throw new CheckpointFolderError(dir, 'it is a symlink or not a folder');
  if (!ownedByUs) throw new CheckpointFolderError(dir, 'it belongs to another user, so saved file contents could not be kept private');
}
