// The lock against a second undo (or redo) of one checkpoint by another process — two windows of
// one workspace. Its redo log was that lock while every log was a new file made with O_EXCL; a log
// written into a slot made ahead (redoSlots.ts) is not, so the lock is a file of its own, holding
// its owner's pid, made in line (no flush: a lock need not outlive a power cut). It is a second
// name of the process's owner file, made ahead: link(2) fails on an existing name as O_EXCL does,
// but allocates no new file, which took 0.3–1.4 ms of an undo's wait on ext4 (issue 28).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoreFiles } from './storeFiles';

export const RESTORE_LOCK_SUFFIX = '.lock';
const OWNER_PREFIX = 'owner-';

export function restoreLockPath(store: Pick<StoreFiles, 'journalsDir'>, id: string): string {
  return path.join(store.journalsDir, `${id}${RESTORE_LOCK_SUFFIX}`);
}

function ownerFilePath(journalsDir: string, pid: number): string {
  return path.join(journalsDir, `${OWNER_PREFIX}${pid}`);
}

/**
 * Makes this process's owner file (its pid), whose second names are its locks: ahead of the first
 * undo, where the store is prepared. Whole or absent for any reader (a temp renamed into place);
 * one an earlier process with the same pid left already says the same. Never throws: without it,
 * a lock is made as a new file.
 */
export function prepareRestoreLock(store: Pick<StoreFiles, 'journalsDir' | 'pid'>): void {
  const owner = ownerFilePath(store.journalsDir, store.pid);
  try {
    if (fs.readFileSync(owner, 'utf8') === String(store.pid)) return;
  } catch {
    // Not there yet.
  }
  const temp = `${owner}.${process.hrtime.bigint()}.tmp`;
  try {
    fs.writeFileSync(temp, String(store.pid), { mode: 0o600, flag: 'wx' });
    fs.renameSync(temp, owner);
  } catch {
    fs.rmSync(temp, { force: true });
  }
}

function ownerOf(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8'));
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A lock that names no owner yet may be between its creation and its write: held for this long. */
const UNNAMED_GRACE_MS = 5_000;

function abandoned(file: string, owner: number | undefined, alive: (pid: number) => boolean): boolean {
  if (owner !== undefined) return !alive(owner);
  try {
    return Date.now() - fs.lstatSync(file).mtimeMs > UNNAMED_GRACE_MS;
  } catch {
    return true;
  }
}

function create(file: string, store: Pick<StoreFiles, 'journalsDir' | 'pid'>): boolean {
  try {
    fs.linkSync(ownerFilePath(store.journalsDir, store.pid), file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    // No owner file (not prepared, or a cleaned storage): a file of its own.
  }
  return createNew(file, store.pid);
}

function createNew(file: string, pid: number): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    fs.writeSync(fd, String(pid));
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/**
 * Takes the lock of checkpoint `id` for this store's process: false while a live process holds it.
 * A lock whose owner is gone (or that has named none for seconds: a crash between its creation and
 * its write) is taken over, and so is one naming this process: the caller makes sure this process
 * is not undoing the checkpoint already (restoreRedoLog's inFlight), so it is an earlier process's
 * that had the same pid — a container's extension host often does. Throws when the folder refuses
 * the file (the caller's disk error).
 */
export function takeRestoreLock(store: Pick<StoreFiles, 'journalsDir' | 'pid' | 'processAlive'>, id: string): boolean {
  const file = restoreLockPath(store, id);
  if (create(file, store)) return true;
  if (!abandoned(file, ownerOf(file), (pid) => pid !== store.pid && store.processAlive(pid))) return false;
  fs.rmSync(file, { force: true });
  return create(file, store);
}

export function releaseRestoreLock(store: Pick<StoreFiles, 'journalsDir'>, id: string): void {
  fs.rmSync(restoreLockPath(store, id), { force: true });
}

/** Recovery: removes the locks and owner files dead processes left (a live owner's stay). */
export function removeDeadRestoreLocks(store: Pick<StoreFiles, 'journalsDir' | 'processAlive'>, names: readonly string[]): void {
  for (const name of names) {
    const file = path.join(store.journalsDir, name);
    if (name.endsWith(RESTORE_LOCK_SUFFIX)) {
      if (abandoned(file, ownerOf(file), (pid) => store.processAlive(pid))) fs.rmSync(file, { force: true });
      continue;
    }
    const owner = /^owner-(\d+)(?:\.\d+\.tmp)?$/.exec(name);
    if (owner && !store.processAlive(Number(owner[1]))) fs.rmSync(file, { force: true });
  }
}
