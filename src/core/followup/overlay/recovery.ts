// Start-up housekeeping for overlays left by processes that died: finish or undo an accept that a
// crash interrupted (from its journal), then delete the dead processes' overlay folders.
import { readFile, readdir, realpath, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { resolveInsideWorkspace, toAbsolute } from '../../fs/paths';
import { errorCode, nodeApplyFs, type ApplyFs } from './applyFs';
import { JOURNAL_FILE, parseJournal, removeJournal, type ApplyJournal, type JournalStep } from './applyJournal';
import { sha256 } from './entries';

/** The folder under the temp root that holds `<pid>/<id>/` overlays. */
export const OVERLAY_PARENT = 'speculate';

export interface HousekeepingOptions {
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
   */
  outcome: 'rolled-forward' | 'rolled-back' | 'abandoned' | 'failed';
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

/** Our own folders only: another user's `speculate` folder is never read or acted on. */
async function ownedDirectory(fs: ApplyFs, dir: string): Promise<boolean> {
  const info = await fs.lstat(dir);
  if (info?.type !== 'directory') return false;
  return typeof process.getuid !== 'function' || info.uid === process.getuid();
}

async function listDirs(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    throw error;
  }
}

async function deadPidDirs(tmpRoot: string, options: HousekeepingOptions): Promise<string[]> {
  const fs = options.fs ?? nodeApplyFs;
  const parent = path.join(tmpRoot, OVERLAY_PARENT);
  if (!(await ownedDirectory(fs, parent))) return [];
  const alive = options.isProcessAlive ?? isProcessAlive;
  const names = (await listDirs(parent)).filter((name) => /^[1-9][0-9]*$/.test(name) && !alive(Number(name)));
  const owned: string[] = [];
  for (const name of names) if (await ownedDirectory(fs, path.join(parent, name))) owned.push(path.join(parent, name));
  return owned;
}

async function deadOverlays(tmpRoot: string, options: HousekeepingOptions): Promise<DeadOverlay[]> {
  const found: DeadOverlay[] = [];
  for (const pidDir of await deadPidDirs(tmpRoot, options)) {
    const pid = Number(path.basename(pidDir));
    for (const id of await listDirs(pidDir)) found.push({ pid, overlayDir: path.join(pidDir, id), overlayId: id });
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

async function recoverOne(fs: ApplyFs, overlay: DeadOverlay): Promise<RecoveryOutcome | undefined> {
  const journalPath = path.join(overlay.overlayDir, JOURNAL_FILE);
  const info = await fs.lstat(journalPath);
  if (!info) return undefined;
  const journal = info.type === 'file' ? parseJournal(await readFile(journalPath, 'utf8')) : undefined;
  if (!journal) {
    return { pid: overlay.pid, workspaceRoot: '', overlayId: overlay.overlayId, outcome: 'abandoned', applied: [], kept: [], message: 'An interrupted accept left a journal that cannot be read; it was not acted on.' };
  }
  const head = { pid: overlay.pid, workspaceRoot: journal.workspaceRoot, overlayId: overlay.overlayId };
  let realRoot: string | undefined;
  try {
    realRoot = await realpath(journal.workspaceRoot);
  } catch {
    realRoot = undefined;
  }
  if (realRoot !== journal.workspaceRoot || (await fs.lstat(realRoot))?.type !== 'directory') {
    return { ...head, outcome: 'abandoned', applied: [], kept: journal.steps.map((s) => s.path), message: `The workspace ${journal.workspaceRoot} of an interrupted accept no longer exists; nothing was changed.` };
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

/**
 * Finishes (journal past its commit point) or undoes (still staging) every accept that a process
 * which no longer exists left behind under `<tmpRoot>/speculate/`. The journal names its workspace.
 * Live processes' overlays are never touched: they may be in the middle of an accept.
 */
export async function recoverInterruptedApplies(tmpRoot: string, options: HousekeepingOptions = {}): Promise<RecoveryOutcome[]> {
  const fs = options.fs ?? nodeApplyFs;
  const outcomes: RecoveryOutcome[] = [];
  for (const overlay of await deadOverlays(tmpRoot, options)) {
    const outcome = await recoverOne(fs, overlay);
    if (outcome) outcomes.push(outcome);
  }
  return outcomes;
}

export interface StaleCleanupReport {
  recovery: RecoveryOutcome[];
  /** Pids whose overlay folders were removed. */
  removed: number[];
  /** Pids whose folders were kept because a recovery failed and must be retried. */
  kept: number[];
}

/**
 * Removes the overlays of processes that no longer exist, after recovering their interrupted
 * accepts. Call on extension activation and CLI start.
 */
export async function cleanupStaleOverlays(tmpRoot: string, options: HousekeepingOptions = {}): Promise<StaleCleanupReport> {
  const recovery = await recoverInterruptedApplies(tmpRoot, options);
  const retry = new Set(recovery.filter((r) => r.outcome === 'failed').map((r) => r.pid));
  const removed: number[] = [];
  const kept: number[] = [];
  for (const pidDir of await deadPidDirs(tmpRoot, options)) {
    const pid = Number(path.basename(pidDir));
    if (retry.has(pid)) {
      kept.push(pid);
    } else {
      await rm(pidDir, { recursive: true, force: true });
      removed.push(pid);
    }
  }
  return { recovery, removed, kept };
}
