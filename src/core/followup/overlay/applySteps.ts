// The staging and commit steps both of accept's commits share: temps (hard links to the overlay's
// blobs where the disk allows), the renames past the commit point, roll-back, and disk errors in words.
import * as path from 'node:path';
import { toAbsolute } from '../../fs/paths';
import { asideFolderFor, keepAside } from '../../fs/setAside';
import { describeNoSpace, isNoSpace } from '../../fs/diskSpace';
import { errorCode, processIds, type ApplyFsStat } from './applyFs';
import { removeJournal, type ApplyJournal, type JournalStep } from './applyJournal';
import { FolderChecks } from './applyFolders';
import { readBlob } from './blobs';
import { isAtOrBelow, type OverlayEntry } from './entries';
import { forEachLimited } from './pool';
import { OverlayApplyError, CONCURRENCY, StepFailure, type Conflict, type OverlayApplyResult, type DeferredSave, type ApplyInput, type StorageSide } from './applyTypes';
import { conflict, placeAgain, unchangedSinceCheck, leadsElsewhere, sortConflicts } from './applyChecks';

export interface PlannedStep extends JournalStep {
  entry: OverlayEntry;
  seen: ApplyFsStat | undefined;
}

export function describeCode(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.name : 'unknown error');
}

export async function rollBackStaging(input: ApplyInput, staged: PlannedStep[], createdDirs: string[], journal = true): Promise<void> {
  await Promise.all(staged.map((step) => (step.temp ? input.fs.unlink(toAbsolute(input.root, step.temp)).catch(() => undefined) : undefined)));
  for (const dir of [...createdDirs].reverse()) await input.fs.rmdirIfEmpty(toAbsolute(input.root, dir)).catch(() => false);
  if (journal) await removeJournal(input.fs, input.overlayDir).catch(() => undefined);
}

/** Removes the emptied folders below (and including) each deleted folder; never follows symlinks. */
export async function removeEmptiedDirs(input: ApplyInput, kept: readonly string[]): Promise<void> {
  const removeTree = async (dir: string): Promise<void> => {
    const entries = await input.fs.readdir(toAbsolute(input.root, dir)).catch(() => []);
    for (const entry of entries) if (entry.type === 'directory') await removeTree(`${dir}/${entry.name}`);
    await input.fs.rmdirIfEmpty(toAbsolute(input.root, dir));
  };
  const deepestFirst = [...input.deletedDirs].sort((a, b) => b.split('/').length - a.split('/').length);
  for (const dir of deepestFirst) {
    if (dir === '' || kept.some((file) => isAtOrBelow(dir, file))) continue;
    if ((await placeAgain(input.root, dir)) !== undefined) continue;
    if ((await input.fs.lstat(toAbsolute(input.root, dir)))?.type !== 'directory') continue;
    await removeTree(dir).catch(() => undefined);
  }
}

export type Saved = { ok: true; refused: Set<string>; deferred: DeferredSave | undefined } | { ok: false; error: unknown };

export interface StagingContext {
  plan: PlannedStep[];
  /** Folders to create, parents first. */
  dirs: string[];
  applied: string[];
  conflicts: Conflict[];
  folders: FolderChecks;
  saving: Promise<Saved>;
  journal: ApplyJournal;
}

export function savingFailed(saved: Extract<Saved, { ok: false }>, plan: PlannedStep[], applied: string[], conflicts: Conflict[]): OverlayApplyError {
  const code = describeCode(saved.error);
  return new OverlayApplyError(
    `Accepting the speculation failed: the checkpoint that undoes it could not be saved (${saved.error instanceof Error ? saved.error.message : code}); no file in the workspace was changed. Free disk space for the extension's storage, then accept again.`,
    plan[0].path,
    applied,
    [{ path: plan[0].path, code }],
    conflicts,
  );
}

/**
 * The staging look at one step's folder (looked at again right before its temp goes in): a step
 * whose path now leads out of the workspace is refused and becomes a conflict; true when it did.
 */
export async function refuseIfLeadsElsewhere(input: ApplyInput, staging: FolderChecks, step: PlannedStep, refused: Set<PlannedStep>, conflicts: Conflict[]): Promise<boolean> {
  const unsafe = await leadsElsewhere(input, staging, step.path);
  if (!unsafe) return false;
  refused.add(step);
  conflicts.push(conflict(step.path, unsafe, step.action === 'delete'));
  return true;
}

