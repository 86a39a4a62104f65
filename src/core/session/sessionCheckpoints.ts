// Undo and redo of what turns and accepts changed, from the chat: whole checkpoints, or one change
// (hunk) of one file, never over the user's later edits; nothing predicted from before stays.
import { summaryOf, type CheckpointStore, type RestoreOptions, type RestoreOutcome, type RestorePlan } from '../checkpoints';
import { sha256 } from '../checkpoints/fileState';
import { describeHunk, splitHunks, StaleHunkError, textForHunks, type Hunk } from '../checkpoints/hunks';
import { planHunkUndo, type HunkUndoPlan } from '../checkpoints/hunkUndo';
import type { CheckpointSummary } from '../checkpoints';
import type { FollowupDriver } from '../followup/followupDriver';
import type { WorkspaceFs } from '../fs/workspaceFs';
import type { LiveChat } from './liveChat';
import type { SessionEvent } from './sessionEvents';

/** What undoing one hunk of a checkpoint did; `changed`: the user edited it since (ask, then pass overwrite). */
export type HunkUndoOutcome =
  | { ok: true; hunk: Hunk; checkpoint: CheckpointSummary | null }
  | { ok: false; reason: 'busy' | 'changed' | 'stale' | 'unknown'; message: string };

export interface SessionCheckpointsOptions {
  store: CheckpointStore | undefined;
  /** The real workspace. */
  fs: WorkspaceFs;
  chat: LiveChat;
  followup: Pick<FollowupDriver, 'conflictsPending' | 'clearAhead'>;
  emit: (event: SessionEvent) => void;
}

export class SessionCheckpoints {
  private undoing = false;

  constructor(private readonly options: SessionCheckpointsOptions) {}

  /** The store checkpoints are recorded in (the UI reads blobs and lists from it). */
  get store(): CheckpointStore | undefined {
    return this.options.store;
  }

  /** Why the workspace cannot be rewound right now, or undefined when it can. */
  undoBlocker(): string | undefined {
    if (this.options.chat.busy) return 'A turn is running and may be changing files; stop it (or wait for it), then undo.';
    if (this.options.followup.conflictsPending) return 'An accept is waiting for your answers about changed files; answer them or discard it, then undo.';
    if (this.undoing) return 'Another undo is still running; wait for it to finish.';
    return undefined;
  }

  planUndo(id: string): Promise<RestorePlan> {
    return this.withStore((store) => store.planUndo(id));
  }

  planRedo(id: string): Promise<RestorePlan> {
    return this.withStore((store) => store.planRedo(id));
  }

  /**
   * Undoes a checkpoint (files changed since are kept unless listed in `force`). The suggestion and
   * its speculation go first: they were predicted from the workspace before the undo.
   */
  undoCheckpoint(id: string, force: readonly string[] = [], keep: readonly string[] = []): Promise<RestoreOutcome> {
    return this.rewind(id, 'undo', { force, keep });
  }

  redoCheckpoint(id: string, force: readonly string[] = [], keep: readonly string[] = []): Promise<RestoreOutcome> {
    return this.rewind(id, 'redo', { force, keep });
  }

  private async withStore<T extends RestorePlan | RestoreOutcome>(work: (store: CheckpointStore) => Promise<T>): Promise<T | RestorePlan> {
    const store = this.options.store;
    if (!store) return { ok: false, reason: 'unknown', message: 'Checkpoints are not recorded in this session.' };
    return work(store);
  }

  private async rewind(id: string, direction: 'undo' | 'redo', options: RestoreOptions): Promise<RestoreOutcome> {
    const store = this.options.store;
    if (!store) return { ok: false, reason: 'unknown', message: 'Checkpoints are not recorded in this session.' };
    const blocked = this.undoBlocker();
    if (blocked) return { ok: false, reason: 'busy', message: blocked };
    this.undoing = true;
    try {
      await this.options.followup.clearAhead(direction, { stopPrediction: true });
      const outcome = direction === 'undo' ? await store.undo(id, options) : await store.redo(id, options);
      const read = await store.read(id);
      if (read.ok) this.options.emit({ type: 'checkpoint_changed', checkpoint: summaryOf(read.record) });
      return outcome;
    } finally {
      this.undoing = false;
    }
  }

  /**
   * The hunks of checkpoint `id` in `path`, as its Changes diff shows them: its saved copy from
   * before against the file now (the same as against its after-state until the user edits it).
   */
  async checkpointHunks(id: string, path: string): Promise<Hunk[]> {
    const { before, current } = await this.checkpointTexts(id, path);
    return splitHunks(before, current);
  }

