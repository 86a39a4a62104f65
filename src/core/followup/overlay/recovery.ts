// Start-up housekeeping for overlays left by processes that died: finish or undo an accept that a
// crash interrupted (from its journal), then delete the dead processes' overlay folders.
import { readFile, readdir, realpath, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { resolveInsideWorkspace, toAbsolute } from '../../fs/paths';
import { isPrivateFolder, perUserName, usableTempFolders } from '../../fs/privateFolders';
import { errorCode, nodeApplyFs, type ApplyFs } from './applyFs';
import { JOURNAL_FILE, parseJournal, removeJournal, type ApplyJournal, type JournalStep } from './applyJournal';
import { sha256 } from './entries';

/** The per-user folder under a temp root that holds `<pid>/<id>/` overlays. */
export const OVERLAY_PARENT = perUserName('speculate');

/** Journals larger than this are not read (a real one names each touched file once). */
const MAX_JOURNAL_BYTES = 16 * 1024 * 1024;

export interface HousekeepingOptions {
  /**
   * The workspaces open now (any spelling): only journals naming one of them are acted on, and
   * only on paths inside it. Journals of other workspaces wait, untouched, until theirs is open.
   */
  workspaces: readonly string[];
  /** The temp folder overlays are created under; the OS temp folder by default. */
  tmpRoot?: string;
  /** The fallbacks OverlayFs.create may have used; fallbackTempFolders() by default. */
  fallbackTmpRoots?: readonly string[];
  /** Defaults to `process.kill(pid, 0)`; tests pass their own. */
  isProcessAlive?: (pid: number) => boolean;
  fs?: ApplyFs;
}

export interface RecoveryOutcome {
  /** The dead process that left the journal. */
  pid: number;
  workspaceRoot: string;
  overlayId: string;
  /**
   * rolled-forward: the accept was past its commit point and is now complete.
   * rolled-back: it was still staging; its temps are gone and the workspace is as before.
   * abandoned: the journal cannot be used (unreadable, or its workspace is gone).
   * failed: an I/O error stopped recovery; the journal is kept for the next start.
   * waiting: its workspace is not open now; the journal is kept, untouched, until it is.
   */
  outcome: 'rolled-forward' | 'rolled-back' | 'abandoned' | 'failed' | 'waiting';
  /** Files that now hold the accepted version. */
  applied: string[];
  /** Files left as the user has them (changed since, or the accept never reached them). */
  kept: string[];
  message?: string;
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else — still alive.
    return errorCode(error) === 'EPERM';
  }
}

interface DeadOverlay {
  pid: number;
  overlayDir: string;
  overlayId: string;
}

/** A folder the engine made itself: real, ours, mode 0700. Anything else is never read or acted on. */
async function enginesOwn(fs: ApplyFs, dir: string): Promise<boolean> {
  const info = await fs.lstat(dir);
  if (!info) return false;
  return isPrivateFolder({ isDirectory: info.type === 'directory', isSymbolicLink: info.type === 'symlink', uid: info.uid, mode: info.mode });
}

async function listDirs(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    throw error;
  }
}

/** Every per-user overlay folder the engine may have used, outside the open workspaces. */
async function overlayParents(options: HousekeepingOptions): Promise<string[]> {
  const bases = await usableTempFolders({ preferred: options.tmpRoot, fallbacks: options.fallbackTmpRoots, avoid: options.workspaces });
  return bases.map((base) => path.join(base, OVERLAY_PARENT));
}

async function deadPidDirs(options: HousekeepingOptions): Promise<string[]> {
  const fs = options.fs ?? nodeApplyFs;
  const alive = options.isProcessAlive ?? isProcessAlive;
  const owned: string[] = [];
  for (const parent of await overlayParents(options)) {
    if (!(await enginesOwn(fs, parent))) continue;
    const names = (await listDirs(parent)).filter((name) => /^[1-9][0-9]*$/.test(name) && !alive(Number(name)));
    for (const name of names) if (await enginesOwn(fs, path.join(parent, name))) owned.push(path.join(parent, name));
  }
  return owned;
}

async function deadOverlays(options: HousekeepingOptions): Promise<DeadOverlay[]> {
  const fs = options.fs ?? nodeApplyFs;
  const found: DeadOverlay[] = [];
  for (const pidDir of await deadPidDirs(options)) {
    const pid = Number(path.basename(pidDir));
    for (const id of await listDirs(pidDir)) {
      const overlayDir = path.join(pidDir, id);
      if (await enginesOwn(fs, overlayDir)) found.push({ pid, overlayDir, overlayId: id });
    }
  }
  return found;
}

