// Accept committed with one redo log (issue 28): the plan and the new bytes of small files in one
// append whose fsync is the commit point, temps and renames without fsync, the flush after the result.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { toAbsolute } from '../../fs/paths';
import { encodeRedoLog, REDO_LOG_MAX_FILE_BYTES, redoLogName, type RedoPlan, type RedoStep } from '../../fs/redoLog';
import { RedoLogCommit, redoSlotsFor } from '../../fs/redoSlots';
import { offTheWait, trackFlush } from '../../fs/pendingFlush';
import { fsyncFolderIfThere } from '../../fs/redoRecovery';
import { forEachLimited } from './pool';
import { CONCURRENCY, StepFailure, type OverlayApplyResult, type ApplyInput } from './applyTypes';
import { refuseIfLeadsElsewhere, rollBackStaging, savingFailed, dropRefused, createDirs, overlayBytes, commitSteps, finishApply, stagingError, stageFromBlob, type PlannedStep, type StagingContext } from './applySteps';

/**
 * Issue 28: one redo log in the state folder holds the plan, the new bytes of every small file and
 * the checkpoint's before-state; its fsync (and its folder's) is the commit point. Before it nothing
 * the user sees changed; after it the temps are written and renamed without fsync, the user sees the
 * result, and the flush (each renamed file and touched folder, then the log's removal) runs after,
 * off the wait. A crash or power cut after the commit point is rolled forward from the log.
 */