  /**
   * Keeps a copy of what checkpoint `id` wrote, for each file still as it left it (when its Changes
   * review opens): once the user edits the file, a hunk undo can then still tell their edits from
   * the change's. The copies are blobs no record names, so pruning collects them in time.
   */
  async rememberCheckpointAfter(id: string): Promise<void> {
    const store = this.options.store;
    const read = await store?.read(id);
    if (!store || !read?.ok || read.record.state !== 'applied') return;
    const fs = this.options.fs;
    for (const file of read.record.files) {
      if (!file.after?.exists || (await store.blobs.has(file.after.sha256))) continue;
      const bytes = await fs.readFile(file.path).catch(() => undefined);
      if (bytes && sha256(bytes) === file.after.sha256) await store.blobs.put(bytes);
    }
  }

  /**
   * The texts one hunk undo needs. `after` (what the change wrote) is known when the file is still
   * as the change left it, or when the store holds a copy; otherwise undefined (edited since).
   */
  private async checkpointTexts(id: string, path: string): Promise<{ before: string; after: string | undefined; current: string }> {
    const store = this.options.store;
    if (!store) throw new Error('Checkpoints are not recorded in this session.');
    const read = await store.read(id);
    if (!read.ok) throw new Error(read.message);
    if (read.record.state !== 'applied') throw new Error('This change is undone already; redo it first to undo part of it.');
    const file = read.record.files.find((f) => f.path === path);
    if (!file) throw new Error(`This change did not touch ${path}.`);
    if (!file.before.exists || !file.after?.exists) {
      throw new Error(`${path} was ${file.before.exists ? 'deleted' : 'created'} by this change as a whole, so it has no separate changes; undo the whole change to take it back.`);
    }
    const fs = this.options.fs;
    if ((await fs.stat(path))?.type !== 'file') throw new Error(`${path} is gone since this change; there is nothing to undo in it.`);
    const currentBytes = await fs.readFile(path);
    const current = textForHunks(currentBytes, path);
    const afterSha = file.after.sha256;
    let after: string | undefined;
    if (sha256(currentBytes) === afterSha) after = current;
    else after = await store.blobs.read(afterSha).then((bytes) => textForHunks(bytes, path), () => undefined);
    return { before: textForHunks(await store.blobs.read(file.before.sha256), path), after, current };
  }

  /**
   * Undoes one hunk of checkpoint `id` in `path`, leaving its other changes and the user's later
   * edits alone. A hunk whose lines the user changed since is refused (`changed`) unless the caller
   * asked and the user said `overwrite`. The write is a checkpoint of its own (undoable in turn),
   * shown as a turn line; a file changed between the check and the write is refused, never overwritten.
   */
  async undoCheckpointHunk(id: string, path: string, hunkId: string, options: { overwrite?: boolean } = {}): Promise<HunkUndoOutcome> {
    const blocked = this.undoBlocker();
    if (blocked) return { ok: false, reason: 'busy', message: blocked };
    this.undoing = true;
    try {
      let plan: HunkUndoPlan;
      let current: string;
      const fs = this.options.fs;
      try {
        const texts = await this.checkpointTexts(id, path);
        current = texts.current;
        // What the change wrote is gone (edited since, no copy kept): the hunks are against the
        // file now and may hold the user's edits, so every one of them is asked about.
        const againstNow = (): HunkUndoPlan => ({ ...planHunkUndo(texts.before, current, current, hunkId, path), touched: true });
        if (texts.after === undefined) plan = againstNow();
        else {
          try {
            plan = planHunkUndo(texts.before, texts.after, current, hunkId, path);
          } catch (error) {
            // A hunk of the diff as shown now that the change alone does not have: the user's edit is in it.
            if (!(error instanceof StaleHunkError)) throw error;
            plan = againstNow();
          }
        }
      } catch (error) {
        return { ok: false, reason: error instanceof StaleHunkError ? 'stale' : 'unknown', message: error instanceof Error ? error.message : String(error) };
      }
      const where = `${describeHunk(plan.hunk)} of ${path}`;
      if (plan.touched && !options.overwrite) {
        return { ok: false, reason: 'changed', message: `You changed ${where} (or the lines next to it) since; undoing it would replace your edits there.` };
      }
      // The suggestion and its speculation were predicted from the workspace as it was.
      await this.options.followup.clearAhead('undo', { stopPrediction: true });
      const target = this.options.chat.recordingFs ?? fs;
      this.options.chat.recordingFs?.begin({ kind: 'turn', prompt: `Undo ${where}` });
      try {
        await target.writeFile(path, plan.text, { expect: { exists: true, sha256: sha256(Buffer.from(current, 'utf8')) } });
      } catch (error) {
        await this.options.chat.sealTurn();
        return { ok: false, reason: 'changed', message: `${path} changed while its change was being undone, so nothing was written (${error instanceof Error ? error.message : String(error)}).` };
      }
      const checkpoint = await this.options.chat.sealTurn();
      if (checkpoint) this.options.emit({ type: 'turn_recorded', point: this.options.chat.addPoint(checkpoint), checkpoint });
      return { ok: true, hunk: plan.hunk, checkpoint };
    } finally {
      this.undoing = false;
    }
  }
}
