// An undo (or redo) committed with one redo log (issue 28): the plan and the bytes in one append
// whose fsync is the commit point, temps and renames without fsync, the flush after the result;
// and the recovery that completes such a log a dead process left.
import * as path from 'node:path';
import { toAbsolute } from '../fs/paths';
import { forEachLimited } from '../fs/pool';
import { errorCode } from './checkpointFs';
import { isSha256 } from './fileState';
import { deepestFirst } from './placement';
import type { CheckpointRecord } from './record';
import { parseJournal, type RestoreJournal, type RestoreStep } from './restoreJournal';
import type { StoreFiles } from './storeFiles';
import { offTheWait, trackFlush } from '../fs/pendingFlush';
import { encodeRedoLog, REDO_LOG_MAX_FILE_BYTES, type RedoPlan, type RedoStep } from '../fs/redoLog';
import { fsyncFolderIfThere, recoverRedoLog } from '../fs/redoRecovery';
import { RedoLogCommit } from '../fs/redoSlots';
import { releaseRestoreLock, takeRestoreLock } from './restoreLock';
import { CONCURRENCY, RestoreError, StageFailure, type Evaluated, type JournalRecovery, type RestoreConflict, type RestoreOutcome } from './restoreTypes';
import { commit, settleDirs, writeOutcome } from './restoreCommit';

/** Where the redo log of an undo (or redo) of `id` lives; creating it (O_EXCL) is the lock, as the journal's is. */
export function restoreLogPath(store: StoreFiles, id: string): string {
  return path.join(store.journalsDir, `${id}.redo`);
}

/** Redo logs of undos this process is committing right now (its own older ones are leftovers of a failed flush). */
export const inFlight = new Set<string>();

/**
 * Issue 28: the undo (or redo) commits with one redo log beside the journals: the plan (the journal
 * as it would be when committing), the new bytes of every small file and the replaced bytes redo
 * needs, in one append whose fsync is the commit point. Then temps and renames without fsync, the
 * record written, and the user has the result; the flush (files, folders, blobs, record, then the
 * log's removal) runs after, and the next change of this workspace waits for it.
 */
export async function restoreWithRedoLog(store: StoreFiles, record: CheckpointRecord, journal: RestoreJournal, steps: Evaluated[], conflicts: RestoreConflict[]): Promise<RestoreOutcome> {
  const id = journal.checkpointId;
  const logPath = restoreLogPath(store, id);
  if (inFlight.has(logPath)) return { ok: false, reason: 'busy', message: `Checkpoint "${id}" is being undone or redone right now; try again in a moment.` };
  inFlight.add(logPath);
  try {
    let locked: boolean;
    try {
      locked = takeRestoreLock(store, id);
    } catch (error) {
      throw new RestoreError(`Undo failed: its lock in the extension's storage could not be made (${errorCode(error) ?? String(error)}); no file in the workspace was changed. Free disk space for the extension's storage, then try again.`, journal.steps[0]?.path ?? id, []);
    }
    if (!locked) return { ok: false, reason: 'busy', message: `Checkpoint "${id}" is being undone or redone right now; try again in a moment.` };
    // Held until the log is gone: released by the flush, or at once when nothing was committed.
    let handedOver = false;
    try {
      const outcome = await commitWithRedoLog(store, record, journal, steps, conflicts, logPath, (flush) => {
        handedOver = true;
        trackFlush(store.root, flush.finally(() => releaseRestoreLock(store, id)));
      });
      return outcome;
    } finally {
      if (!handedOver) releaseRestoreLock(store, id);
    }
  } finally {
    inFlight.delete(logPath);
  }
}

async function commitWithRedoLog(store: StoreFiles, record: CheckpointRecord, journal: RestoreJournal, steps: Evaluated[], conflicts: RestoreConflict[], logPath: string, handOver: (flush: Promise<void>) => void): Promise<RestoreOutcome> {
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
  const relinked = relinkable(committing.steps, redoSteps, steps);
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
  let log: RedoLogCommit;
  try {
    // Into a slot made ahead where one is ready; else a new file, made with O_EXCL.
    log = await RedoLogCommit.start(store.fs, store.slots, logPath, encodeRedoLog(plan, body));
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
    const durable = log.durable;
    const small = redoSteps.flatMap((step, index) => (step.data ? [index] : []));
    await forEachLimited(small, CONCURRENCY, async (index) => {
      const step = committing.steps[index];
      await disk(step.path, async () => {
        const hash = relinked.get(index);
        if (hash && step.result.exists) {
          try {
            await store.fs.linkNew(store.blobs.pathOf(hash), tempOf(index), { mode: step.result.mode, sync: false, sourceMode: steps[index].targetStoredMode });
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
    await log.drop().catch(() => undefined);
    await Promise.all(staged.map((temp) => store.fs.unlink(temp).catch(() => undefined)));
    for (const dir of deepestFirst(journal.createdDirs)) await store.fs.rmdirIfEmpty(toAbsolute(store.root, dir)).catch(() => false);
    throw fail(error.path, error.cause);
  }
  // Past the commit point the replaced bytes are in the log: they are stored under their names in the
  // flush, and read from memory until then.
  const saving = logged.map((blob) => store.blobs.putDeferred(blob.data, blob.hash));
  const committed = await commit(store, committing, steps, { deferred: true, record });
  for (const dir of journal.createdDirs) committed.touched.add(path.dirname(toAbsolute(store.root, dir)));
  const flush = offTheWait(async () => {
    await forEachLimited(committed.renamed, FLUSH_CONCURRENCY, (file) => store.fs.fsyncFile(file));
    // The replaced files' blocks are freed here, off the wait (a name left over is removed at the next start).
    await forEachLimited(committed.setAside, FLUSH_CONCURRENCY, (file) => store.fs.unlink(file).catch(() => undefined));
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
    await log.drop();
  });
  handOver(flush);
  return { ok: true, restored: committed.restored, conflicts: [...conflicts, ...committed.lateConflicts].sort((a, b) => (a.path < b.path ? -1 : 1)) };
}

/**
 * The small steps whose temp can be a hard link to the stored copy of what they put back (by step
 * index): each copy once (a second step of the same content writes its bytes), and only a copy the
 * evaluation read from disk and found whole (not one still in memory). A temp made so allocates no
 * new file, which on ext4 costs more than the rest of a small file's undo; the flush then stores
 * the copy anew (BlobStore.refresh), so the store never shares a file with the workspace once the
 * log is gone (recovery does the same). A copy gone since the evaluation fails the link, and the
 * bytes are written instead.
 */
function relinkable(steps: readonly RestoreStep[], redoSteps: readonly RedoStep[], evaluated: readonly Evaluated[]): Map<number, string> {
  const relinked = new Map<number, string>();
  const taken = new Set<string>();
  for (const [index, step] of steps.entries()) {
    const result = step.result;
    if (!result.exists || !redoSteps[index].data || taken.has(result.sha256)) continue;
    if (evaluated[index].targetStoredMode === undefined) continue;
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
 * Completes an undo's (or redo's) redo log a dead process left (`<id>.redo`, or a slot it was
 * written into): each file rolled forward or kept, the replaced bytes saved, the folders settled and
 * the record written, as the live undo would have.
 */
export async function recoverRestoreLog(store: StoreFiles, id: string, logPath = restoreLogPath(store, id)): Promise<JournalRecovery> {
  const result = await recoverRedoLog(store.fs, logPath, {
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
