// Start-up recovery of the redo logs in a workspace's checkpoint folder: an accept's log is rolled
// forward (and its checkpoint's blobs and record restored from it), an undo's through restore.
import * as path from 'node:path';
import { decodeRedoLog, REDO_SUFFIX } from '../fs/redoLog';
import { recoverRedoLog } from '../fs/redoRecovery';
import { isSha256 } from './fileState';
import { isPlainCheckpointId, parseRecord, type CheckpointRecord } from './record';
import { recoverRestoreLog, type JournalRecovery } from './restore';
import type { StoreFiles } from './storeFiles';

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

/**
 * Every redo log of a dead process (or torn, and old enough) in the store's journals folder: accept
 * logs come back as AcceptLogRecovery, undo logs as JournalRecovery. Failures are said in words.
 */
export async function recoverRedoLogs(store: StoreFiles): Promise<{ accepts: AcceptLogRecovery[]; journals: JournalRecovery[]; failures: string[] }> {
  const accepts: AcceptLogRecovery[] = [];
  const journals: JournalRecovery[] = [];
  const failures: string[] = [];
  for (const name of (await store.fs.readdir(store.journalsDir)).sort()) {
    if (!name.endsWith(REDO_SUFFIX)) continue;
    const file = path.join(store.journalsDir, name);
    try {
      const info = await store.fs.lstat(file);
      if (info?.type !== 'file') continue;
      const decoded = decodeRedoLog(Buffer.from(await store.fs.readFile(file)));
      if (decoded.plan && store.processAlive(decoded.plan.pid)) continue;
      if (!decoded.plan && store.now() - info.mtimeMs < FRESH_LOG_MS) continue;
      if (name.startsWith(ACCEPT_LOG_PREFIX)) {
        const result = await recoverRedoLog(store.fs, file, { root: store.root, finish: (plan, body) => restoreCheckpoint(store, plan.meta, body) });
        accepts.push({ log: name, outcome: result.outcome, applied: result.applied, kept: result.kept });
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
