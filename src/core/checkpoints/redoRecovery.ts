// Start-up recovery of the redo logs in a workspace's checkpoint folder: an accept's log is rolled
// forward (and its checkpoint's blobs and record restored from it), an undo's through restore.
import * as path from 'node:path';
import { decodeRedoLog, REDO_SUFFIX } from '../fs/redoLog';
import { recoverRedoLog } from '../fs/redoRecovery';
import { isSha256 } from './fileState';
import { isPlainCheckpointId, parseRecord, type CheckpointRecord } from './record';
import { recoverRestoreLog, type JournalRecovery } from './restore';
import type { StoreFiles } from './storeFiles';
import { slotOwner } from '../fs/redoSlots';
import { removeDeadRestoreLocks } from './restoreLock';
import { removeLeftAsides } from '../fs/setAside';
import type { RedoPlan } from '../fs/redoLog';

/** A log with no whole header younger than this may still be being written by a process starting up. */
const FRESH_LOG_MS = 60_000;

export const ACCEPT_LOG_PREFIX = 'accept-';

export interface AcceptLogRecovery {
  log: string;
  /** rolled-forward: committed, now complete. discarded: never committed; nothing had changed. */
  outcome: 'rolled-forward' | 'discarded';
  applied: string[];
  /** Files left as the user has them: changed since the accept checked them (a conflict). */
  kept: string[];
}

interface AcceptCheckpointMeta {
  checkpoint: { record: CheckpointRecord; blobs: { hash: string; length: number }[] };
  at: number;
}

/** Puts the checkpoint an accept's log carries back on disk (durably) unless a fuller record is there. */
async function restoreCheckpoint(store: StoreFiles, meta: unknown, body: Buffer): Promise<void> {
  const m = meta as Partial<AcceptCheckpointMeta> | undefined;
  const record = m?.checkpoint?.record;
  const blobs = m?.checkpoint?.blobs;
  if (!record || !Array.isArray(blobs) || typeof m?.at !== 'number' || typeof record.id !== 'string' || !isPlainCheckpointId(record.id)) return;
  if (!parseRecord(JSON.stringify(record), record.id) || record.workspaceRoot !== store.root) return;
  let at = m.at;
  for (const blob of blobs) {
    if (!isSha256(blob?.hash) || !Number.isSafeInteger(blob.length)) return;
    const bytes = body.subarray(at, at + blob.length);
    at += blob.length;
    if (!(await store.blobs.hasOnDisk(blob.hash))) await store.blobs.put(bytes);
    else await store.fs.fsyncFile(store.blobs.pathOf(blob.hash));
  }
  await store.blobs.flush();
  const current = await store.read(record.id);
  if (!current.ok || (current.record.state === 'recording' && current.record.files.length < record.files.length)) await store.write(record);
}

/** The checkpoint an undo's (or redo's) log commits, from the journal it carries. */
function undoIdOf(plan: RedoPlan): string | undefined {
  const id = (plan.meta as { journal?: { checkpointId?: unknown } } | undefined)?.journal?.checkpointId;
  return typeof id === 'string' && isPlainCheckpointId(id) ? id : undefined;
}

/**
 * Every redo log of a dead process (or torn, and old enough) in the store's journals folder: accept
 * logs come back as AcceptLogRecovery, undo logs as JournalRecovery. Failures are said in words.
 */
export async function recoverRedoLogs(store: StoreFiles): Promise<{ accepts: AcceptLogRecovery[]; journals: JournalRecovery[]; failures: string[] }> {
  const accepts: AcceptLogRecovery[] = [];
  const journals: JournalRecovery[] = [];
  const failures: string[] = [];
  const names = (await store.fs.readdir(store.journalsDir)).sort();
  removeDeadRestoreLocks(store, names);
  removeLeftAsides(store.journalsDir, (pid) => store.processAlive(pid));
  for (const name of names) {
    if (!name.endsWith(REDO_SUFFIX)) continue;
    const file = path.join(store.journalsDir, name);
    try {
      const info = await store.fs.lstat(file);
      if (info?.type !== 'file') continue;
      // A slot made ahead belongs to the process its name gives: a live one's is in use or ready;
      // one with this process's pid that its pool does not know is an earlier process's (a reused pid).
      const slotOwnerPid = slotOwner(name);
      if (slotOwnerPid !== undefined && store.processAlive(slotOwnerPid) && (slotOwnerPid !== store.pid || store.slots.holds(file))) continue;
      const decoded = decodeRedoLog(Buffer.from(await store.fs.readFile(file)));
      if (slotOwnerPid === undefined && decoded.plan && store.processAlive(decoded.plan.pid)) continue;
      if (slotOwnerPid === undefined && !decoded.plan && store.now() - info.mtimeMs < FRESH_LOG_MS) continue;
      const slotOfUndo = slotOwnerPid !== undefined && decoded.plan && decoded.plan.kind !== 'accept' ? undoIdOf(decoded.plan) : undefined;
      if (slotOfUndo) {
        journals.push(await recoverRestoreLog(store, slotOfUndo, file));
      } else if (name.startsWith(ACCEPT_LOG_PREFIX) || slotOwnerPid !== undefined) {
        // An accept's log, or a dead process's slot: rolled forward when it holds a committed accept, else removed.
        if (slotOwnerPid !== undefined && decoded.plan && decoded.plan.kind !== 'accept') continue;
        const result = await recoverRedoLog(store.fs, file, { root: store.root, finish: (plan, body) => restoreCheckpoint(store, plan.meta, body) });
        // A slot that held no log (ready, or cleared after its flush) is just removed: nothing to say.
        if (slotOwnerPid === undefined || result.plan) accepts.push({ log: name, outcome: result.outcome, applied: result.applied, kept: result.kept });
      } else {
        const id = name.slice(0, -REDO_SUFFIX.length);
        if (!isPlainCheckpointId(id)) continue;
        journals.push(await recoverRestoreLog(store, id));
      }
    } catch (error) {
      failures.push(`Finishing the interrupted change in ${name} failed (${error instanceof Error ? error.message : String(error)}); it will be tried again on the next start.`);
    }
  }
  return { accepts, journals, failures };
}
