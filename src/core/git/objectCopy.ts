// Copies the speculation's loose objects into the real object store. Objects are content-addressed:
// each is checked against its name before it goes in (a sandboxed command could have written
// anything there), an existing one is left as it is, and each lands by link() so no reader ever
// sees half an object. Synced before any ref may point at it.
import { createHash, randomBytes } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import * as path from 'node:path';

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Throws unless the loose object's inflated bytes hash to its name. */
export function verifyLooseObject(relative: string, bytes: Buffer, oidLength: 40 | 64): void {
  const expected = relative.slice('objects/'.length).replace('/', '');
  let inflated: Buffer;
  try {
    inflated = inflateSync(bytes);
  } catch {
    throw new Error(`the speculated object ${expected} is not a zlib stream`);
  }
  const actual = createHash(oidLength === 40 ? 'sha1' : 'sha256').update(inflated).digest('hex');
  if (actual !== expected) throw new Error(`the speculated object ${expected} does not hold what its name says`);
}

/** Copies `objects` (paths relative to .git) from the layer into gitDir; returns how many were new. */
export async function copyObjects(layerDir: string, gitDir: string, objects: readonly string[], oidLength: 40 | 64): Promise<number> {
  const touchedDirs = new Set<string>();
  // All at once: each object's fsync dominates, and the disk batches concurrent flushes.
  const added = await Promise.all(
    objects.map(async (relative) => {
      const target = path.join(gitDir, relative);
      const bytes = await readFile(path.join(layerDir, relative));
      verifyLooseObject(relative, bytes, oidLength);
      const dir = path.dirname(target);
      await mkdir(dir, { recursive: true, mode: 0o755 });
      const temp = path.join(dir, `tmp_obj_speculate_${randomBytes(6).toString('hex')}`);
      const handle = await open(temp, 'wx', 0o444);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        await link(temp, target);
        touchedDirs.add(dir);
        return 1;
      } catch (error) {
        // Already there: the same name is the same content.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        return 0;
      } finally {
        await unlink(temp);
      }
    }),
  );
  await Promise.all([...touchedDirs].map(syncDir));
  return added.reduce<number>((sum, one) => sum + one, 0);
}
