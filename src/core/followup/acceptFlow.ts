// Tab on a shown suggestion, from the moment it is pressed: a finished run applied (asking about files
// changed since), a running one promoted to the foreground, a refused or failed one run live (or
// offered), and what follows an accept — the turns injected, the boundary continued, the next suggestion.
import type { CheckpointStore } from '../checkpoints';
import type { TurnOutcome } from '../chat/events';
import { SpeculationAcceptance, type AcceptedRun, type AcceptStep, type ConflictChoice } from './acceptance';
import type { FollowedChat, FollowupEvent, FollowupStats } from './followupPorts';
import type { Speculation } from './speculation';

export interface AcceptFlowOptions {
  chat: FollowedChat;
  emit: (event: FollowupEvent) => void;
  log: (line: string) => void;
  checkpoints?: CheckpointStore;
  stats?: FollowupStats;
  /** Tab without a usable speculation: the suggestion is sent as the user's message. */
  submit: (text: string) => Promise<TurnOutcome | undefined>;
  /** The files the user left out of the run's accept. */
  excludedFiles: (runId: string) => string[];
  /** The run is no longer the driver's current one. */
  release: (speculation: Speculation) => void;
  /** The accepted run's pipelined suggestion, shown at once. */
  showSuggestion: (text: string) => void;
  /** The accepted run is still predicting its next suggestion: show it when it arrives. */
  showPipelinedWhenKnown: (speculation: Speculation) => Promise<void>;
}

export class AcceptFlow {
  /** An accept waiting for the user's answers to its conflicts. */
  pending: SpeculationAcceptance | undefined;
  /** A run Tab pressed while it still ran: it goes on in the foreground. */
  promoted: Speculation | undefined;
  /** An accept the workspace refused: its request waits for the user's "run it live". */
  private refused: { text: string; alreadyRendered: boolean } | undefined;

  constructor(private readonly options: AcceptFlowOptions) {}

  /** The run is being accepted (promoted, or waiting for answers): nothing may abort it meanwhile. */
  busyWith(speculation: Speculation | undefined): boolean {
    return speculation !== undefined && (this.promoted === speculation || this.pending?.speculation === speculation);
  }

  /** Tab on the suggestion `text`; `speculation` is the driver's current run, if any. */
  async accept(speculation: Speculation | undefined, text: string): Promise<void> {
    if (!speculation || speculation.suggestion !== text) {
      await this.options.submit(text);
      return;
    }
    const status = speculation.snapshot().status;
    if (status === 'completed' || status === 'boundary') {
      await this.apply(speculation, false);
    } else if (status === 'running') {
      await this.promote(speculation);
    } else {
      this.options.release(speculation);
      await speculation.abort();
      await this.options.submit(text);
    }
  }

  private async promote(speculation: Speculation): Promise<void> {
    const { chat, emit } = this.options;
    this.promoted = speculation;
    chat.setBusy(true);
    emit({ type: 'speculation_promoted', snapshot: speculation.snapshot(), historyStart: chat.messages.length });
    const final = await speculation.done;
    chat.setBusy(false);
    if (final.status === 'completed' || final.status === 'boundary') {
      await this.apply(speculation, true);
      this.promoted = undefined;
      return;
    }
    // Failed or stopped: nothing was applied; run the request live so the user's Tab still counts.
    this.promoted = undefined;
    this.options.release(speculation);
    emit({ type: 'speculation', snapshot: null });
    if (final.status === 'failed') {
      emit({ type: 'notice', text: 'Running ahead failed, so the request runs live now.' });
      chat.settleLastTurn();
      // The promoted run already showed the suggestion as the user's message.
      await chat.runShown(speculation.suggestion);
    }
  }

  private async apply(speculation: Speculation, alreadyRendered: boolean): Promise<void> {
    const acceptance = new SpeculationAcceptance(speculation, alreadyRendered, {
      inject: (messages) => this.options.chat.appendMessages(messages),
      ...(this.options.checkpoints ? { checkpoints: this.options.checkpoints } : {}),
      excluded: this.options.excludedFiles(speculation.id),
      log: this.options.log,
    });
    await this.afterStep(acceptance, await acceptance.start());
  }

  /** The user's answer for one conflicting file; when none is left the accept completes. */
  async resolveConflict(path: string, choice: ConflictChoice): Promise<void> {
    const pending = this.pending;
    if (!pending || !pending.waitsFor(path)) return;
    await this.afterStep(pending, await pending.resolve(path, choice));
  }

