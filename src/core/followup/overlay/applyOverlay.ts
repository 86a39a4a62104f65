// Accepting an overlay: check every touched file against the real one (each folder looked at once
// per phase), then replace the rest atomically (temp + fsync + rename) under a crash-proof journal.
import { randomBytes } from 'node:crypto';
import { toAbsolute } from '../../fs/paths';
import { removeJournal, tempPathFor, writeJournal, type ApplyJournal } from './applyJournal';
import { FolderChecks } from './applyFolders';
import { forEachLimited } from './pool';
import { OverlayApplyError, CONCURRENCY, StepFailure, type Conflict, type OverlayApplyResult, type ApplyInput } from './applyTypes';
import { checkAll, sortConflicts, type Check } from './applyChecks';
import { describeCode, refuseIfLeadsElsewhere, rollBackStaging, removeEmptiedDirs, savingFailed, dropRefused, createDirs, overlayBytes, commitSteps, finishApply, stagingError, type PlannedStep, type Saved, type StagingContext } from './applySteps';
import { applyWithRedoLog } from './applyRedoLog';

export { OverlayApplyError, type ApplyInput, type OverlayApplyResult, type ApplyStepHook, type BeforeReplaceHook, type Conflict, type ConflictReason, type DeferredSave, type ReplaceStep } from './applyTypes';
export { findConflicts, type CheckInput } from './applyChecks';

/**
 * Applies the overlay's entries to the real workspace.
 *
 * Failure policy: a failure while staging (before the commit point) removes every temp and leaves
 * the workspace exactly as it was, then throws OverlayApplyError naming the file. A failure while
 * committing (a rename or unlink refused) does not stop the other files, which are fully staged and
 * independent: they are committed, and OverlayApplyError then names the failed files and lists the
 * applied ones; each failed file keeps the user's version. A crash anywhere leaves the journal, and
 * recovery rolls staging back or committing forward.
 */
