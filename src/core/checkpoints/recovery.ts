// Start-up housekeeping of a workspace's checkpoints: undos that a crash interrupted are finished
// or rolled back from their journals, and recordings whose process died are completed from the disk.
import { completeRecord } from './recording';
import { parseJournal, journalPath } from './restoreJournal';
import { recoverJournal, type JournalRecovery } from './restore';
import type { StoreFiles } from './storeFiles';
import { recoverRedoLogs, type AcceptLogRecovery } from './redoRecovery';
import { recoverGitApply } from '../git/applyGitLayer';

export interface CheckpointRecoveryReport {
  journals: JournalRecovery[];
  /** Accepts committed by a redo log that a crash or power cut interrupted, now complete. */
  accepts: AcceptLogRecovery[];
  /** Recordings a dead process left, now complete (or removed when they changed nothing). */
  recordings: { id: string; outcome: 'completed' | 'empty' }[];
  /** What could not be recovered (left for the next start), in words. */
  failures: string[];
}

/** Call after the overlay housekeeping (an interrupted accept is rolled forward first). */
export async function recoverCheckpoints(store: StoreFiles): Promise<CheckpointRecoveryReport> {
  const report: CheckpointRecoveryReport = { journals: [], accepts: [], recordings: [], failures: [] };
  // Redo logs first: an accept's log restores its checkpoint's record, which the recordings below finish.
  const logs = await recoverRedoLogs(store);
  report.accepts.push(...logs.accepts);
  report.journals.push(...logs.journals);
  report.failures.push(...logs.failures);
  // A commit-ahead accept that died holding git's locks (HEAD.lock, index.lock): they go, or git would refuse to work.
  try {
    await recoverGitApply(store.journalsDir);
  } catch (error) {
    report.failures.push(`Removing the git locks of an interrupted accept failed (${error instanceof Error ? error.message : String(error)}); remove .git/HEAD.lock or .git/index.lock if git says they exist.`);
  }
  for (const name of await store.fs.readdir(store.journalsDir)) {
    if (!name.endsWith('.json')) continue;
    const id = name.slice(0, -'.json'.length);
    try {
      const journal = parseJournal(Buffer.from(await store.fs.readFile(journalPath(store.journalsDir, id))).toString('utf8'), id);
      if (journal && store.processAlive(journal.pid)) continue;
      report.journals.push(await recoverJournal(store, id));
    } catch (error) {
      report.failures.push(`Finishing the interrupted undo of ${id} failed (${error instanceof Error ? error.message : String(error)}); it will be tried again on the next start.`);
    }
  }
  for (const record of await store.records()) {
    if (record.state !== 'recording' || store.processAlive(record.pid)) continue;
    try {
      const completed = await completeRecord(store, record, undefined);
      report.recordings.push({ id: record.id, outcome: completed ? 'completed' : 'empty' });
    } catch (error) {
      report.failures.push(`Completing checkpoint ${record.id} failed (${error instanceof Error ? error.message : String(error)}).`);
    }
  }
  return report;
}
