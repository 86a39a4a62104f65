// Undo and redo of a checkpoint: every path still as the change left it goes back (atomically,
// temp + fsync + rename under a journal); a path changed since is a conflict and is kept unless forced.
import { randomBytes } from 'node:crypto';
import { toAbsolute } from '../fs/paths';
import { forEachLimited } from '../fs/pool';
import { errorCode } from './checkpointFs';
import { ABSENT, sameContent, stateOf } from './fileState';
import { parentsFirst, PlacementPass } from './placement';
import { isPlainCheckpointId, type CheckpointFile, type CheckpointRecord } from './record';
import {
  createJournal,
  journalPath,
  parseJournal,
  restoreTempFor,
  updateJournal,
  type RestoreJournal,
  type RestoreStep,
} from './restoreJournal';
import type { StoreFiles } from './storeFiles';
import { flushed } from '../fs/pendingFlush';
import { decodeRedoLog } from '../fs/redoLog';
import { conflictOf, CONCURRENCY, RestoreError, StageFailure, type Direction, type Evaluated, type Item, type RestoreConflict, type RestoreConflictReason, type RestoreFailure, type RestoreOptions, type RestoreOutcome, type RestorePlan } from './restoreTypes';
import { commit, recoverJournal, rollBack } from './restoreCommit';
import { inFlight, recoverRestoreLog, restoreLogPath, restoreWithRedoLog } from './restoreRedoLog';

export * from './restoreTypes';
export { recoverJournal } from './restoreCommit';
export { recoverRestoreLog, restoreLogPath } from './restoreRedoLog';

function itemsOf(record: CheckpointRecord, direction: Direction): Item[] | RestoreFailure {
  const byPath = new Map(record.files.map((file) => [file.path, file]));
  if (record.state === 'recording') {
    return { ok: false, reason: 'recording', message: `Checkpoint "${record.id}" is still being recorded (its change is in progress); try again when it has finished.` };
  }
  if (direction === 'undo') {
    if (record.state === 'undone') {
      // A partial undo (some files kept) can be repeated for the kept files; a full one cannot.
      const kept = record.undo?.kept ?? [];
      if (kept.length === 0) return { ok: false, reason: 'already-undone', message: `Checkpoint "${record.id}" is already undone; nothing was changed.` };
      return kept.map((p) => byPath.get(p)).filter((f): f is CheckpointFile => f !== undefined).map((f) => ({ path: f.path, expect: f.after ?? ABSENT, target: f.before }));
    }
    return record.files.map((f) => ({ path: f.path, expect: f.after ?? ABSENT, target: f.before }));
  }
  if (record.state !== 'undone' || !record.undo) return { ok: false, reason: 'not-undone', message: `Checkpoint "${record.id}" is not undone, so there is nothing to redo.` };
  return record.undo.paths.map((p) => ({ path: p.path, expect: byPath.get(p.path)?.before ?? ABSENT, target: p.replaced }));
}

function forced(options: RestoreOptions, file: string): boolean {
  return options.force === true || (Array.isArray(options.force) && options.force.includes(file));
}

/**
 * Where `item` stands now. `pass` re-places each folder once for all its files; with `readTarget`
 * the bytes to put back are read here (a missing or damaged copy is 'unavailable'), in the same
 * look at the file, instead of a second pass.
 */
async function evaluate(store: StoreFiles, pass: PlacementPass, item: Item, direction: Direction, force: boolean, readTarget: boolean): Promise<Evaluated | 'already' | RestoreConflict> {
  const absolute = toAbsolute(store.root, item.path);
  const seen = await store.fs.lstat(absolute);
  const problem = await pass.problem(item.path, seen);
  if (problem) return conflictOf(item.path, problem, direction);
  if (seen && seen.type !== 'file') return conflictOf(item.path, 'not-a-file', direction);
  const data = seen ? await store.fs.readFile(absolute) : undefined;
  const current = data && seen ? stateOf(data, seen.mode) : ABSENT;
  if (sameContent(current, item.target)) return 'already';
  let target: { data: Uint8Array; mode?: number } | undefined;
  if (item.target.exists) {
    if (readTarget) {
      target = await store.blobs.readStored(item.target.sha256).catch(() => undefined);
      if (!target) return conflictOf(item.path, 'unavailable', direction);
    } else if (!(await store.blobs.has(item.target.sha256))) return conflictOf(item.path, 'unavailable', direction);
  }
  if (!sameContent(current, item.expect) && !force) {
    const reason: RestoreConflictReason = !item.expect.exists ? 'created' : current.exists ? 'modified' : 'deleted';
    return conflictOf(item.path, reason, direction);
  }
  let missing: string[] = [];
  if (item.target.exists) {
    const parents = await pass.missingParents(item.path);
    if (parents === 'blocked') return conflictOf(item.path, 'blocked', direction);
    missing = parents;
  }
  return { item, current, data, seen, missing, ...(target ? { targetData: target.data, targetStoredMode: target.mode } : {}) };
}