/** The steps whose before-state the checkpoint could not save (it changed at that moment) become conflicts. */
export function dropRefused(plan: PlannedStep[], saved: Extract<Saved, { ok: true }>, refused: Set<PlannedStep>, conflicts: Conflict[]): PlannedStep[] {
  for (const step of plan) {
    if (!saved.refused.has(step.path) || refused.has(step)) continue;
    refused.add(step);
    conflicts.push(conflict(step.path, step.expect.exists ? 'modified' : 'created', step.action === 'delete'));
  }
  return plan.filter((step) => !refused.has(step));
}

export async function createDirs(input: ApplyInput, dirs: readonly string[]): Promise<{ failed: string; error: unknown } | undefined> {
  for (const dir of dirs) {
    try {
      await input.fs.mkdir(toAbsolute(input.root, dir));
    } catch (error) {
      return { failed: dir, error };
    }
  }
  return undefined;
}

/** The overlay's copy of a written file; its failure is the overlay's, nothing the live path would meet. */
export async function overlayBytes(input: ApplyInput, step: PlannedStep): Promise<Uint8Array> {
  if (step.entry.kind !== 'written') throw new Error('only written entries have bytes');
  try {
    return await readBlob(input.blobPath(step.entry.blob), step.entry.size);
  } catch (error) {
    throw new StepFailure(step.path, error, 'overlay');
  }
}

/**
 * Committing: each rename replaces one whole file; a late change by the user still wins. One at a
 * time and in order, so a crash leaves a prefix committed; each folder is looked at again once.
 */
export async function commitSteps(input: ApplyInput, commit: PlannedStep[], committingFolders: FolderChecks, applied: string[], conflicts: Conflict[], parallel = false) {
  const failed: { path: string; code: string }[] = [];
  const touchedDirs = new Set<string>();
  const renamed: string[] = [];
  /** Replaced files kept by a second name until the flush (setAside.ts); redo-log commits only. */
  const setAside: string[] = [];
  const asides = parallel && input.redoDir ? asideFolderFor(input.redoDir, input.root) : undefined;
  // The last-moment look at the next file is already under way while the current one is renamed.
  const lookAt = (step: PlannedStep) => {
    const look = (async () => (await leadsElsewhere(input, committingFolders, step.path)) ?? ((await unchangedSinceCheck(input, step.path, step.seen, step.expect)) ? 'unchanged' : 'changed'))();
    look.catch(() => undefined);
    return look;
  };
  const one = async (step: PlannedStep, index: number, look: ReturnType<typeof lookAt>): Promise<void> => {
    const target = toAbsolute(input.root, step.path);
    let committed = false;
    try {
      const state = await look;
      if (state === 'changed') {
        conflicts.push(conflict(step.path, step.expect.exists ? 'modified' : 'created', step.action === 'delete'));
      } else if (state !== 'unchanged') {
        conflicts.push(conflict(step.path, state ?? 'path-changed', step.action === 'delete'));
      } else {
        if (step.temp) {
          const aside = step.expect.exists ? await keepAside(input.fs, asides, target, input.pid ?? process.pid) : undefined;
          try {
            await input.fs.rename(toAbsolute(input.root, step.temp), target);
          } catch (error) {
            if (aside) await input.fs.unlink(aside).catch(() => undefined);
            throw error;
          }
          renamed.push(target);
          if (aside) setAside.push(aside);
        } else await input.fs.unlink(target);
        committed = true;
        applied.push(step.path);
        touchedDirs.add(path.dirname(target));
      }
    } catch (error) {
      failed.push({ path: step.path, code: describeCode(error) });
    }
    if (step.temp && !committed) await input.fs.unlink(toAbsolute(input.root, step.temp)).catch(() => undefined);
    input.onStep?.({ phase: 'committed', path: step.path, index });
  };
  if (parallel) {
    // Past a redo log's commit any subset of renames is recoverable: a few at once.
    await forEachLimited(commit, CONCURRENCY, (step, index) => one(step, index, lookAt(step)));
    applied.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { failed, touchedDirs, renamed, setAside };
  }
  let next = commit.length > 0 ? lookAt(commit[0]) : undefined;
  for (const [index, step] of commit.entries()) {
    const look = next!;
    next = index + 1 < commit.length ? lookAt(commit[index + 1]) : undefined;
    await one(step, index, look);
  }
  return { failed, touchedDirs, renamed, setAside };
}


