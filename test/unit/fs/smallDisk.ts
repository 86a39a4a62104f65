// A small disk for the full-disk tests: a tmpfs of a few hundred KB mounted in the test (CI runs as
// root, so these run there). Without root the test fails and says why: it is never skipped.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, statfs } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';

export interface SmallDisk {
  /** The mount point. */
  dir: string;
  freeBytes(): Promise<number>;
  unmount(): Promise<void>;
}

export async function mountSmallDisk(sizeKb = 256): Promise<SmallDisk> {
  assert.equal(process.getuid?.(), 0, 'mounting a small tmpfs for the full-disk tests needs root (CI runs as root); run the tests as root');
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-small-disk-')));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=0755`, 'tmpfs', dir]);
  return {
    dir,
    freeBytes: async () => {
      const info = await statfs(dir);
      return Number(info.bavail) * Number(info.bsize);
    },
    async unmount() {
      execFileSync('umount', [dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
