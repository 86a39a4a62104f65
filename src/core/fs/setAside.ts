// Replaced files set aside past a redo log's commit point: a second name of the old file is made
// in the state folder before the temp is renamed over it, so the rename frees nothing on the wait;
// the change's flush removes that name (freeing the old blocks) after the user has the result. On
// this disk freeing a 1 KB file's blocks took ~0.25 ms, a rename over a file kept by another name
// 0.02 ms; a real workspace's files are on disk, so every file an accept or undo replaces has some.
// The names live outside the workspace (nothing there for git or a watcher to see) and need no
// durability: a name left by a crash or a power cut is removed by the next start.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RedoFs } from './redoRecovery';

const SET_ASIDE_FOLDER = 'set-aside';

const folders = new Map<string, string | undefined>();

/**
 * The folder of `stateDir` where replaced files of `root` wait for the flush, made on first use;
 * undefined when it is on another disk than the workspace (a hard link cannot cross) or cannot be made.
 */
export function asideFolderFor(stateDir: string, root: string): string | undefined {
  const key = `${stateDir}\0${root}`;
  if (folders.has(key)) return folders.get(key);
  let folder: string | undefined = path.join(stateDir, SET_ASIDE_FOLDER);
  if (!makeFolder(folder)) folder = undefined;
  try {
    if (folder && fs.lstatSync(folder).dev !== fs.statSync(root).dev) folder = undefined;
  } catch {
    folder = undefined;
  }
  folders.set(key, folder);
  return folder;
}

const prefix = randomBytes(4).toString('hex');
let counter = 0;

/**
 * Gives `file` (absolute) a second name in `folder`, owned by `pid`; that name, or undefined where
 * none can be made (then the rename frees the old file itself, as before).
 */
export async function keepAside(io: Pick<RedoFs, 'link'>, folder: string | undefined, file: string, pid: number): Promise<string | undefined> {
  if (!folder) return undefined;
  const name = path.join(folder, `${pid}-${prefix}${(counter++).toString(16)}`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await io.link(file, name);
      return name;
    } catch (error) {
      // The state folder was emptied since the folder was made (a cleaned storage): made again, once.
      if (attempt > 0 || (error as NodeJS.ErrnoException).code !== 'ENOENT' || !makeFolder(folder)) return undefined;
    }
  }
  return undefined;
}

function makeFolder(folder: string): boolean {
  try {
    fs.mkdirSync(folder, { mode: 0o700 });
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EEXIST';
  }
}

/** At start-up: the names a process that is gone left (its flush never came); a live one's are its own. */
export function removeLeftAsides(stateDir: string, alive: (pid: number) => boolean): void {
  const folder = path.join(stateDir, SET_ASIDE_FOLDER);
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^(\d+)-[0-9a-f]+$/.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || alive(pid)) continue;
    fs.rmSync(path.join(folder, name), { force: true });
  }
}
