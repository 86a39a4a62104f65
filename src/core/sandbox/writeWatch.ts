// Stops a sandboxed command that writes more than it may, on every backend: the disk's free space
// is cheap to ask, and only when it dropped by more than the limit is the written folder measured.
import { lstat, readdir, statfs } from 'node:fs/promises';
import * as path from 'node:path';

/** Watches `written` (a folder on the disk of `diskDir`); calls onTooLarge once it holds more than maxBytes. Returns the stop function. */
export function watchWrites(diskDir: string, maxBytes: number, written: string, onTooLarge: () => void, every = 500): () => void {
  let baseline: number | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const free = async () => {
    const info = await statfs(diskDir);
    return info.bavail * info.bsize;
  };
  void free().then((value) => (baseline = value)).catch(() => undefined);
  const check = async () => {
    try {
      if (baseline !== undefined && baseline - (await free()) > maxBytes && (await treeBytes(written)) > maxBytes) {
        if (!stopped) onTooLarge();
        return;
      }
    } catch {
      // The run is ending; nothing left to watch.
      return;
    }
    if (!stopped) timer = setTimeout(() => void check(), every);
  };
  timer = setTimeout(() => void check(), every);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await treeBytes(child);
    else if (entry.isFile()) total += (await lstat(child)).size;
  }
  return total;
}
