// The CLI's checkpoint store for a workspace (`--state-dir`, default $XDG_STATE_HOME/speculate):
// opened after the overlay housekeeping, with interrupted undos recovered and old checkpoints pruned.
import { CheckpointStore, DEFAULT_PRUNE_LIMITS, defaultStateDir } from '../core/checkpoints';
import { cleanupStaleOverlays } from '../core/followup/overlayFs';

function warn(what: string, error: unknown): void {
  process.stderr.write(`speculate: ${what} failed: ${error instanceof Error ? error.message : String(error)}\n`);
}

/**
 * Crashed accepts (in the overlays) first: a checkpoint finished from the disk must see their
 * result. Only journals naming this workspace are acted on.
 */
export async function housekeeping(workspace: string): Promise<void> {
  await cleanupStaleOverlays({ workspaces: [workspace] }).catch((error: unknown) => warn('housekeeping', error));
}

export async function openCheckpointStore(workspace: string, stateDir: string | undefined): Promise<CheckpointStore> {
  const store = await CheckpointStore.open({ stateDir: stateDir ?? defaultStateDir(), workspaceRoot: workspace });
  const report = await store.recover();
  for (const failure of report.failures) process.stderr.write(`speculate: ${failure}\n`);
  await store.prune(DEFAULT_PRUNE_LIMITS).catch((error: unknown) => warn('pruning checkpoints', error));
  return store;
}
