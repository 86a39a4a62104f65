// The sandbox's own folders: `<tmp>/speculate-sandbox-<uid>/<pid>/<run>/` (private, ours), removed
// after every run — including the overlay's work folder, which the kernel leaves with mode 000 —
// and those of processes that died, at the first run of the next one.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, lstatSync, mkdirSync, rmdirSync, rmSync } from 'node:fs';
import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import * as path from 'node:path';

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function uid(): string {
  return typeof process.getuid === 'function' ? String(process.getuid()) : 'user';
}

/** Creates a folder that only we can use (or only pass through: 0711); refuses one that is a symlink or someone else's. */
function privateDirectory(dir: string, mode = 0o700): void {
  mkdirSync(dir, { recursive: true, mode });
  const info = lstatSync(dir);
  const ours = typeof process.getuid !== 'function' || info.uid === process.getuid();
  if (!info.isDirectory() || !ours) {
    throw new Error(`The sandbox's folder ${dir} is a symlink or belongs to another user; remove it or point TMPDIR at a private folder.`);
  }
  if ((info.mode & 0o777) !== mode) chmodSync(dir, mode);
}

/** Removes a tree even where the command (or the kernel) left folders we may not enter or change. */
export async function removeTree(dir: string): Promise<void> {
  try {
    rmSync(dir, { recursive: true, force: true });
    return;
  } catch (error) {
    if (errorCode(error) !== 'EACCES' && errorCode(error) !== 'EPERM' && errorCode(error) !== 'ENOTEMPTY') throw error;
  }
  const openUp = async (folder: string): Promise<void> => {
    await chmod(folder, 0o700).catch(() => undefined);
    let names: string[] = [];
    try {
      names = await readdir(folder);
    } catch {
      return;
    }
    for (const name of names) {
      const child = path.join(folder, name);
      const info = await lstat(child).catch(() => undefined);
      if (info?.isDirectory()) await openUp(child);
    }
  };
  await openUp(dir);
  await rm(dir, { recursive: true, force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

export class ScratchSpace {
  private readonly base: string;
  private readonly own: string;
  private cleanedDead = false;
  private runs = 0;
  private active = 0;

  /**
   * `openTo`: the uid a command runs as when it is not ours (root's Landlock runs): it may pass
   * through the parent folders (0711, unlistable) and owns its run folder, whose name it cannot guess.
   */
  constructor(tmpRoot: string, private readonly options: { name?: string; openTo?: number } = {}) {
    this.base = path.join(tmpRoot, `${options.name ?? 'speculate-sandbox'}-${uid()}`);
    this.own = path.join(this.base, String(process.pid));
  }

  /** Folders of processes that no longer run (a crash mid-run) are removed. */
  private async removeDeadRuns(): Promise<void> {
    for (const name of await readdir(this.base).catch(() => [] as string[])) {
      if (!/^\d+$/.test(name) || Number(name) === process.pid || isAlive(Number(name))) continue;
      await removeTree(path.join(this.base, name)).catch(() => undefined);
    }
  }

  /** A fresh, empty, private folder for one run; give it back with release(). */
  async runFolder(): Promise<string> {
    this.active++;
    try {
      const openTo = this.options.openTo;
      const mode = openTo === undefined ? 0o700 : 0o711;
      privateDirectory(this.base, mode);
      if (!this.cleanedDead) {
        this.cleanedDead = true;
        await this.removeDeadRuns();
      }
      privateDirectory(this.own, mode);
      const dir = path.join(this.own, `run-${++this.runs}${openTo === undefined ? '' : `-${randomBytes(12).toString('hex')}`}`);
      mkdirSync(dir, { mode: 0o700 });
      if (openTo !== undefined) chownSync(dir, openTo, openTo);
      return dir;
    } catch (error) {
      this.active--;
      throw error;
    }
  }

  /** Removes a run's folder, and this process's folder once no run uses it: nothing stays behind. */
  async release(dir: string): Promise<void> {
    try {
      // The overlay leaves its work folder's inner folder with mode 000: open it first, or rm fails for a non-root user.
      try {
        chmodSync(path.join(dir, 'work', 'work'), 0o700);
      } catch {
        // No overlay work folder in this run.
      }
      await removeTree(dir);
    } finally {
      this.active--;
      if (this.active === 0) {
        try {
          rmdirSync(this.own);
        } catch {
          // Another run started meanwhile, or it is gone already.
        }
      }
    }
  }
}

/** Makes an overlayfs whiteout (character device 0/0) to hard-link from. Node cannot make device files; mknod may make this one unprivileged (Linux 5.8+). */
export function makeWhiteout(mknod: string, file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(mknod, ['-m', '000', file, 'c', '0', '0'], { timeout: 10_000 }, (error) => (error ? reject(new Error(`mknod failed: ${error.message}`)) : resolve(file)));
  });
}