  private async afterStep(acceptance: SpeculationAcceptance, step: AcceptStep): Promise<void> {
    const { chat, emit, log } = this.options;
    const speculation = acceptance.speculation;
    switch (step.kind) {
      case 'waiting':
        return;
      case 'conflicts':
        this.pending = acceptance;
        emit({ type: 'conflicts', runId: speculation.id, conflicts: step.conflicts });
        return;
      case 'run_live':
        this.pending = undefined;
        log(step.why);
        emit({ type: 'notice', text: step.notice });
        if (step.checkpoint) emit({ type: 'turn_recorded', point: chat.addPoint(step.checkpoint), checkpoint: step.checkpoint });
        await this.discard(speculation);
        if (acceptance.alreadyRendered) await chat.runShown(speculation.suggestion);
        else await chat.sendLive(speculation.suggestion);
        return;
      case 'refused':
        // The live run would meet the same full disk or read-only folder: offered, never started unasked.
        this.pending = undefined;
        log(step.why);
        this.refused = { text: speculation.suggestion, alreadyRendered: acceptance.alreadyRendered };
        emit({ type: 'notice', text: step.notice, offer: 'run_live' });
        if (step.checkpoint) emit({ type: 'turn_recorded', point: chat.addPoint(step.checkpoint), checkpoint: step.checkpoint });
        await this.discard(speculation);
        return;
      case 'injected':
        this.pending = undefined;
        await this.finish(speculation, step.run, acceptance.alreadyRendered);
    }
  }

  /** The user's "run it live" on a refused accept's notice: the request runs as a normal turn now. */
  async runRefusedLive(): Promise<TurnOutcome | undefined> {
    const refused = this.refused;
    if (!refused || this.options.chat.busy || this.pending) return undefined;
    this.refused = undefined;
    if (refused.alreadyRendered) return this.options.chat.runShown(refused.text);
    return this.options.submit(refused.text);
  }

  private async finish(speculation: Speculation, run: AcceptedRun, alreadyRendered: boolean): Promise<void> {
    const { chat, emit } = this.options;
    this.options.stats?.recordTimeSaved(run.timeSavedMs);
    emit({
      type: 'speculation_accepted',
      runId: speculation.id,
      suggestion: speculation.suggestion,
      messages: run.messages,
      historyStart: chat.messages.length - run.messages.length,
      toolCalls: run.toolCalls,
      applied: run.applied,
      notApplied: run.notApplied,
      timeSavedMs: run.timeSavedMs,
      alreadyRendered,
      continuesLive: run.continuesLive,
      excluded: run.excluded,
      ...(run.droppedHunks.length > 0 ? { droppedHunks: run.droppedHunks } : {}),
      point: chat.addPoint(run.checkpoint),
      checkpoint: run.checkpoint,
      ...(run.committedAhead ? { committedAhead: { moved: run.committedAhead.moved, ...(run.committedAhead.indexNote ? { indexNote: run.committedAhead.indexNote } : {}) } } : {}),
    });
    await this.discard(speculation);
    if (run.continuesLive && chat.canResume()) {
      // The boundary call goes through approval as usual from here on.
      chat.settleLastTurn();
      await chat.resume(speculation.suggestion);
      return;
    }
    chat.forkFromCurrentHistory();
    chat.settleLastTurn();
    if (run.snapshot.pipelinedSuggestion) this.options.showSuggestion(run.snapshot.pipelinedSuggestion);
    else if (run.snapshot.status === 'completed') void this.options.showPipelinedWhenKnown(speculation);
  }

  /** The run is done with (accepted, refused, discarded): its overlay goes. */
  private async discard(speculation: Speculation): Promise<void> {
    this.options.release(speculation);
    await speculation.disposeOverlay();
    this.options.emit({ type: 'speculation', snapshot: null });
  }

  /** Palette "Discard" on an accept waiting for answers: nothing more is applied. False when none waits. */
  async discardPending(): Promise<boolean> {
    const pending = this.pending;
    if (!pending) return false;
    this.pending = undefined;
    this.options.emit({ type: 'notice', text: pending.cancelledNotice() });
    const checkpoint = await pending.cancel();
    if (checkpoint) this.options.emit({ type: 'turn_recorded', point: this.options.chat.addPoint(checkpoint), checkpoint });
    await this.discard(pending.speculation);
    return true;
  }

  /** New chat: a refused request is forgotten, an accept waiting for answers cancelled. */
  async reset(): Promise<void> {
    this.refused = undefined;
    const pending = this.pending;
    this.pending = undefined;
    if (pending) {
      await pending.cancel();
      await this.discard(pending.speculation);
    }
  }

  async dispose(): Promise<void> {
    this.promoted = undefined;
    const pending = this.pending;
    this.pending = undefined;
    await pending?.cancel();
  }
}