export async function finishApply(input: ApplyInput, applied: string[], conflicts: Conflict[], failed: { path: string; code: string }[]): Promise<OverlayApplyResult> {
  await removeEmptiedDirs(input, [...conflicts.map((c) => c.path), ...failed.map((f) => f.path)]);
  if (failed.length > 0) {
    const first = failed[0];
    const others = failed.length > 1 ? ` and ${failed.length - 1} more file(s)` : '';
    throw new OverlayApplyError(
      `Accepting the speculation failed for "${first.path}" (${first.code})${others}; ${applied.length} other file(s) were applied and the failed ones keep your version. Check that they are writable, then accept again.`,
      first.path,
      applied,
      failed,
      sortConflicts(conflicts),
      failed.some((f) => WORKSPACE_REFUSALS.has(f.code)),
    );
  }
  return { applied, conflicts: sortConflicts(conflicts) };
}

/** Codes that mean the workspace's disk or permissions refused: the live path would meet them too. */
const WORKSPACE_REFUSALS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM']);

/**
 * The error of a staging failure, in words: which disk is full and how much the accept needed, a
 * read-only disk, a folder without permission, or the overlay's own storage failing.
 */
export async function stagingError(input: ApplyInput, file: string, error: unknown, side: StorageSide, neededBytes: number, applied: string[], conflicts: Conflict[]): Promise<OverlayApplyError> {
  const code = describeCode(error);
  const unchanged = 'no file in the workspace was changed';
  let why: string;
  if (side === 'state') {
    why = `the extension's storage could not hold the record of this accept (${code}); ${unchanged}. Free disk space for the extension's storage, then accept again`;
  } else if (side === 'overlay') {
    why = `the speculation's own copy could not be ${code === 'ENOSPC' || code === 'EDQUOT' ? 'saved: the temp folder is full' : `read (${code})`}; ${unchanged}. Run the request again`;
  } else if (isNoSpace(code)) {
    why = `${await describeNoSpace(path.dirname(toAbsolute(input.root, file)), neededBytes)}; ${unchanged}. Free some space, then accept again`;
  } else if (code === 'EROFS') {
    why = `the disk holding the workspace is mounted read-only; ${unchanged}`;
  } else if (code === 'EACCES' || code === 'EPERM') {
    why = `permission denied in its folder (${code}); ${unchanged}. Make the folder writable, then accept again`;
  } else {
    why = `${code}; ${unchanged}. Check that the folder is writable and the disk has space, then accept again`;
  }
  const liveWouldFail = side === 'workspace' && WORKSPACE_REFUSALS.has(code);
  return new OverlayApplyError(`Accepting the speculation failed while preparing "${file}": ${why}.`, file, applied, [{ path: file, code }], conflicts, liveWouldFail);
}

/** Whether a file made by this process would have the real file's owner and group (or there is none). */
function ownedHere(seen: ApplyFsStat | undefined): boolean {
  return !seen || (seen.uid === processIds.uid && seen.gid === processIds.gid);
}

/**
 * Stages a temp from the overlay's copy (its blob, never written again) without the bytes passing
 * through here: a hard link where the blob is on the same disk — no new file for the disk to
 * allocate, which on ext4 costs more than all the rest of a small file's accept — else a copy in
 * one call. Only where the temp would get nothing else anyway: an existing file's exact mode, this
 * process's owner and group. False when neither can be done (any failure): the caller writes the
 * bytes itself, and meets any real error there.
 */
export async function stageFromBlob(input: ApplyInput, step: PlannedStep, sync: boolean): Promise<boolean> {
  const entry = step.entry;
  if (entry.kind !== 'written' || entry.mode === undefined || !step.temp || !ownedHere(step.seen)) return false;
  const blob = input.blobPath(entry.blob);
  const temp = toAbsolute(input.root, step.temp);
  try {
    // A stored copy of another size is damaged: the caller's read reports it (readBlob's EIO).
    const stored = await input.fs.lstat(blob);
    if (stored?.size !== entry.size) return false;
    await input.fs.linkNew(blob, temp, { mode: entry.mode, sync, sourceMode: stored.mode });
    return true;
  } catch {
    // Another disk (EXDEV), or no hard links there: a copy, flushed by the caller's own path if need be.
  }
  if (sync) return false;
  try {
    await input.fs.copyNew(blob, temp, entry.mode);
    return true;
  } catch {
    return false;
  }
}