export async function applyEntries(input: ApplyInput): Promise<OverlayApplyResult> {
  const conflicts: Conflict[] = [];
  const applied: string[] = [];
  const plan: PlannedStep[] = [];
  const createdDirs = new Set<string>();
  const sorted = [...input.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const folders = new FolderChecks(input.root, input.fs);
  let checks: Check[];
  try {
    checks = await checkAll(input, folders, sorted, (file) => input.overwrite.has(file));
  } catch (error) {
    if (!(error instanceof StepFailure)) throw error;
    throw new OverlayApplyError(
      `Accepting the speculation failed while checking "${error.path}" (${describeCode(error.cause)}); no file in the workspace was changed. Check that the file can be read, then accept again.`,
      error.path,
      [],
      [{ path: error.path, code: describeCode(error.cause) }],
      [],
    );
  }
  // One draw of randomness for every temp name of this accept.
  const tokens = randomBytes(8 * sorted.length).toString('hex');
  for (const [index, result] of checks.entries()) {
    const [file, entry] = sorted[index];
    if (!result.ok) {
      conflicts.push(result.conflict);
    } else if (result.done) {
      applied.push(file);
    } else {
      result.missingDirs.forEach((dir) => createdDirs.add(dir));
      const action = entry.kind === 'written' ? 'write' : 'delete';
      const temp = action === 'write' ? tempPathFor(file, tokens.slice(16 * index, 16 * index + 16)) : undefined;
      plan.push({ path: file, action, temp, expect: result.expect, entry, seen: result.seen });
    }
  }
  if (plan.length === 0) {
    await removeEmptiedDirs(input, conflicts.map((c) => c.path));
    return { applied, conflicts: sortConflicts(conflicts) };
  }

  const dirs = [...createdDirs].sort((a, b) => a.split('/').length - b.split('/').length);
  const journal: ApplyJournal = {
    version: 1,
    workspaceRoot: input.root,
    overlayId: input.overlayId,
    phase: 'staging',
    steps: plan.map(({ path: p, action, temp, expect }) => (temp ? { path: p, action, temp, expect } : { path: p, action, expect })),
    createdDirs: dirs,
  };

  // The checkpoint saves what is about to be replaced while the temps are staged; the commit waits for it.
  const beforeReplace = input.beforeReplace;
  const saving: Promise<Saved> = beforeReplace
    ? Promise.all(plan.map((step) => (step.entry.kind === 'written' ? step.entry.sha256 : undefined)))
        .then((hashes) =>
          beforeReplace({
            steps: plan.map((step, index) => ({
              path: step.path,
              action: step.action,
              expect: step.expect,
              after: step.entry.kind === 'written' ? { exists: true, sha256: hashes[index] ?? '', size: step.entry.size, mode: step.entry.mode } : { exists: false },
            })),
            createdDirs: dirs,
            removedDirs: input.deletedDirs,
            ...(input.redoDir ? { unsynced: true } : {}),
          }),
        )
        .then(
          (answer) => ({ ok: true as const, refused: new Set(answer?.refused ?? []), deferred: answer?.deferred }),
          (error: unknown) => ({ ok: false as const, error }),
        )
    : Promise.resolve({ ok: true as const, refused: new Set<string>(), deferred: undefined });
  const context: StagingContext = { plan, dirs, applied, conflicts, folders, saving, journal };
  return input.redoDir ? applyWithRedoLog(input, input.redoDir, context) : applyWithJournal(input, context);
}

/** The accept of issue 23 and before: a journal in the overlay folder, each temp fsync'd before the commit. */
async function applyWithJournal(input: ApplyInput, context: StagingContext): Promise<OverlayApplyResult> {
  const { plan, dirs, applied, conflicts, folders, saving, journal } = context;
  // Staging: nothing the user sees changes yet; every temp is complete and on disk before the commit point.
  const staged: PlannedStep[] = [];
  const needed = plan.reduce((sum, step) => sum + (step.entry.kind === 'written' ? step.entry.size : 0), 0);
  try {
    await writeJournal(input.fs, input.overlayDir, journal);
  } catch (error) {
    await rollBackStaging(input, staged, dirs);
    throw await stagingError(input, plan[0].path, error, 'overlay', needed, applied, conflicts);
  }
  const mkdirFailure = await createDirs(input, dirs);
  if (mkdirFailure) {
    await saving;
    await rollBackStaging(input, staged, dirs);
    throw await stagingError(input, mkdirFailure.failed, mkdirFailure.error, 'workspace', needed, applied, conflicts);
  }
  const refused = new Set<PlannedStep>();
  // Each folder is looked at again right before its temps go in: one swapped for a symlink since the check must not lead out.
  const staging = folders.nextPhase();
  try {
    await forEachLimited(plan, CONCURRENCY, async (step, index) => {
      if (await refuseIfLeadsElsewhere(input, staging, step, refused, conflicts)) return;
      if (step.entry.kind !== 'written' || !step.temp) return;
      const data = await overlayBytes(input, step);
      try {
        const owner = step.seen ? { uid: step.seen.uid, gid: step.seen.gid } : undefined;
        await input.fs.writeDurable(toAbsolute(input.root, step.temp), data, { mode: step.entry.mode, owner });
        staged.push(step);
      } catch (error) {
        throw new StepFailure(step.path, error, 'workspace');
      }
      input.onStep?.({ phase: 'staged', path: step.path, index });
    });
  } catch (error) {
    // Anything but a file's I/O failure (a crash hook in tests) stops here like a dying process.
    if (!(error instanceof StepFailure)) throw error;
    await saving;
    await rollBackStaging(input, staged, dirs);
    throw await stagingError(input, error.path, error.cause, error.side, needed, applied, conflicts);
  }
  const saved = await saving;
  if (!saved.ok) {
    await rollBackStaging(input, staged, dirs);
    throw savingFailed(saved, plan, applied, conflicts);
  }
  const commit = dropRefused(plan, saved, refused, conflicts);
  try {
    const committing = new Set(commit);
    await writeJournal(input.fs, input.overlayDir, { ...journal, phase: 'committing', steps: journal.steps.filter((_, i) => committing.has(plan[i])) });
  } catch (error) {
    await rollBackStaging(input, staged, dirs);
    throw await stagingError(input, plan[0].path, error, 'overlay', needed, applied, conflicts);
  }
  const { failed, touchedDirs } = await commitSteps(input, commit, staging.nextPhase(), applied, conflicts);
  // One fsync per touched folder, all at once, before the journal goes: the renames are durable first.
  await Promise.all([...touchedDirs].map((dir) => input.fs.fsyncDirectory(dir).catch(() => undefined)));
  // A journal left behind is harmless: its temps are gone and every step re-checks its expectation.
  await removeJournal(input.fs, input.overlayDir, { committed: true }).catch(() => undefined);
  return finishApply(input, applied, conflicts, failed);
}
