// git's own lock protocol for one file (HEAD, index): create `<file>.lock` exclusively (every git
// that would change the file fails while it exists), check the file, write the new content to the
// lock and rename it over the file, or remove the lock. Either the old or the new file, never half.
import { open, rename, stat, unlink, readFile } from 'node:fs/promises';
import * as path from 'node:path';

export class GitLockFile {
  private constructor(readonly file: string, readonly lockPath: string, readonly inode: number) {}

  /** Takes the lock, or returns the reason it is taken (another git is at work). */
  static async take(file: string): Promise<GitLockFile | { busy: string }> {
    const lockPath = `${file}.lock`;
    try {
      const handle = await open(lockPath, 'wx', 0o644);
      const info = await handle.stat();
      await handle.close();
      return new GitLockFile(file, lockPath, info.ino);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { busy: `${path.basename(lockPath)} exists: another git command is changing ${path.basename(file)}` };
      throw error;
    }
  }

  /** The file's current bytes, or null when it does not exist. */
  async current(): Promise<Buffer | null> {
    try {
      return await readFile(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** Writes `content` to the lock, synced, and renames it over the file. */
  async commit(content: Buffer | string): Promise<void> {
    const handle = await open(this.lockPath, 'w');
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(this.lockPath, this.file);
    const dir = await open(path.dirname(this.file), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  async release(): Promise<void> {
    await removeLockIfOurs(this.lockPath, this.inode);
  }
}

/** Removes a lock file only if it is still the one we created (same inode): never another git's. */
export async function removeLockIfOurs(lockPath: string, inode: number): Promise<boolean> {
  try {
    if ((await stat(lockPath)).ino !== inode) return false;
    await unlink(lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
