// The accept flow of one finished speculation, from Tab to injected turns: apply its overlay, take
// the user's answer for each conflicting file, inject the speculated messages. It decides nothing
// about what runs next: each step returns an outcome, and the session turns it into events and turns.
import type { AppendResult } from '../chat/conversation';
import type { CheckpointRecording, CheckpointStore, CheckpointSummary } from '../checkpoints';
import type { ChatMessage } from '../messages';
import { OverlayApplyError } from './overlay/applyOverlay';
import type { ApplyResult, Speculation, SpeculationSnapshot, ToolCallRecord } from './speculation';
import type { DroppedHunks } from './hunkDrops';
import type { CommittedAhead } from './commitAhead';

export type ConflictChoice = 'overwrite' | 'keep-mine';

/** A run that was applied and whose turns joined the conversation. */
export interface AcceptedRun {
  snapshot: SpeculationSnapshot;
  messages: ChatMessage[];
  /** The calls that ran, in order. */
  toolCalls: ToolCallRecord[];
  applied: string[];
  /** Files the user kept their own version of. */
  notApplied: string[];
  /** Files the user left out before Tab. */
  excluded: string[];
  /** Hunks the user dropped before Tab, per file (files applied without them). */
  droppedHunks: DroppedHunks[];
  /** What undoes this accept; null when it changed no file (or checkpoints are off). */
  checkpoint: CheckpointSummary | null;
  timeSavedMs: number;
  /** A boundary run: the main agent continues live from where it stopped. */
  continuesLive: boolean;
  /** What the accept committed in the repository (commit ahead); null when the run committed nothing. */
  committedAhead: CommittedAhead | null;
}

/** Where an accept stands after a step. */
export type AcceptStep =
  /** Files changed under the speculation: nothing more happens until the user answers for each. */
  | { kind: 'conflicts'; conflicts: { path: string; reason: string }[] }
  /** Some conflicts still wait for an answer. */
  | { kind: 'waiting' }
  /**
   * Nothing was injected: the request runs live, and the user is told why. `checkpoint` covers
   * files a failed accept did apply before it stopped.
   */
  | { kind: 'run_live'; notice: string; why: string; checkpoint: CheckpointSummary | null }
  /**
   * The workspace refused the accept (disk full, read-only disk, no permission): a live run would
   * meet the same wall, so it does not start on its own — the notice offers it.
   */
  | { kind: 'refused'; notice: string; why: string; checkpoint: CheckpointSummary | null }
  | { kind: 'injected'; run: AcceptedRun };

