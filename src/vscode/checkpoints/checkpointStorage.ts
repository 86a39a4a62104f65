// Where the extension keeps checkpoints: the workspace's own extension storage (context.storageUri),
// else the global storage, else the engine's default state folder; opened with recovery and pruning.
import * as vscode from 'vscode';
import { CheckpointStore, DEFAULT_PRUNE_LIMITS, defaultStateDir, type PruneLimits } from '../../core/checkpoints';
import { userValue } from '../setup/settingPolicy';

const DAY_MS = 24 * 60 * 60 * 1000;
const MB = 1024 * 1024;

/** A folder on this machine's disk: storage URIs of another scheme (a virtual workspace) do not count. */
function localFolder(uri: vscode.Uri | undefined): string | undefined {
  return uri?.scheme === 'file' ? uri.fsPath : undefined;
}

export function checkpointStateDir(context: Pick<vscode.ExtensionContext, 'storageUri' | 'globalStorageUri'>): string {
  return localFolder(context.storageUri) ?? localFolder(context.globalStorageUri) ?? defaultStateDir();
}

/**
 * The pruning limits from `speculate.checkpoints.*`. Application scope: a workspace cannot shrink
 * them (and so delete the user's undo history); only the user's own settings count.
 */
export function pruneLimitsFromSettings(): PruneLimits {
  const config = vscode.workspace.getConfiguration('speculate');
  const days = userValue(config.inspect('checkpoints.maxAgeDays'));
  const megabytes = userValue(config.inspect('checkpoints.maxSizeMB'));
  return {
    maxAgeMs: typeof days === 'number' && Number.isFinite(days) && days >= 1 ? days * DAY_MS : DEFAULT_PRUNE_LIMITS.maxAgeMs,
    maxBytes: typeof megabytes === 'number' && Number.isFinite(megabytes) && megabytes >= 10 ? megabytes * MB : DEFAULT_PRUNE_LIMITS.maxBytes,
  };
}

/**
 * Opens the workspace's checkpoints, finishing what a crash left (after the overlays' own recovery)
 * and pruning to the settings. Undefined, with the reason logged, when the folder cannot be used.
 */
export async function openCheckpointStore(
  context: Pick<vscode.ExtensionContext, 'storageUri' | 'globalStorageUri'>,
  workspaceRoot: string,
  log: { info(line: string): void; warn(line: string): void },
  /** Recovery of crashed accepts: a recording finished from the disk must see what they left. */
  after: Promise<void> = Promise.resolve(),
): Promise<{ store: CheckpointStore } | { store?: undefined; error: string }> {
  let store: CheckpointStore;
  try {
    store = await CheckpointStore.open({ stateDir: checkpointStateDir(context), workspaceRoot });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    log.warn(`checkpoints are off: ${why}`);
    return { error: why };
  }
  void after
    .then(() => store.recover())
    .then(
      (recovery) => {
        if (recovery.journals.length + recovery.accepts.length + recovery.recordings.length + recovery.failures.length > 0) log.info(`checkpoint recovery: ${JSON.stringify(recovery)}`);
        return store.prune(pruneLimitsFromSettings());
      },
      (error: unknown) => log.warn(`checkpoint recovery failed: ${String(error)}`),
    )
    .then(
      (report) => report && report.removed.length > 0 && log.info(`checkpoints pruned: ${JSON.stringify(report)}`),
      (error: unknown) => log.warn(`pruning checkpoints failed: ${String(error)}`),
    )
    // After recovery (which removes the slots a dead window left): the redo-log slots the next
    // accept and undo commit into, so their commit point is one write and one flush, and the file
    // an undo's lock is a second name of.
    .then(() => store.prepare());
  return { store };
}
