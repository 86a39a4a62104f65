// Creates the store's folders private to the user (0700) and refuses ones that are symlinks or
// belong to someone else: another user must not be able to plant or read saved file contents.
import { lstat, mkdir } from 'node:fs/promises';

export async function ensurePrivateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  const ownedByUs = typeof process.getuid !== 'function' || info.uid === process.getuid();
  if (!info.isDirectory() || !ownedByUs) {
    throw new Error(`The checkpoint folder ${dir} is a symlink or belongs to another user, so saved file contents could not be kept private. Remove it, or choose another state folder.`);
  }
}
