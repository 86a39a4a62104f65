// `undo`: restores every file a checkpoint's change (an accept or a chat turn) touched to its state
// just before it, keeping files changed since as conflicts unless --force (HEADLESS-CLI.md).
import { stat } from 'node:fs/promises';
import { CheckpointFolderError, isPlainCheckpointId, RestoreError } from '../core/checkpoints';
import { housekeeping, openCheckpointStore } from './checkpointStore';
import { parseOptions } from './options';
import { UsageError } from './usage';

export interface UndoArgs {
  workspace: string;
  checkpoint: string;
  stateDir?: string;
  force: boolean;
}

export function parseUndoArgs(argv: string[]): UndoArgs {
  const options = parseOptions(argv, { valued: ['--workspace', '--checkpoint', '--state-dir'], flags: ['--force'], required: ['--workspace', '--checkpoint'] });
  const checkpoint = options.values.get('--checkpoint')!;
  if (!isPlainCheckpointId(checkpoint)) throw new UsageError(`--checkpoint must be a checkpoint id (a plain name), not "${checkpoint}"`);
  const stateDir = options.values.get('--state-dir');
  return { workspace: options.values.get('--workspace')!, checkpoint, force: options.flags.has('--force'), ...(stateDir ? { stateDir } : {}) };
}

export async function runUndo(argv: string[], output: NodeJS.WritableStream): Promise<number> {
  const args = parseUndoArgs(argv);
  const info = await stat(args.workspace).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`--workspace ${args.workspace} is not a directory`);
  await housekeeping(args.workspace);
  let result: { restored: string[]; conflicts: string[]; error: string | null };
  try {
    const store = await openCheckpointStore(args.workspace, args.stateDir);
    const outcome = await store.undo(args.checkpoint, { force: args.force });
    result = outcome.ok
      ? { restored: outcome.restored, conflicts: outcome.conflicts.map((c) => c.path), error: null }
      : { restored: [], conflicts: [], error: outcome.message };
  } catch (error) {
    // The disk refusing (a staging failure, an unusable state folder) is the answer, not a crash.
    if (!(error instanceof RestoreError) && !(error instanceof CheckpointFolderError)) throw error;
    result = { restored: error instanceof RestoreError ? error.restored : [], conflicts: [], error: error.message };
  }
  output.write(JSON.stringify(result, null, 2) + '\n');
  return 0;
}
