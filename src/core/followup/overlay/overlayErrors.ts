// The overlay's own failures: its storage (the temp folder) failing, said as what the user can do,
// and an overlay used after it was discarded.
import { EngineFault } from '../../fs/workspaceFs';

/** What the user is told when the temp folder fails; the run stops there (its next suggestion tries again). */
function storageProblem(path: string, action: 'store' | 'read' | 'create', code: string): string {
  const again = 'the next suggestion will try again';
  if (code === 'ENOSPC' || code === 'EDQUOT') return `Couldn't run ahead: the temp folder is full. Free some space there (or point TMPDIR at a roomier folder); ${again}.`;
  if (code === 'EROFS') return `Couldn't run ahead: the temp folder is on a read-only disk. Point TMPDIR at a writable folder; ${again}.`;
  const what = action === 'create' ? 'its private folder' : `its copy of "${path}"`;
  return `Couldn't run ahead: the temp folder could not ${action === 'read' ? 'read' : 'hold'} ${what} (${code}); ${again}.`;
}

/**
 * The overlay's own storage (the temp folder) failed: a failure of the speculation, never a tool
 * result for the model. Names the workspace path, never the overlay's location.
 */
export class OverlayStorageError extends EngineFault {
  constructor(readonly path: string, action: 'store' | 'read' | 'create', readonly code: string) {
    super(storageProblem(path, action, code));
    this.name = 'OverlayStorageError';
  }
}

/** Codes of a temp folder that cannot hold the overlay: said as a storage failure, not as raw errno. */
export const STORAGE_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/** The overlay was cleaned up (accepted or aborted) and can no longer be used. */
export class OverlayDiscardedError extends Error {
  constructor() {
    super('This speculation was already discarded; its files are no longer available. Run the prompt again.');
    this.name = 'OverlayDiscardedError';
  }
}

export function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'unknown error';
}

/**
 * Creates a speculation's overlay. A raw file-system error names the overlay's temp path, which must
 * not reach the user, so it is reported by its code; the overlay's own errors (worded for users) pass through.
 */
export async function createOverlayWorded<T>(create: () => Promise<T>, log?: (line: string) => void): Promise<T> {
  try {
    return await create();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (typeof code !== 'string') throw error;
    log?.(`overlay creation failed: ${String(error)}`);
    throw new Error(`The speculation could not create its private overlay folder (${code}); the next suggestion will try again. If it keeps failing, check that the temp folder is writable.`);
  }
}