async function evaluateAll(store: StoreFiles, record: CheckpointRecord, direction: Direction, options: RestoreOptions, readTarget = false) {
  const items = itemsOf(record, direction);
  if (!Array.isArray(items)) return items;
  const steps: Evaluated[] = [];
  const already: Item[] = [];
  const conflicts: RestoreConflict[] = [];
  const keep = new Set(options.keep ?? []);
  const sorted = items.sort((a, b) => (a.path < b.path ? -1 : 1));
  const verdicts: (Evaluated | 'already' | RestoreConflict)[] = new Array(sorted.length);
  const pass = new PlacementPass(store.root, store.fs);
  await forEachLimited(sorted, CONCURRENCY, async (item, index) => {
    verdicts[index] = keep.has(item.path)
      ? { ...conflictOf(item.path, 'modified', direction), message: `"${item.path}" was left as it is, as you chose.` }
      : await evaluate(store, pass, item, direction, forced(options, item.path), readTarget);
  });
  for (const [index, verdict] of verdicts.entries()) {
    if (verdict === 'already') already.push(sorted[index]);
    else if ('reason' in verdict) conflicts.push(verdict);
    else steps.push(verdict);
  }
  return { steps, already, conflicts };
}

/** What an undo (or redo) would do right now, without changing anything. */
export async function planRestore(store: StoreFiles, id: string, direction: Direction, options: RestoreOptions = {}): Promise<RestorePlan> {
  const read = await store.read(id);
  if (!read.ok) return read;
  const evaluated = await evaluateAll(store, read.record, direction, options);
  if ('ok' in evaluated) return evaluated;
  return { ok: true, restorable: [...evaluated.steps.map((s) => s.item.path), ...evaluated.already.map((a) => a.path)].sort(), conflicts: evaluated.conflicts };
}

async function takeJournalLock(store: StoreFiles, id: string): Promise<RestoreFailure | undefined> {
  const log = restoreLogPath(store, id);
  if (inFlight.has(log)) return { ok: false, reason: 'busy', message: `Checkpoint "${id}" is being undone or redone right now; try again in a moment.` };
  if (await store.fs.lstat(log)) {
    const decoded = decodeRedoLog(Buffer.from(await store.fs.readFile(log)));
    if (decoded.plan && decoded.plan.pid !== store.pid && store.processAlive(decoded.plan.pid)) {
      return { ok: false, reason: 'busy', message: `Checkpoint "${id}" is being undone or redone right now (by process ${decoded.plan.pid}); try again in a moment.` };
    }
    await recoverRestoreLog(store, id);
  }
  const existing = journalPath(store.journalsDir, id);
  if (!(await store.fs.lstat(existing))) return undefined;
  const journal = parseJournal(Buffer.from(await store.fs.readFile(existing)).toString('utf8'), id);
  if (journal && store.processAlive(journal.pid)) {
    return { ok: false, reason: 'busy', message: `Checkpoint "${id}" is being undone or redone right now (by process ${journal.pid}); try again in a moment.` };
  }
  // Left by a process that is gone: finish or roll back what it started, then go on.
  await recoverJournal(store, id);
  return undefined;
}

/**
 * Undoes (or redoes) checkpoint `id`. Failure policy as for accept: a failure while staging leaves
 * the workspace as it was and throws RestoreError; a crash anywhere leaves the journal for recovery.
 * `seen.record` gets the record as read, so the caller needs no second read of it.
 */
