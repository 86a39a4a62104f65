// Review before Tab: the files the user leaves out of the current speculation's accept, and the
// changes (hunks) they drop from its files, which the overlay then no longer holds.
import type { Hunk } from '../checkpoints/hunks';
import type { WorkspaceFs } from '../fs/workspaceFs';
import type { DroppedHunks } from './hunkDrops';
import type { Speculation } from './speculation';

export class TabReview {
  /** Files the user left out of the current speculation's accept (by run id). */
  private excluded: { runId: string; paths: Set<string> } | undefined;

  constructor(
    private readonly current: () => Speculation | undefined,
    /** The real workspace (the side each hunk is against). */
    private readonly workspace: WorkspaceFs,
    /** True once Tab was pressed on it: the accept applies what the overlay held when it started. */
    private readonly accepting: () => boolean,
  ) {}

  /** Leaves `path` out of the current speculation's accept (or puts it back); others are kept. */
  setExcluded(runId: string, path: string, excluded: boolean): void {
    if (this.current()?.id !== runId) return;
    if (this.excluded?.runId !== runId) this.excluded = { runId, paths: new Set() };
    if (excluded) this.excluded.paths.add(path);
    else this.excluded.paths.delete(path);
  }

  /** The hunks of `path` in run `runId` against the workspace (what its preview diff shows). */
  async speculationHunks(runId: string, path: string): Promise<Hunk[]> {
    const speculation = this.current();
    if (speculation?.id !== runId) throw new Error('That speculation is gone; its changes can no longer be reviewed.');
    return speculation.hunksOf(path, this.workspace);
  }

  /**
   * Drops one hunk of `path` from run `runId` before Tab (the overlay's file is rewritten without
   * it). Refused once Tab was pressed: the accept applies what the overlay held when it started.
   */
  async dropSpeculationHunk(runId: string, path: string, hunkId: string): Promise<DroppedHunks> {
    const speculation = this.current();
    if (speculation?.id !== runId) throw new Error('That speculation is gone; its changes can no longer be dropped.');
    if (this.accepting()) throw new Error('This speculation is being accepted; its changes can no longer be dropped.');
    const dropped = await speculation.dropHunk(path, hunkId, this.workspace);
    // Every change dropped: the file is left out whole, which the list and the turns then say.
    if (dropped.dropped.length >= dropped.total) this.setExcluded(runId, path, true);
    return dropped;
  }

  /** What the user dropped of run `runId` before Tab, per file. */
  droppedHunks(runId: string): DroppedHunks[] {
    const speculation = this.current();
    return speculation?.id === runId ? speculation.droppedHunks() : [];
  }

  /** The files the user left out of run `runId`'s accept, sorted. */
  excludedFiles(runId: string): string[] {
    return this.excluded?.runId === runId ? [...this.excluded.paths].sort() : [];
  }
}