export async function applyWithRedoLog(input: ApplyInput, redoDir: string, context: StagingContext): Promise<OverlayApplyResult> {
  const { plan, dirs, applied, conflicts, folders, saving } = context;
  const needed = plan.reduce((sum, step) => sum + (step.entry.kind === 'written' ? step.entry.size : 0), 0);
  const logPath = path.join(redoDir, redoLogName(`accept-${input.overlayId}-${randomBytes(4).toString('hex')}`));
  const staged: PlannedStep[] = [];
  const bytes = new Map<PlannedStep, Uint8Array>();
  const largeDirs = new Set<string>();
  const refused = new Set<PlannedStep>();
  const undoStaging = async () => {
    await rollBackStaging(input, staged, dirs, false);
  };
  const mkdirFailure = await createDirs(input, dirs);
  if (mkdirFailure) {
    await saving;
    await undoStaging();
    throw await stagingError(input, mkdirFailure.failed, mkdirFailure.error, 'workspace', needed, applied, conflicts);
  }
  const staging = folders.nextPhase();
  try {
    // Small files' bytes are read for the log; a large one is staged durably now, as before.
    await forEachLimited(plan, CONCURRENCY, async (step, index) => {
      if (await refuseIfLeadsElsewhere(input, staging, step, refused, conflicts)) return;
      if (step.entry.kind !== 'written' || !step.temp) return;
      if (step.entry.size <= REDO_LOG_MAX_FILE_BYTES) {
        bytes.set(step, await overlayBytes(input, step));
        return;
      }
      try {
        if (!(await stageFromBlob(input, step, true))) {
          const data = await overlayBytes(input, step);
          const owner = step.seen ? { uid: step.seen.uid, gid: step.seen.gid } : undefined;
          await input.fs.createFile(toAbsolute(input.root, step.temp), data, { mode: step.entry.mode, owner, sync: true });
        }
        staged.push(step);
        largeDirs.add(path.dirname(toAbsolute(input.root, step.temp)));
      } catch (error) {
        throw new StepFailure(step.path, error, 'workspace');
      }
      input.onStep?.({ phase: 'staged', path: step.path, index });
    });
    // A large temp's name must survive a power cut as well as its bytes: the log points at it.
    await Promise.all([...largeDirs].map(async (dir) => {
      try {
        await input.fs.fsyncDirectory(dir);
      } catch (error) {
        throw new StepFailure(plan[0].path, error, 'workspace');
      }
    }));
  } catch (error) {
    if (!(error instanceof StepFailure)) throw error;
    await saving;
    await undoStaging();
    throw await stagingError(input, error.path, error.cause, error.side, needed, applied, conflicts);
  }
  const saved = await saving;
  if (!saved.ok) {
    await undoStaging();
    throw savingFailed(saved, plan, applied, conflicts);
  }
  const commit = dropRefused(plan, saved, refused, conflicts);
  const hashes = await Promise.all(commit.map((step) => (step.entry.kind === 'written' ? step.entry.sha256 : undefined)));
  const body: Uint8Array[] = [];
  let offset = 0;
  const steps: RedoStep[] = commit.map((step, index) => {
    const base: RedoStep = { path: step.path, action: step.action, expect: step.expect };
    if (step.entry.kind !== 'written' || !step.temp) return base;
    const data = bytes.get(step);
    const written: RedoStep = { ...base, temp: step.temp, after: { sha256: hashes[index] ?? '', size: step.entry.size, ...(step.entry.mode !== undefined ? { mode: step.entry.mode } : {}) } };
    if (!data) return written;
    body.push(data);
    offset += data.byteLength;
    return { ...written, data: { offset: offset - data.byteLength, length: data.byteLength } };
  });
  const deferred = saved.deferred;
  const redoPlan: RedoPlan = {
    version: 1,
    kind: 'accept',
    pid: input.pid ?? process.pid,
    workspaceRoot: input.root,
    steps,
    createdDirs: dirs,
    ...(deferred ? { meta: { checkpoint: deferred.meta, at: offset } } : {}),
  };
  if (deferred) body.push(...deferred.chunks);
  // The log is written (into a slot made ahead where one is ready), then made durable while the
  // small temps are written beside their targets (invisible until renamed): the commit point.
  const smallSteps = commit.filter((step) => bytes.has(step));
  let log: RedoLogCommit;
  try {
    log = await RedoLogCommit.start(input.fs, redoSlotsFor(redoDir, input.fs, input.pid ?? process.pid), logPath, encodeRedoLog(redoPlan, body));
  } catch (error) {
    await undoStaging();
    throw await stagingError(input, plan[0].path, error, 'state', needed, applied, conflicts);
  }
  const durable = log.durable;
  try {
    await forEachLimited(smallSteps, CONCURRENCY, async (step, index) => {
      const owner = step.seen ? { uid: step.seen.uid, gid: step.seen.gid } : undefined;
      const mode = step.entry.kind === 'written' ? step.entry.mode : undefined;
      const temp = toAbsolute(input.root, step.temp!);
      try {
        if (!(await stageFromBlob(input, step, false))) await input.fs.createFile(temp, bytes.get(step)!, { mode, owner, sync: false });
      } catch (error) {
        throw new StepFailure(step.path, error, 'workspace');
      }
      staged.push(step);
      input.onStep?.({ phase: 'staged', path: step.path, index });
    });
    try {
      await durable;
    } catch (error) {
      throw new StepFailure(plan[0].path, error, 'state');
    }
  } catch (error) {
    if (!(error instanceof StepFailure)) throw error;
    // Not committed: the log goes first (so no recovery completes what is being undone), then the temps.
    await log.drop().catch(() => undefined);
    await undoStaging();
    throw await stagingError(input, error.path, error.cause, error.side, needed, applied, conflicts);
  }
  input.onStep?.({ phase: 'logged', path: plan[0].path, index: -1 });
  const { failed, touchedDirs, renamed, setAside } = await commitSteps(input, commit, staging.nextPhase(), applied, conflicts, true);
  // Off the wait: every renamed file, the replaced files set aside, then each folder whose entries
  // changed, then the checkpoint's own files; only then may the log go. A failure leaves the log for the next start to roll forward.
  for (const dir of dirs) touchedDirs.add(path.dirname(toAbsolute(input.root, dir)));
  const flush = offTheWait(async () => {
    await forEachLimited(renamed, FLUSH_CONCURRENCY, (file) => input.fs.fsyncFile(file));
    // The replaced files' blocks are freed here, off the wait (a name left over is removed at the next start).
    await forEachLimited(setAside, FLUSH_CONCURRENCY, (file) => input.fs.unlink(file).catch(() => undefined));
    await Promise.all([...touchedDirs].map((dir) => fsyncFolderIfThere(input.fs, dir)));
    await deferred?.sync();
    await log.drop();
  });
  trackFlush(input.root, flush);
  return finishApply(input, applied, conflicts, failed);
}

/** How many renamed files the flush fsyncs at once: the disk batches concurrent flushes. */
const FLUSH_CONCURRENCY = 32;
