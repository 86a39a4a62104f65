// The overlay's private folder, `<tmp>/speculate-<uid>/<pid>/<id>/` with its blobs folder: made
// outside every open workspace, private to the user, and said as a storage failure when the disk refuses.
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { choosePrivateBase, ensurePrivateFolder } from '../../fs/privateFolders';
import { codeOf, OverlayStorageError, STORAGE_CODES } from './overlayErrors';
import type { OverlayFsOptions } from './overlayOptions';
import { OVERLAY_PARENT } from './recovery';

const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;
/** Tries at creating the overlay folder while other overlays' cleanups remove the shared pid folder. */
const CREATE_ATTEMPTS = 8;

async function makeOverlayDirectory(dir: string, id: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    if (codeOf(error) === 'EEXIST') throw new Error(`A speculation named "${id}" already exists; give each speculation its own id.`);
    throw error;
  }
}

export async function makeOverlayFolder(options: OverlayFsOptions): Promise<{ id: string; dir: string }> {
  const id = options.id ?? randomUUID();
  if (!SAFE_ID.test(id)) throw new Error(`"${id}" cannot name a speculation; use letters, digits, "-", "_" or ".".`);
  const tempBase = await choosePrivateBase({ preferred: options.tmpRoot, fallbacks: options.fallbackTmpRoots, avoid: [options.base.root, ...(options.avoidRoots ?? [])] });
  const parent = path.join(tempBase, OVERLAY_PARENT);
  const pidDir = path.join(parent, String(options.pid ?? process.pid));
  const dir = path.join(pidDir, id);
  let made = false;
  try {
    await ensurePrivateFolder(parent);
    for (let attempt = 1; ; attempt++) {
      try {
        await ensurePrivateFolder(pidDir);
        await makeOverlayDirectory(dir, id);
        made = true;
        break;
      } catch (error) {
        // Another overlay's cleanup() removes the pid folder when it is empty, which it is until our
        // mkdir lands: ensure it again. Bounded, so a folder that keeps vanishing still fails.
        if (codeOf(error) === 'ENOENT' && attempt < CREATE_ATTEMPTS) continue;
        throw error;
      }
    }
    // Safe from here: the pid folder holds our folder, so no cleanup's rmdir can remove it.
    await mkdir(path.join(dir, 'blobs'), { mode: 0o700 });
  } catch (error) {
    if (made) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    if (STORAGE_CODES.has(codeOf(error))) throw new OverlayStorageError('', 'create', codeOf(error));
    throw error;
  }
  return { id, dir };
}
