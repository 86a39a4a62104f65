// The bridge from an accept to its checkpoint: the accept journal's plan (what each file held when it
// was checked, and what it will hold) is what the checkpoint saves, durably, before the first file is replaced.
import type { CheckpointRecording, FileState } from '../checkpoints';
import type { BeforeReplaceHook, ReplaceStep } from './overlay/applyOverlay';

/** The mode a file the speculation creates is reported with (the real one gets the default mode). */
const NEW_FILE_MODE = 0o644;

function afterState(step: ReplaceStep): FileState {
  return step.after.exists ? { exists: true, sha256: step.after.sha256, size: step.after.size, mode: step.after.mode ?? NEW_FILE_MODE } : { exists: false };
}

/**
 * The hook for one apply of an accept. `overwrite` names files the user chose to overwrite after a
 * conflict: their state is saved again, since the file the accept replaces is the user's newer one.
 */
export function checkpointHook(recording: CheckpointRecording, overwrite: ReadonlySet<string>): BeforeReplaceHook {
  return async ({ steps, createdDirs, removedDirs, unsynced }) => {
    const { refused, deferred } = await recording.capture(
      steps.map((step) => ({
        path: step.path,
        // The content the check saw: a file that holds something else now is refused, not captured.
        expect: step.expect.exists ? { exists: true, sha256: step.expect.sha256, size: step.expect.size, mode: 0 } : { exists: false },
        after: afterState(step),
        ...(overwrite.has(step.path) ? { refresh: true } : {}),
      })),
      // The folders the accept makes come from its journal: they may exist already by now.
      { created: createdDirs, removed: removedDirs },
      // With a redo log the capture rides in it: its blobs and record are flushed after Tab, not before.
      { unsynced: unsynced === true },
    );
    return { refused: refused.map((r) => r.path), ...(deferred ? { deferred } : {}) };
  };
}