/** Whether the real file still matches what the interrupted accept expected to replace. */
async function matchesExpectation(fs: ApplyFs, root: string, step: JournalStep): Promise<boolean> {
  const absolute = toAbsolute(root, step.path);
  const info = await fs.lstat(absolute);
  if (!step.expect.exists) return info === undefined;
  if (info?.type !== 'file' || info.size !== step.expect.size) return false;
  return sha256(await fs.readFile(absolute)) === step.expect.sha256;
}

async function placeable(root: string, relative: string): Promise<boolean> {
  try {
    return (await resolveInsideWorkspace(root, relative)) === relative;
  } catch {
    return false;
  }
}

async function removeTemp(fs: ApplyFs, root: string, temp: string | undefined): Promise<boolean> {
  if (!temp || !(await placeable(root, temp))) return false;
  const absolute = toAbsolute(root, temp);
  if ((await fs.lstat(absolute))?.type !== 'file') return false;
  await fs.unlink(absolute);
  return true;
}

async function rollBack(fs: ApplyFs, journal: ApplyJournal): Promise<Omit<RecoveryOutcome, 'pid' | 'workspaceRoot' | 'overlayId'>> {
  const root = journal.workspaceRoot;
  for (const step of journal.steps) await removeTemp(fs, root, step.temp);
  for (const dir of [...journal.createdDirs].reverse()) {
    if (await placeable(root, dir)) await fs.rmdirIfEmpty(toAbsolute(root, dir));
  }
  return { outcome: 'rolled-back', applied: [], kept: journal.steps.map((s) => s.path) };
}

async function rollForward(fs: ApplyFs, journal: ApplyJournal): Promise<Omit<RecoveryOutcome, 'pid' | 'workspaceRoot' | 'overlayId'>> {
  const root = journal.workspaceRoot;
  const applied: string[] = [];
  const kept: string[] = [];
  const touchedDirs = new Set<string>();
  for (const step of journal.steps) {
    const target = toAbsolute(root, step.path);
    if (!(await placeable(root, step.path))) {
      await removeTemp(fs, root, step.temp);
      kept.push(step.path);
      continue;
    }
    if (step.action === 'write') {
      const temp = step.temp && (await placeable(root, step.temp)) ? toAbsolute(root, step.temp) : undefined;
      if (!temp || (await fs.lstat(temp))?.type !== 'file') {
        // No temp: renamed before the crash — unless the accept refused this file at the last moment.
        if (await matchesExpectation(fs, root, step)) kept.push(step.path);
        else applied.push(step.path);
      } else if (await matchesExpectation(fs, root, step)) {
        await fs.rename(temp, target);
        touchedDirs.add(path.dirname(target));
        applied.push(step.path);
      } else {
        // The user changed the file after the crash: their version wins.
        await fs.unlink(temp);
        kept.push(step.path);
      }
    } else if ((await fs.lstat(target)) === undefined) {
      applied.push(step.path);
    } else if (await matchesExpectation(fs, root, step)) {
      await fs.unlink(target);
      touchedDirs.add(path.dirname(target));
      applied.push(step.path);
    } else {
      kept.push(step.path);
    }
  }
  for (const dir of touchedDirs) await fs.fsyncDirectory(dir).catch(() => undefined);
  return { outcome: 'rolled-forward', applied, kept };
}

async function realOrUndefined(dir: string): Promise<string | undefined> {
  try {
    return await realpath(dir);
  } catch {
    return undefined;
  }
}

/** The journal's text when it is a plain file of ours of sane size; undefined otherwise. */
async function readOwnJournal(fs: ApplyFs, journalPath: string): Promise<string | undefined> {
  const info = await fs.lstat(journalPath);
  if (info?.type !== 'file' || info.size > MAX_JOURNAL_BYTES) return undefined;
  if (typeof process.getuid === 'function' && info.uid !== process.getuid()) return undefined;
  return readFile(journalPath, 'utf8');
}

