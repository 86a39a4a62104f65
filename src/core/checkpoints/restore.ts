// Undo and redo of a checkpoint: every path still as the change left it goes back (atomically,
// temp + fsync + rename under a journal); a path changed since is a conflict and is kept unless forced.
import * as path from 'node:path';
import { toAbsolute } from '../fs/paths';
import { forEachLimited } from '../fs/pool';
import { errorCode, type CheckpointStat } from './checkpointFs';
import { ABSENT, isSha256, sameContent, stateOf, type FileState } from './fileState';
import { deepestFirst, missingParents, parentsFirst, placementProblem, PlacementPass } from './placement';
import { isPlainCheckpointId, type CheckpointFile, type CheckpointRecord, type UndoneState } from './record';
import {
  createJournal,
  journalPath,
  parseJournal,
  removeJournal,
  restoreTempFor,
  updateJournal,
  type RestoreJournal,
  type RestoreStep,
} from './restoreJournal';
import type { StoreFiles } from './storeFiles';
import { flushed, trackFlush } from '../fs/pendingFlush';
import { decodeRedoLog, encodeRedoLog, REDO_LOG_MAX_FILE_BYTES, type RedoPlan, type RedoStep } from '../fs/redoLog';
import { fsyncFolderIfThere, recoverRedoLog } from '../fs/redoRecovery';

export type Direction = 'undo' | 'redo';

export type RestoreConflictReason =
  /** Changed since (the content differs from what the change — or the undo — left). */
  | 'modified'
  /** Deleted since. */
  | 'deleted'
  /** Created again since (the change had deleted it). */
  | 'created'
  /** A folder or a link is at the path now. */
  | 'not-a-file'
  /** The path now leads outside the workspace through a symlink. */
  | 'outside-workspace'
  /** The path now resolves elsewhere inside the workspace. */
  | 'path-changed'
  /** A file is where one of the path's folders should be. */
  | 'blocked'
  /** The saved copy is missing or damaged. */
  | 'unavailable';

export interface RestoreConflict {
  path: string;
  reason: RestoreConflictReason;
  /** Says what happened and what the user can do. */
  message: string;
  /** Whether Restore (force) can take it anyway; false for unsafe paths and lost copies. */
  canForce: boolean;
}

export type RestoreFailure = {
  ok: false;
  reason: 'unknown' | 'malformed' | 'already-undone' | 'not-undone' | 'recording' | 'busy' | 'workspace-gone';
  message: string;
};

export type RestoreOutcome = { ok: true; restored: string[]; conflicts: RestoreConflict[] } | RestoreFailure;

export type RestorePlan = { ok: true; restorable: string[]; conflicts: RestoreConflict[] } | RestoreFailure;

export interface RestoreOptions {
  /** true = every conflict that can be forced; a list = those paths only. */
  force?: boolean | readonly string[];
  /** Paths to leave as they are (kept, like a conflict the user answered with Keep mine). */
  keep?: readonly string[];
}

/** One path to bring from `expect` (what should be there now) to `target`. */
interface Item {
  path: string;
  expect: FileState;
  target: FileState;
}

interface Evaluated {
  item: Item;
  /** What is there now. */
  current: FileState;
  data: Uint8Array | undefined;
  seen: CheckpointStat | undefined;
  /** Folders to create for a write. */
  missing: string[];
  /** The bytes to put back, when the evaluation read them (the redo-log commit). */
  targetData?: Uint8Array;
}

function sinceWords(direction: Direction): string {
  return direction === 'undo' ? 'after this change was made' : 'after it was undone';
}