export async function restore(store: StoreFiles, id: string, direction: Direction, options: RestoreOptions = {}, seen: { record?: CheckpointRecord } = {}): Promise<RestoreOutcome> {
  if (!isPlainCheckpointId(id)) throw new Error(`"${id}" is not a checkpoint id.`);
  // An earlier accept's or undo's flush finishes first: its redo log must be gone before this one checks.
  await flushed(store.root);
  const busy = await takeJournalLock(store, id);
  if (busy) return busy;
  const read = await store.read(id);
  if (!read.ok) return read;
  const record = read.record;
  seen.record = record;
  const evaluated = await evaluateAll(store, record, direction, options, store.options.commitWith !== 'journal');
  if ('ok' in evaluated) return evaluated;
  const { steps, already, conflicts } = evaluated;
  if (steps.length === 0 && already.length === 0) return { ok: true, restored: [], conflicts };

  const createdDirs = parentsFirst(steps.flatMap((s) => s.missing));
  // Folder changes are idempotent (removed only once empty, created only when missing), so a repeated partial undo plans them again.
  const dirPlan = direction === 'undo'
    ? { removeDirs: record.createdDirs, recreateDirs: record.removedDirs }
    : { removeDirs: record.undo?.createdDirs ?? [], recreateDirs: record.undo?.removedDirs ?? [] };
  // One draw of randomness for every temp name (a draw per name cost 1.4 ms of a 100-file undo).
  const tokens = randomBytes(8 * steps.length).toString('hex');
  const journalSteps: RestoreStep[] = steps.map((s, index) => ({
    path: s.item.path,
    action: s.item.target.exists ? 'write' : 'delete',
    ...(s.item.target.exists ? { temp: restoreTempFor(s.item.path, tokens.slice(16 * index, 16 * index + 16)) } : {}),
    expect: s.current,
    result: s.item.target,
  }));
  const journal: RestoreJournal = {
    version: 1,
    checkpointId: id,
    direction,
    pid: store.pid,
    workspaceRoot: store.root,
    phase: 'staging',
    steps: journalSteps,
    createdDirs,
    ...dirPlan,
    replaced: [...steps.map((s) => ({ path: s.item.path, replaced: s.current })), ...already.map((a) => ({ path: a.path, replaced: a.target }))],
    kept: conflicts.map((c) => c.path),
  };
  if (store.options.commitWith !== 'journal') return restoreWithRedoLog(store, record, journal, steps, conflicts);

  // What this restore replaces is saved first: a redo puts it back, and a forced restore never loses the user's version.
  await forEachLimited(steps, CONCURRENCY, async (step) => {
    if (step.data) await store.blobs.put(step.data);
  });
  await store.blobs.flush();
  try {
    await createJournal(store.fs, store.journalsDir, journal);
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return { ok: false, reason: 'busy', message: `Checkpoint "${id}" is being undone or redone right now; try again in a moment.` };
    throw error;
  }

  // Staging: nothing the user sees changes yet; every temp is complete and on disk before the commit point.
  // Only the disk's own failures roll back here; anything else (a test's simulated crash) stops like a dying process.
  const disk = async (file: string, work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (error) {
      throw new StageFailure(file, error);
    }
  };
  const committing: RestoreJournal = { ...journal, phase: 'committing' };
  try {
    for (const dir of createdDirs) await disk(dir, () => store.fs.mkdir(toAbsolute(store.root, dir)));
    // A few temps at once: their fsyncs dominate, and the disk batches concurrent flushes.
    await forEachLimited(journalSteps, CONCURRENCY, async (step, index) => {
      const target = steps[index].item.target;
      const temp = step.temp;
      if (!temp || !target.exists) return;
      await disk(step.path, async () => store.fs.writeDurable(toAbsolute(store.root, temp), await store.blobs.read(target.sha256), target.mode));
      store.options.onRestoreStep?.({ phase: 'staged', path: step.path });
    });
    await disk(journalSteps[0]?.path ?? id, () => updateJournal(store.fs, store.journalsDir, committing));
  } catch (error) {
    if (!(error instanceof StageFailure)) throw error;
    await rollBack(store, journal);
    const code = errorCode(error.cause) ?? (error.cause instanceof Error ? error.cause.message : String(error.cause));
    throw new RestoreError(`Undo failed while preparing "${error.path}" (${code}); no file in the workspace was changed. Check that the folder is writable and the disk has space, then try again.`, error.path, []);
  }
  const committed = await commit(store, committing, steps);
  return { ok: true, restored: committed.restored, conflicts: [...conflicts, ...committed.lateConflicts].sort((a, b) => (a.path < b.path ? -1 : 1)) };
}