export interface AcceptanceOptions {
  /** Adds the speculated messages to the main conversation. */
  inject: (messages: ChatMessage[]) => AppendResult;
  /** Where the accept's checkpoint is recorded (every replaced file's state before, saved first). */
  checkpoints?: CheckpointStore;
  /** Files the user left out of the accept before Tab: not applied, and said so in the turns. */
  excluded?: readonly string[];
  log?: (line: string) => void;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class SpeculationAcceptance {
  private applied: string[] = [];
  /** Conflicting paths still waiting for the user, with the reason code. */
  private readonly unresolved = new Map<string, string>();
  private readonly overwrite: string[] = [];
  private readonly keep: string[] = [];
  private recording: CheckpointRecording | undefined;

  constructor(
    readonly speculation: Speculation,
    /** True when the run was promoted and its turns are already on screen. */
    readonly alreadyRendered: boolean,
    private readonly options: AcceptanceOptions,
  ) {}

  private get excluded(): string[] {
    return [...(this.options.excluded ?? [])];
  }

  /** The apply options every step shares: the excluded files stay out, the checkpoint records. */
  private applyOptions(): { checkpoint?: CheckpointRecording } {
    return this.recording ? { checkpoint: this.recording } : {};
  }

  /** Applies every file that did not change under the speculation. */
  async start(): Promise<AcceptStep> {
    const speculation = this.speculation;
    this.recording = this.options.checkpoints?.begin({ kind: 'accept', suggestion: speculation.suggestion, runId: speculation.id });
    let result: ApplyResult;
    try {
      result = await speculation.apply({ skip: this.excluded, ...this.applyOptions() });
    } catch (error) {
      return this.failedStep(error);
    }
    this.applied = result.applied;
    if (result.conflicts.length === 0) return this.inject([]);
    for (const conflict of result.conflicts) this.unresolved.set(conflict.path, conflict.reason);
    return { kind: 'conflicts', conflicts: result.conflicts.map((c) => ({ path: c.path, reason: c.message ?? c.reason })) };
  }

  /** Whether `path` is a conflict still waiting for an answer. */
  waitsFor(path: string): boolean {
    return this.unresolved.has(path);
  }

  /** The user's answer for one conflicting file; once every file has one, the rest is applied and injected. */
  async resolve(path: string, choice: ConflictChoice): Promise<AcceptStep> {
    if (!this.unresolved.delete(path)) return { kind: 'waiting' };
    (choice === 'overwrite' ? this.overwrite : this.keep).push(path);
    if (this.unresolved.size > 0) return { kind: 'waiting' };
    if (this.overwrite.length > 0) {
      let forced: ApplyResult;
      try {
        forced = await this.speculation.apply({ overwrite: this.overwrite, skip: [...this.keep, ...this.applied, ...this.excluded], ...this.applyOptions() });
      } catch (error) {
        return this.failedStep(error);
      }
      this.applied = [...this.applied, ...forced.applied];
      for (const conflict of forced.conflicts) if (!this.keep.includes(conflict.path)) this.keep.push(conflict.path);
    }
    return this.inject(this.keep);
  }

  /** What the user is told when they cancel an accept that waits for conflicts. */
  cancelledNotice(): string {
    return `Accept cancelled: ${this.applied.length} file(s) had been applied; the rest were left as they are.`;
  }

  /** The accept is abandoned while conflicts wait: the files applied so far keep their checkpoint. */
  cancel(): Promise<CheckpointSummary | null> {
    return this.finishCheckpoint(this.applied);
  }

  /**
   * An apply that threw. Fail open (nothing half-applied is injected; the request runs live) unless
   * the workspace itself refused, which the live run would meet as well: then the user decides, and
   * nothing runs behind their back. What the disk did take before it stopped is in the checkpoint.
   */
  private async failedStep(error: unknown): Promise<AcceptStep> {
    const partly = (error as { applied?: unknown }).applied;
    const checkpoint = await this.finishCheckpoint([...this.applied, ...(Array.isArray(partly) ? (partly as string[]) : [])]);
    const why = `apply failed: ${String(error)}`;
    if (error instanceof OverlayApplyError && error.liveWouldFail) {
      return { kind: 'refused', why, checkpoint, notice: `Could not apply the speculated changes. ${messageOf(error)} The request was not run live either: it would meet the same problem. Fix it, then run it live.` };
    }
    return { kind: 'run_live', why, checkpoint, notice: `Could not apply the speculated changes (${messageOf(error)}); running the request live instead.` };
  }

  /** Ends the recording with the files really applied; a failure to do so is logged, never fatal. */
  private async finishCheckpoint(applied: readonly string[]): Promise<CheckpointSummary | null> {
    const recording = this.recording;
    this.recording = undefined;
    if (!recording) return null;
    try {
      return await recording.finish(applied);
    } catch (error) {
      // The record stays 'recording' on disk; the next start completes it from the files.
      this.options.log?.(`finishing checkpoint ${recording.id} failed: ${messageOf(error)}`);
      return null;
    }
  }

  private async inject(notApplied: string[]): Promise<AcceptStep> {
    const speculation = this.speculation;
    const snapshot = speculation.snapshot();
    const messages = speculation.messagesForInjection(notApplied, this.excluded);
    const appended = this.options.inject(messages);
    const checkpoint = await this.finishCheckpoint(this.applied);
    if (!appended.ok) {
      return {
        kind: 'run_live',
        why: `could not inject speculated messages: ${appended.reason}`,
        notice: `The speculated turns could not join the chat (${appended.reason}); running the request live.`,
        checkpoint,
      };
    }
    return {
      kind: 'injected',
      run: {
        snapshot,
        messages,
        toolCalls: snapshot.toolCalls.filter((record) => record.executed),
        applied: this.applied,
        notApplied,
        excluded: this.excluded,
        // Only files really applied: one kept as the user had it, or left out, lost its drops with it.
        droppedHunks: speculation.droppedHunks().filter((entry) => this.applied.includes(entry.path)),
        checkpoint,
        timeSavedMs: speculation.timeSavedMs(),
        continuesLive: snapshot.status === 'boundary',
        committedAhead: speculation.committedAhead,
      },
    };
  }
}