async function recoverOne(fs: ApplyFs, overlay: DeadOverlay, openRoots: ReadonlySet<string>): Promise<RecoveryOutcome | undefined> {
  const journalPath = path.join(overlay.overlayDir, JOURNAL_FILE);
  if (!(await fs.lstat(journalPath))) return undefined;
  const text = await readOwnJournal(fs, journalPath);
  const journal = text === undefined ? undefined : parseJournal(text);
  if (!journal) {
    return { pid: overlay.pid, workspaceRoot: '', overlayId: overlay.overlayId, outcome: 'abandoned', applied: [], kept: [], message: 'An interrupted accept left a journal that cannot be read; it was not acted on.' };
  }
  const head = { pid: overlay.pid, workspaceRoot: journal.workspaceRoot, overlayId: overlay.overlayId };
  const realRoot = await realOrUndefined(journal.workspaceRoot);
  if (realRoot !== journal.workspaceRoot || (await fs.lstat(realRoot))?.type !== 'directory') {
    return { ...head, outcome: 'abandoned', applied: [], kept: journal.steps.map((s) => s.path), message: `The workspace ${journal.workspaceRoot} of an interrupted accept no longer exists; nothing was changed.` };
  }
  if (!openRoots.has(realRoot)) {
    return { ...head, outcome: 'waiting', applied: [], kept: journal.steps.map((s) => s.path), message: `An interrupted accept in ${journal.workspaceRoot} is finished when that folder is opened again.` };
  }
  try {
    const result = journal.phase === 'staging' ? await rollBack(fs, journal) : await rollForward(fs, journal);
    await removeJournal(fs, overlay.overlayDir);
    return { ...head, ...result };
  } catch (error) {
    return {
      ...head,
      outcome: 'failed',
      applied: [],
      kept: [],
      message: `Finishing an interrupted accept in ${journal.workspaceRoot} failed (${errorCode(error) ?? String(error)}); it will be tried again on the next start.`,
    };
  }
}

async function realRootsOf(workspaces: readonly string[]): Promise<Set<string>> {
  const roots = await Promise.all(workspaces.map(realOrUndefined));
  return new Set(roots.filter((root): root is string => root !== undefined));
}

/** Recovery of every dead overlay, with the folder each outcome came from. */
async function recoverAll(options: HousekeepingOptions): Promise<{ overlay: DeadOverlay; outcome: RecoveryOutcome | undefined }[]> {
  const fs = options.fs ?? nodeApplyFs;
  const openRoots = await realRootsOf(options.workspaces);
  const results: { overlay: DeadOverlay; outcome: RecoveryOutcome | undefined }[] = [];
  for (const overlay of await deadOverlays(options)) results.push({ overlay, outcome: await recoverOne(fs, overlay, openRoots) });
  return results;
}

/**
 * Finishes (journal past its commit point) or undoes (still staging) every accept that a process
 * which no longer exists left behind under `<tmp>/speculate-<uid>/`, for the workspaces open now.
 * Only folders the engine made (ours, mode 0700, outside every open workspace) are read, and only
 * paths inside the journal's workspace are touched. Live processes' overlays are never touched:
 * they may be in the middle of an accept.
 */
export async function recoverInterruptedApplies(options: HousekeepingOptions): Promise<RecoveryOutcome[]> {
  return (await recoverAll(options)).flatMap(({ outcome }) => (outcome ? [outcome] : []));
}

export interface StaleCleanupReport {
  recovery: RecoveryOutcome[];
  /** Pids whose overlay folders were removed. */
  removed: number[];
  /** Pids whose folders were kept: a recovery failed (retried next start) or waits for its workspace. */
  kept: number[];
}

/**
 * Removes the overlays of processes that no longer exist, after recovering their interrupted
 * accepts; an overlay whose journal could not be finished yet stays. Call on extension
 * activation and CLI start.
 */
export async function cleanupStaleOverlays(options: HousekeepingOptions): Promise<StaleCleanupReport> {
  const fs = options.fs ?? nodeApplyFs;
  const results = await recoverAll(options);
  const keep = new Set(results.filter(({ outcome }) => outcome?.outcome === 'failed' || outcome?.outcome === 'waiting').map(({ overlay }) => overlay.overlayDir));
  for (const { overlay } of results) if (!keep.has(overlay.overlayDir)) await rm(overlay.overlayDir, { recursive: true, force: true });
  const removed: number[] = [];
  const kept: number[] = [];
  for (const pidDir of await deadPidDirs(options)) {
    const pid = Number(path.basename(pidDir));
    if ([...keep].some((dir) => path.dirname(dir) === pidDir) || !(await fs.rmdirIfEmpty(pidDir))) kept.push(pid);
    else removed.push(pid);
  }
  return { recovery: results.flatMap(({ outcome }) => (outcome ? [outcome] : [])), removed, kept };
}