function conflictOf(file: string, reason: RestoreConflictReason, direction: Direction): RestoreConflict {
  const since = sinceWords(direction);
  const messages: Record<RestoreConflictReason, string> = {
    modified: `"${file}" was changed ${since}; your version was kept. Compare the two, then choose Restore or Keep mine.`,
    deleted: `"${file}" was deleted ${since}; it was not brought back. Choose Restore to bring it back, or Keep mine to leave it deleted.`,
    created: `"${file}" was created again ${since}; your file was kept. Compare the two, then choose Restore or Keep mine.`,
    'not-a-file': `"${file}" is a folder or a link now; it was left as it is. Move it away, then undo again.`,
    'outside-workspace': `"${file}" now leads outside the workspace (a folder on its path became a symlink); it was not touched.`,
    'path-changed': `"${file}" now leads somewhere else through a symlink; it was not touched.`,
    blocked: `A file is in the way of one of the folders of "${file}"; it was not restored. Move that file away, then undo again.`,
    unavailable: `Speculate's saved copy of "${file}" is missing or damaged; the file was not touched.`,
  };
  const canForce = reason === 'modified' || reason === 'deleted' || reason === 'created';
  return { path: file, reason, message: messages[reason], canForce };
}

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
  let targetData: Uint8Array | undefined;
  if (item.target.exists) {
    if (readTarget) {
      targetData = await store.blobs.read(item.target.sha256).catch(() => undefined);
      if (!targetData) return conflictOf(item.path, 'unavailable', direction);
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
  return { item, current, data, seen, missing, targetData };
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

/** Paths checked, saved and staged at once. */
const CONCURRENCY = 8;

/** A disk failure while staging, carried out of the worker pool with the file it belongs to. */
class StageFailure extends Error {
  constructor(readonly path: string, override readonly cause: unknown) {
    super(path);
  }
}

/** Raised when the disk refused the restore; names the file and says what was restored. */
export class RestoreError extends Error {
  constructor(message: string, readonly path: string, readonly restored: string[]) {
    super(message);
    this.name = 'RestoreError';
  }
}

/** Where the redo log of an undo (or redo) of `id` lives; creating it (O_EXCL) is the lock, as the journal's is. */
export function restoreLogPath(store: StoreFiles, id: string): string {
  return path.join(store.journalsDir, `${id}.redo`);
}

/** Redo logs of undos this process is committing right now (its own older ones are leftovers of a failed flush). */
const inFlight = new Set<string>();

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
 */
export async function restore(store: StoreFiles, id: string, direction: Direction, options: RestoreOptions = {}): Promise<RestoreOutcome> {
  if (!isPlainCheckpointId(id)) throw new Error(`"${id}" is not a checkpoint id.`);
  // An earlier accept's or undo's flush finishes first: its redo log must be gone before this one checks.
  await flushed(store.root);
  const busy = await takeJournalLock(store, id);
  if (busy) return busy;
  const read = await store.read(id);
  if (!read.ok) return read;
  const record = read.record;
  const evaluated = await evaluateAll(store, record, direction, options, store.options.commitWith !== 'journal');
  if ('ok' in evaluated) return evaluated;
  const { steps, already, conflicts } = evaluated;
  if (steps.length === 0 && already.length === 0) return { ok: true, restored: [], conflicts };

  const createdDirs = parentsFirst(steps.flatMap((s) => s.missing));
  // Folder changes are idempotent (removed only once empty, created only when missing), so a repeated partial undo plans them again.
  const dirPlan = direction === 'undo'
    ? { removeDirs: record.createdDirs, recreateDirs: record.removedDirs }
    : { removeDirs: record.undo?.createdDirs ?? [], recreateDirs: record.undo?.removedDirs ?? [] };
  const journalSteps: RestoreStep[] = steps.map((s) => ({
    path: s.item.path,
    action: s.item.target.exists ? 'write' : 'delete',
    ...(s.item.target.exists ? { temp: restoreTempFor(s.item.path) } : {}),
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

/**
 * True when the real file still holds what the check saw (cheap unless size or mtime moved);
 * `now` is its lstat when the caller has just taken it.
 */
async function unchanged(store: StoreFiles, file: string, seen: CheckpointStat | undefined, expect: FileState, looked?: { now: CheckpointStat | undefined }): Promise<boolean> {
  const absolute = toAbsolute(store.root, file);
  const now = looked ? looked.now : await store.fs.lstat(absolute);
  if (!expect.exists) return now === undefined;
  if (!now || now.type !== 'file' || now.size !== expect.size) return false;
  if (seen && now.mtimeMs === seen.mtimeMs) return true;
  return sameContent(stateOf(await store.fs.readFile(absolute), now.mode), expect);
}

/** Past the commit point: each step replaces one whole file, unless the user changed it at the last moment. */
async function commit(store: StoreFiles, journal: RestoreJournal, evaluated: Evaluated[] | undefined, options: { deferred?: boolean; record?: CheckpointRecord } = {}) {
  const deferred = options.deferred === true;
  // Each folder is re-placed once for this pass, right before its files are renamed.
  const pass = new PlacementPass(store.root, store.fs);
  const restored = new Set(journal.replaced.map((r) => r.path));
  const lateConflicts: RestoreConflict[] = [];
  const touched = new Set<string>();
  const renamed: string[] = [];
  const one = async (step: RestoreStep, index: number): Promise<void> => {
    const target = toAbsolute(store.root, step.path);
    const temp = step.temp ? toAbsolute(store.root, step.temp) : undefined;
    const looked = { now: await store.fs.lstat(target) };
    const problem = await pass.problem(step.path, looked.now);
    // A redo log's commit wrote every temp itself just now: no need to look for them.
    const tempThere = temp ? deferred || (await store.fs.lstat(temp))?.type === 'file' : false;
    let conflict: RestoreConflict | undefined;
    let moved = false;
    if (problem) {
      conflict = conflictOf(step.path, problem, journal.direction);
    } else if (await unchanged(store, step.path, evaluated?.[index]?.seen, step.expect, looked)) {
      if (temp && tempThere) {
        await store.fs.rename(temp, target);
        renamed.push(target);
        moved = true;
      } else if (temp) conflict = conflictOf(step.path, 'unavailable', journal.direction);
      else await store.fs.unlink(target);
      if (!conflict) touched.add(path.dirname(target));
    } else if (!(await unchanged(store, step.path, undefined, step.result))) {
      // Neither as checked nor as restored: the user changed it at the last moment, and that wins.
      conflict = conflictOf(step.path, step.expect.exists ? 'modified' : 'created', journal.direction);
    }
    // (As restored already: renamed before a crash, or the user did the same; nothing to do.)
    // A temp not renamed (a conflict, or a step already done) goes; after a rename the name is free (quiet).
    if (temp && !(deferred && moved)) await store.fs.unlink(temp).catch(() => undefined);
    if (conflict) {
      lateConflicts.push(conflict);
      restored.delete(step.path);
    }
    store.options.onRestoreStep?.({ phase: 'committed', path: step.path });
  };
  // Under a journal one at a time and in order (a crash leaves a prefix); under a redo log any
  // subset is recoverable, so a few at once.
  if (deferred) await forEachLimited(journal.steps, CONCURRENCY, one);
  else for (const [index, step] of journal.steps.entries()) await one(step, index);
  if (!deferred) for (const dir of touched) await store.fs.fsyncDirectory(dir).catch(() => undefined);
  const late = new Set(lateConflicts.map((c) => c.path));
  const dirs = await settleDirs(store, journal, late);
  await writeOutcome(store, journal, late, dirs, { sync: !deferred, record: options.record });
  if (!deferred) await removeJournal(store.fs, store.journalsDir, journal.checkpointId);
  for (const dir of [...dirs.created, ...dirs.removed]) touched.add(path.dirname(toAbsolute(store.root, dir)));
  return { restored: [...restored].sort(), lateConflicts, renamed, touched };
}

/**
 * Issue 28: the undo (or redo) commits with one redo log beside the journals: the plan (the journal
 * as it would be when committing), the new bytes of every small file and the replaced bytes redo
 * needs, in one append whose fsync is the commit point. Then temps and renames without fsync, the
 * record written, and the user has the result; the flush (files, folders, blobs, record, then the
 * log's removal) runs after, and the next change of this workspace waits for it.
 */
async function restoreWithRedoLog(store: StoreFiles, record: CheckpointRecord, journal: RestoreJournal, steps: Evaluated[], conflicts: RestoreConflict[]): Promise<RestoreOutcome> {
  const id = journal.checkpointId;
  const logPath = restoreLogPath(store, id);
  if (inFlight.has(logPath)) return { ok: false, reason: 'busy', message: `Checkpoint "${id}" is being undone or redone right now; try again in a moment.` };
  inFlight.add(logPath);
  try {
    return await commitWithRedoLog(store, record, journal, steps, conflicts, logPath);
  } finally {
    inFlight.delete(logPath);
  }
}

async function commitWithRedoLog(store: StoreFiles, record: CheckpointRecord, journal: RestoreJournal, steps: Evaluated[], conflicts: RestoreConflict[], logPath: string): Promise<RestoreOutcome> {
  const id = journal.checkpointId;
  const committing: RestoreJournal = { ...journal, phase: 'committing' };
  const fail = (file: string, cause: unknown) => {
    const code = errorCode(cause) ?? (cause instanceof Error ? cause.message : String(cause));
    return new RestoreError(`Undo failed while preparing "${file}" (${code}); no file in the workspace was changed. Check that the folder is writable and the disk has space, then try again.`, file, []);
  };
  // What this restore replaces goes in the log (and into the blobs, unsynced, beside the temps); the
  // bytes it puts back come from the blobs.
  const replacedBytes = new Map<string, Uint8Array>();
  for (const step of steps) if (step.data && step.current.exists) replacedBytes.set(step.current.sha256, step.data);
  const logged = [...replacedBytes].map(([hash, bytes]) => ({ hash, data: bytes }));
  // Read by the evaluation, in the same look at each file.
  const data = steps.map((step) => step.targetData);
  const body: Uint8Array[] = [];
  let offset = 0;
  const large: number[] = [];
  const redoSteps: RedoStep[] = committing.steps.map((step, index) => {
    const bytes = data[index];
    const base: RedoStep = { path: step.path, action: step.action, expect: step.expect };
    if (!bytes || !step.result.exists || !step.temp) return base;
    const withTemp: RedoStep = { ...base, temp: step.temp, after: { sha256: step.result.sha256, size: step.result.size, mode: step.result.mode } };
    if (bytes.byteLength > REDO_LOG_MAX_FILE_BYTES) {
      large.push(index);
      return withTemp;
    }
    body.push(bytes);
    offset += bytes.byteLength;
    return { ...withTemp, data: { offset: offset - bytes.byteLength, length: bytes.byteLength } };
  });
  const relinked = await relinkable(store, committing.steps, redoSteps);
  const plan: RedoPlan = {
    version: 1,
    kind: journal.direction,
    pid: store.pid,
    workspaceRoot: store.root,
    steps: redoSteps,
    createdDirs: journal.createdDirs,
    meta: { journal: committing, blobs: logged.map((b) => ({ hash: b.hash, length: b.data.byteLength })), at: offset, relinked: [...new Set(relinked.values())] },
  };
  body.push(...logged.map((b) => b.data));
  try {
    // O_EXCL: the log is also the lock against a second undo of this checkpoint.
    await store.fs.createFile(logPath, encodeRedoLog(plan, body), { mode: 0o600, sync: false });
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return { ok: false, reason: 'busy', message: `Checkpoint "${id}" is being undone or redone right now; try again in a moment.` };
    throw fail(journal.steps[0]?.path ?? id, error);
  }
  const staged: string[] = [];
  const disk = async (file: string, work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (error) {
      throw new StageFailure(file, error);
    }
  };
  const tempOf = (index: number) => toAbsolute(store.root, committing.steps[index].temp!);
  try {
    for (const dir of journal.createdDirs) await disk(dir, () => store.fs.mkdir(toAbsolute(store.root, dir)));
    // Large files: temp + fsync, and their folders, durable before the log's own fsync points at them.
    const largeDirs = new Set<string>();
    await forEachLimited(large, CONCURRENCY, async (index) => {
      const step = committing.steps[index];
      await disk(step.path, () => store.fs.createFile(tempOf(index), data[index]!, { mode: step.result.exists ? step.result.mode : undefined, sync: true }));
      staged.push(tempOf(index));
      largeDirs.add(path.dirname(tempOf(index)));
      store.options.onRestoreStep?.({ phase: 'staged', path: step.path });
    });
    for (const dir of largeDirs) await disk(journal.steps[0].path, () => store.fs.fsyncDirectory(dir));
    const durable = (async () => {
      await store.fs.fsyncFile(logPath);
      await store.fs.fsyncDirectory(store.journalsDir);
    })();
    durable.catch(() => undefined);
    const small = redoSteps.flatMap((step, index) => (step.data ? [index] : []));
    await forEachLimited(small, CONCURRENCY, async (index) => {
      const step = committing.steps[index];
      await disk(step.path, async () => {
        const hash = relinked.get(index);
        if (hash && step.result.exists) {
          try {
            await store.fs.linkNew(store.blobs.pathOf(hash), tempOf(index), { mode: step.result.mode, sync: false });
            return;
          } catch {
            // Another disk, or no hard links there: the bytes are written instead.
          }
        }
        await store.fs.createFile(tempOf(index), data[index]!, { mode: step.result.exists ? step.result.mode : undefined, sync: false });
      });
      staged.push(tempOf(index));
      store.options.onRestoreStep?.({ phase: 'staged', path: step.path });
    });
    await disk(journal.steps[0]?.path ?? id, () => durable);
  } catch (error) {
    if (!(error instanceof StageFailure)) throw error;
    // Not committed: the log goes first (no recovery may complete what is being rolled back), then the temps.
    await store.fs.unlink(logPath).catch(() => undefined);
    await store.fs.fsyncDirectory(store.journalsDir).catch(() => undefined);
    await Promise.all(staged.map((temp) => store.fs.unlink(temp).catch(() => undefined)));
    for (const dir of deepestFirst(journal.createdDirs)) await store.fs.rmdirIfEmpty(toAbsolute(store.root, dir)).catch(() => false);
    throw fail(error.path, error.cause);
  }
  // Past the commit point the replaced bytes are in the log: they are stored under their names in the
  // flush, and read from memory until then.
  const saving = logged.map((blob) => store.blobs.putDeferred(blob.data));
  const committed = await commit(store, committing, steps, { deferred: true, record });
  for (const dir of journal.createdDirs) committed.touched.add(path.dirname(toAbsolute(store.root, dir)));
  const flush = (async () => {
    await forEachLimited(committed.renamed, FLUSH_CONCURRENCY, (file) => store.fs.fsyncFile(file));
    await Promise.all([...committed.touched].map((dir) => fsyncFolderIfThere(store.fs, dir)));
    const written: string[] = [];
    await forEachLimited(saving, FLUSH_CONCURRENCY, async (blob) => {
      if ((await blob.write()).written) written.push(blob.hash);
    });
    // The stored copies handed out as temps get a file of their own again before the log goes.
    const refreshed = [...new Map([...relinked].map(([index, hash]) => [hash, data[index]!])).values()];
    await forEachLimited(refreshed, FLUSH_CONCURRENCY, async (bytes) => {
      written.push(await store.blobs.refresh(bytes));
    });
    await forEachLimited(written, FLUSH_CONCURRENCY, (hash) => store.fs.fsyncFile(store.blobs.pathOf(hash)));
    if (written.length > 0) await store.blobs.flush();
    if (await store.fs.lstat(path.join(store.recordsDir, `${id}.json`))) await store.syncRecord(id);
    await store.fs.unlink(logPath);
    await store.fs.fsyncDirectory(store.journalsDir);
  })();
  trackFlush(store.root, flush);
  return { ok: true, restored: committed.restored, conflicts: [...conflicts, ...committed.lateConflicts].sort((a, b) => (a.path < b.path ? -1 : 1)) };
}

/**
 * The small steps whose temp can be a hard link to the stored copy of what they put back (by step
 * index): each copy once (a second step of the same content writes its bytes), and only a copy on
 * disk of the right size. A temp made so allocates no new file, which on ext4 costs more than the
 * rest of a small file's undo; the flush then stores the copy anew (BlobStore.refresh), so the
 * store never shares a file with the workspace once the log is gone (recovery does the same).
 */
async function relinkable(store: StoreFiles, steps: readonly RestoreStep[], redoSteps: readonly RedoStep[]): Promise<Map<number, string>> {
  const relinked = new Map<number, string>();
  const taken = new Set<string>();
  for (const [index, step] of steps.entries()) {
    const result = step.result;
    if (!result.exists || !redoSteps[index].data || taken.has(result.sha256)) continue;
    const stored = await store.fs.lstat(store.blobs.pathOf(result.sha256));
    if (stored?.type !== 'file' || stored.size !== result.size) continue;
    taken.add(result.sha256);
    relinked.set(index, result.sha256);
  }
  return relinked;
}

/** How many renamed files a flush fsyncs at once. */
const FLUSH_CONCURRENCY = 32;

/** What an undo's redo log carries for its checkpoint: the journal it commits and the replaced bytes. */
interface RestoreRedoMeta {
  journal: RestoreJournal;
  blobs: { hash: string; length: number }[];
  at: number;
  /** Stored copies a temp was linked to: stored anew before the log goes (see relinkable). */
  relinked: string[];
}

function restoreMetaOf(plan: RedoPlan, id: string): RestoreRedoMeta | undefined {
  const meta = plan.meta as Partial<RestoreRedoMeta> | undefined;
  if (!meta || !Array.isArray(meta.blobs) || typeof meta.at !== 'number') return undefined;
  const journal = parseJournal(JSON.stringify(meta.journal ?? null), id);
  if (!journal || journal.workspaceRoot !== plan.workspaceRoot) return undefined;
  if (!meta.blobs.every((b) => typeof b?.hash === 'string' && Number.isSafeInteger(b.length) && b.length >= 0)) return undefined;
  const relinked = meta.relinked ?? [];
  if (!Array.isArray(relinked) || !relinked.every(isSha256)) return undefined;
  return { journal, blobs: meta.blobs, at: meta.at, relinked };
}

/**
 * Completes an undo's (or redo's) redo log a dead process left: each file rolled forward or kept,
 * the replaced bytes saved, the folders settled and the record written, as the live undo would have.
 */
export async function recoverRestoreLog(store: StoreFiles, id: string): Promise<JournalRecovery> {
  const result = await recoverRedoLog(store.fs, restoreLogPath(store, id), {
    root: store.root,
    finish: async (plan, body, { kept }) => {
      const meta = restoreMetaOf(plan, id);
      if (!meta) return;
      let at = meta.at;
      for (const blob of meta.blobs) {
        const bytes = body.subarray(at, at + blob.length);
        at += blob.length;
        if (!(await store.blobs.hasOnDisk(blob.hash))) await store.blobs.put(bytes);
        else await store.fs.fsyncFile(store.blobs.pathOf(blob.hash));
      }
      // A copy handed out as a temp may now be a workspace file too: stored anew, from the log.
      for (const hash of meta.relinked) {
        const step = plan.steps.find((candidate) => candidate.after?.sha256 === hash && candidate.data);
        if (!step?.data) continue;
        await store.blobs.refresh(body.subarray(step.data.offset, step.data.offset + step.data.length));
        await store.fs.fsyncFile(store.blobs.pathOf(hash));
      }
      await store.blobs.flush();
      const late = new Set(kept);
      const dirs = await settleDirs(store, meta.journal, late);
      await writeOutcome(store, meta.journal, late, dirs);
    },
  });
  if (result.outcome === 'discarded') return { checkpointId: id, outcome: 'rolled-back', restored: [] };
  return { checkpointId: id, outcome: 'rolled-forward', restored: result.applied.sort() };
}

/** After the files: folders the change created go (once empty), folders it removed come back. */
async function settleDirs(store: StoreFiles, journal: RestoreJournal, kept: Set<string>): Promise<{ removed: string[]; created: string[] }> {
  const removed: string[] = [];
  for (const dir of deepestFirst(journal.removeDirs)) {
    if ([...kept].some((file) => file.startsWith(`${dir}/`))) continue;
    if (await placementProblem(store.root, dir)) continue;
    if ((await store.fs.lstat(toAbsolute(store.root, dir)))?.type !== 'directory') continue;
    if (await store.fs.rmdirIfEmpty(toAbsolute(store.root, dir))) removed.push(dir);
  }
  const created = [...journal.createdDirs];
  for (const dir of parentsFirst(journal.recreateDirs)) {
    if (await placementProblem(store.root, dir)) continue;
    const parents = await missingParents(store.fs, store.root, `${dir}/x`);
    if (parents === 'blocked') continue;
    for (const missing of parents) {
      await store.fs.mkdir(toAbsolute(store.root, missing));
      created.push(missing);
    }
  }
  return { removed, created };
}

/** Writes what the restore did into the record (the same code finishes a recovered journal). */
async function writeOutcome(store: StoreFiles, journal: RestoreJournal, lateKept: Set<string>, dirs: { removed: string[]; created: string[] }, options: { sync?: boolean; record?: CheckpointRecord } = {}): Promise<void> {
  // The live undo read the record under its lock a moment ago; a recovery reads it again.
  let record = options.record;
  if (!record) {
    const read = await store.read(journal.checkpointId);
    if (!read.ok) return;
    record = read.record;
  }
  const done = journal.replaced.filter((r) => !lateKept.has(r.path));
  const kept = [...new Set([...journal.kept, ...lateKept])];
  if (journal.direction === 'undo') {
    const previous: UndoneState | undefined = record.state === 'undone' ? record.undo : undefined;
    // A path kept this time is not restored, whatever an earlier write of this outcome (before a crash) said.
    const paths = [...(previous?.paths ?? []).filter((p) => !done.some((d) => d.path === p.path) && !lateKept.has(p.path)), ...done];
    if (paths.length === 0) return;
    await store.write({
      ...record,
      state: 'undone',
      undo: {
        at: store.now(),
        paths,
        kept: kept.filter((k) => !paths.some((p) => p.path === k)),
        createdDirs: [...new Set([...(previous?.createdDirs ?? []), ...dirs.created])],
        removedDirs: [...new Set([...(previous?.removedDirs ?? []), ...dirs.removed])],
      },
    }, options);
    return;
  }
  // Redo: the paths put back hold what the undo replaced, which the next undo expects to find.
  const redone = new Map(done.map((d) => [d.path, d]));
  const undoPaths = record.undo?.paths ?? [];
  const files = record.files.map((file) => {
    const back = undoPaths.find((p) => p.path === file.path);
    return back && redone.has(file.path) ? { ...file, after: back.replaced } : file;
  });
  const remaining = undoPaths.filter((p) => !redone.has(p.path));
  if (remaining.length === 0) {
    const { undo: _dropped, ...rest } = record;
    void _dropped;
    await store.write({ ...rest, state: 'applied', files }, options);
  } else {
    await store.write({ ...record, files, undo: { ...record.undo!, paths: remaining } }, options);
  }
}

async function removeTemp(store: StoreFiles, step: RestoreStep): Promise<void> {
  if (!step.temp || (await placementProblem(store.root, step.temp))) return;
  const absolute = toAbsolute(store.root, step.temp);
  if ((await store.fs.lstat(absolute))?.type === 'file') await store.fs.unlink(absolute);
}

async function rollBack(store: StoreFiles, journal: RestoreJournal): Promise<void> {
  for (const step of journal.steps) await removeTemp(store, step).catch(() => undefined);
  for (const dir of deepestFirst(journal.createdDirs)) {
    if (!(await placementProblem(store.root, dir))) await store.fs.rmdirIfEmpty(toAbsolute(store.root, dir)).catch(() => false);
  }
  await removeJournal(store.fs, store.journalsDir, journal.checkpointId).catch(() => undefined);
}

export type JournalRecovery = { checkpointId: string; outcome: 'rolled-back' | 'rolled-forward' | 'abandoned'; restored: string[] };

/** Finishes (past the commit point) or rolls back (still staging) the journal a dead process left. */
export async function recoverJournal(store: StoreFiles, checkpointId: string): Promise<JournalRecovery> {
  const file = journalPath(store.journalsDir, checkpointId);
  const info = await store.fs.lstat(file);
  const journal = info?.type === 'file' ? parseJournal(Buffer.from(await store.fs.readFile(file)).toString('utf8'), checkpointId) : undefined;
  if (!journal || journal.workspaceRoot !== store.root) {
    // Unreadable: the first write of a journal comes before any temp, so nothing was staged yet.
    await store.fs.unlink(file);
    return { checkpointId, outcome: 'abandoned', restored: [] };
  }
  if (journal.phase === 'staging') {
    await rollBack(store, journal);
    return { checkpointId, outcome: 'rolled-back', restored: [] };
  }
  const { restored } = await commit(store, journal, undefined);
  return { checkpointId, outcome: 'rolled-forward', restored };
}
