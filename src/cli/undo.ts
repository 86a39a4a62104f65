// `undo`: restores every file a checkpoint's change (an accept or a chat turn) touched to its state
// just before it, keeping files changed since as conflicts unless --force (HEADLESS-CLI.md).
import { stat } from 'node:fs/promises';
import { CheckpointFolderError, isPlainCheckpointId, RestoreError } from '../core/checkpoints';
import { housekeeping, openCheckpointStore } from './checkpointStore';
import { UsageError } from './usage';

export interface UndoArgs {
  workspace: string;
  checkpoint: string;
  stateDir?: string;
  force: boolean;
}

export function parseUndoArgs(argv: string[]): UndoArgs {
  const values = new Map<string, string>();
  let force = false;
  const valued = new Set(['--workspace', '--checkpoint', '--state-dir']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--force') {
      force = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!valued.has(name)) throw new UsageError(`unknown option "${arg}" (see --help)`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    values.set(name, value);
  }
  for (const required of ['--workspace', '--checkpoint']) {
    if (!values.get(required)) throw new UsageError(`${required} is required (see --help)`);
  }
  const checkpoint = values.get('--checkpoint')!;
  if (!isPlainCheckpointId(checkpoint)) throw new UsageError(`--checkpoint must be a checkpoint id (a plain name), not "${checkpoint}"`);
  const stateDir = values.get('--state-dir');
  return { workspace: values.get('--workspace')!, checkpoint, force, ...(stateDir ? { stateDir } : {}) };
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
