// Review before Tab: the speculation's files with +/− line counts against the workspace, and which
// of them the user left out; recomputed (debounced) as the run writes, sent to the chat's file list.
import type { SpeculationFiles, SpeculationFileView } from '../../shared/protocol';
import { lineChangeCounts, looksBinary } from '../../core/checkpoints/lineDiff';
import type { ChatSession } from '../../core/session';
import type { WorkspaceFs } from '../../core/fs/workspaceFs';

const DEBOUNCE_MS = 150;
/** Files counted per run; beyond it the list still shows them, counts 0 (the preview diff is exact). */
const MAX_COUNTED = 200;

/** Where the file list is shown: the chat's presenter implements it. */
export interface SpeculationFilesView {
  /** The speculation's files for review before Tab; null hides the list. */
  setSpeculationFiles(files: SpeculationFiles | null): void;
}

export interface SpeculationReviewDeps {
  session(): ChatSession | undefined;
  /** The real workspace (the left side of every count). */
  workspaceFs(): WorkspaceFs | undefined;
  presenter: SpeculationFilesView;
  log(line: string): void;
}

async function text(read: () => Promise<Uint8Array>): Promise<Uint8Array> {
  try {
    return await read();
  } catch {
    return new Uint8Array();
  }
}

export class SpeculationReview {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private shown: string | undefined;
  private generation = 0;

  constructor(private readonly deps: SpeculationReviewDeps) {}

  /** The speculation changed (a write, a new run, none any more). */
  update(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh().catch((error: unknown) => this.deps.log(`speculation review failed: ${String(error)}`));
    }, DEBOUNCE_MS);
  }

  /** Shows the list again now (a hunk was dropped: its "2 of 3 changes kept" changed). */
  refreshNow(): void {
    void this.refresh().catch((error: unknown) => this.deps.log(`speculation review failed: ${String(error)}`));
  }

  /** The user left `path` out of run `runId`'s accept (or put it back). */
  exclude(runId: string, path: string, excluded: boolean): void {
    this.deps.session()?.setExcluded(runId, path, excluded);
    void this.refresh();
  }

  private async refresh(): Promise<void> {
    const generation = ++this.generation;
    const session = this.deps.session();
    const snapshot = session?.currentSpeculation ?? null;
    const overlay = session?.currentOverlay;
    const base = this.deps.workspaceFs();
    const live = snapshot && overlay && base && (snapshot.status === 'running' || snapshot.status === 'completed' || snapshot.status === 'boundary');
    if (!live || snapshot.filesWritten.length === 0) {
      if (this.shown !== undefined) this.deps.presenter.setSpeculationFiles(null);
      this.shown = undefined;
      return;
    }
    const excluded = new Set(session.excludedFiles(snapshot.id));
    const dropped = new Map(session.droppedHunks(snapshot.id).map((entry) => [entry.path, entry]));
    const files: SpeculationFileView[] = [];
    for (const [index, file] of snapshot.filesWritten.entries()) {
      const view: SpeculationFileView = { path: file.path, change: file.kind, added: 0, removed: 0, excluded: excluded.has(file.path) };
      const drops = dropped.get(file.path);
      if (drops) view.hunks = { kept: drops.total - drops.dropped.length, total: drops.total };
      if (index < MAX_COUNTED) {
        const before = file.kind === 'created' ? new Uint8Array() : await text(() => base.readFile(file.path));
        const after = file.kind === 'deleted' ? new Uint8Array() : await text(() => overlay.readFile(file.path));
        if (looksBinary(before) || looksBinary(after)) view.binary = true;
        else Object.assign(view, lineChangeCounts(Buffer.from(before).toString('utf8'), Buffer.from(after).toString('utf8')));
      }
      files.push(view);
    }
    // A newer refresh started meanwhile: its answer is the one to show.
    if (generation !== this.generation) return;
    this.shown = snapshot.id;
    this.deps.presenter.setSpeculationFiles({ runId: snapshot.id, files });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
