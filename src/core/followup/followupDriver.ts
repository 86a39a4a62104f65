// The follow-up life cycle of the seed, for one chat: after each settled turn a suggestion is
// predicted and shown, its speculation runs ahead while it is shown, and Tab accepts it (applied,
// promoted to the foreground, or run live); typing, a new turn or a setting aborts it.
import type { CheckpointStore } from '../checkpoints';
import type { TurnOutcome } from '../chat/events';
import type { ToolRegistry } from '../chat/toolRegistry';
import type { LlmClient } from '../llm/llmClient';
import type { ToolContext } from '../tools/types';
import { AcceptFlow } from './acceptFlow';
import { FollowupController, systemClock, type AcceptMethod, type FollowupClock } from './followupState';
import type { FollowedChat, FollowupConfig, FollowupEvent, FollowupStats } from './followupPorts';
import { ForkFailures, forkRunnerFor } from './forkFailures';
import { startSpeculation, type Speculation, type SpeculationOverlay, type SpeculationSnapshot } from './speculation';
import { generateSuggestion, type SuggestionResult } from './suggestionGenerator';
import { TabReview } from './tabReview';

export interface FollowupDriverOptions {
  llm: LlmClient;
  tools: ToolRegistry;
  /** Ports for the speculation's tools (the real workspace under its overlay; the sub-agent). */
  toolContext: ToolContext;
  classifyShell: (command: string, directory?: string) => Promise<{ readOnly: boolean; reason: string }>;
  createOverlay: () => Promise<SpeculationOverlay>;
  checkpoints?: CheckpointStore;
  clock?: FollowupClock;
  stats?: FollowupStats;
  config: () => FollowupConfig;
  chat: FollowedChat;
  emit: (event: FollowupEvent) => void;
  /** Tab on a suggestion without a usable speculation: it is sent as the user's message. */
  submit: (text: string) => Promise<TurnOutcome | undefined>;
  log: (line: string) => void;
}

export class FollowupDriver {
  private readonly followup: FollowupController;
  private readonly forks: ForkFailures;
  private readonly accept: AcceptFlow;
  readonly review: TabReview;
  private speculation: Speculation | undefined;
  private unsubscribeSpeculation: (() => void) | undefined;
  private suggestionAbort: AbortController | undefined;
  /** The chat input holds a draft (the webview reports only that, never the text). */
  private userTyping = false;
  /** An accepted run whose pipelined suggestion was still being predicted at Tab. */
  private pipelineSource: Speculation | undefined;
  /** Runs whose tokens are already counted (a run is counted once, however it ends). */
  private readonly countedRuns = new WeakSet<Speculation>();
  private disposed = false;
  /** Aborts started by abortInBackground and not finished yet. */
  private readonly aborting = new Set<Promise<void>>();

  constructor(private readonly options: FollowupDriverOptions) {
    this.forks = new ForkFailures(options.log, (reason) => options.emit({ type: 'fork_unavailable', reason }));
    this.followup = new FollowupController(options.clock ?? systemClock, {
      onVisible: (text) => this.onSuggestionVisible(text),
      onHidden: () => options.emit({ type: 'suggestion', text: null }),
      onOutcome: (event) => options.stats?.recordOutcome(event),
      onCallbackError: (error) => options.log(`suggestion callback failed: ${String(error)}`),
    });
    this.review = new TabReview(() => this.speculation, options.toolContext.fs, () => this.accept.pending !== undefined || this.accept.promoted === this.speculation);
    this.accept = new AcceptFlow({
      ...options,
      excludedFiles: (runId) => this.review.excludedFiles(runId),
      release: (speculation) => this.release(speculation),
      showSuggestion: (text) => this.followup.set(text, { immediate: true }),
      showPipelinedWhenKnown: (speculation) => this.showPipelinedWhenKnown(speculation),
    });
  }

  get visibleSuggestion(): string | null {
    return this.followup.visibleText;
  }

  get currentSpeculation(): SpeculationSnapshot | null {
    return this.speculation?.snapshot() ?? null;
  }

  /** The overlay of the current speculation, for the speculation: file system. */
  get currentOverlay(): SpeculationOverlay | undefined {
    return this.speculation?.overlayFs;
  }

  /** An accept waits for the user's answers about files changed since the speculation looked. */
  get conflictsPending(): boolean {
    return this.accept.pending !== undefined;
  }

  /** The model background work runs on. */
  private get backgroundModel(): string {
    const config = this.options.config();
    return config.fastModel || config.model;
  }

  // ── suggestions ──────────────────────────────────────────────────────────────────────────────

  /** The chat input became non-empty (or empty again). Starting to type dismisses the suggestion and aborts its speculation. */
  setUserTyping(typing: boolean): void {
    const started = typing && !this.userTyping;
    this.userTyping = typing;
    if (started) this.dismissSuggestion();
  }

  /** Typing, pasting, Escape: the suggestion goes and its speculation is aborted, overlay deleted. */
  dismissSuggestion(): void {
    this.suggestionAbort?.abort();
    this.followup.dismiss();
    this.followup.clear();
    this.abortInBackground('suggestion dismissed');
  }

  /** Before anything changes the chat or the workspace (a new turn, an edit, an undo): nothing stays predicted from before. */
  async clearAhead(why: string, options: { stopPrediction?: boolean } = {}): Promise<void> {
    if (options.stopPrediction) this.suggestionAbort?.abort();
    this.followup.clear();
    await this.abortSpeculation(why);
  }

  /** A live turn settled: the next prompt is predicted from it. */
  async suggestNext(): Promise<void> {
    this.suggestionAbort?.abort();
    const controller = new AbortController();
    this.suggestionAbort = controller;
    const { chat } = this.options;
    const config = this.options.config();
    const result: SuggestionResult = await generateSuggestion({
      history: chat.messages,
      fork: forkRunnerFor(this.options.llm, () => chat.forkParams(), () => this.options.config().fastModel),
      signal: controller.signal,
      conditions: {
        enabled: config.suggestionsEnabled,
        approvalPending: chat.approvalPending,
        lastTurn: chat.lastTurn,
        planMode: config.approvalMode === 'plan',
        userTyping: this.userTyping,
      },
    });
    if (this.suggestionAbort === controller) this.suggestionAbort = undefined;
    this.noteGeneration(result);
    if (result.kind !== 'suggestion' || controller.signal.aborted || this.disposed) return;
    // The user may have started typing or sent something while the fork ran.
    if (this.userTyping || chat.busy) return;
    this.followup.set(result.suggestion);
  }

  private noteGeneration(result: SuggestionResult): void {
    this.options.stats?.recordGeneration(result);
    if ('usage' in result) this.options.chat.recordUsage('suggestion', this.backgroundModel, result.usage);
    this.forks.note(result);
  }

  private onSuggestionVisible(text: string): void {
    this.options.stats?.recordShown();
    this.options.emit({ type: 'suggestion', text });
    if (this.speculation?.suggestion === text && this.speculation.snapshot().status !== 'aborted') return;
    this.startSpeculation(text);
  }

  // ── speculation ──────────────────────────────────────────────────────────────────────────────

  private startSpeculation(suggestion: string): void {
    const { chat, emit } = this.options;
    const config = this.options.config();
    const params = chat.forkParams();
    if (!config.speculationEnabled || !params) return;
    this.abortInBackground('replaced');
    const speculation = startSpeculation(suggestion, {
      llm: this.options.llm,
      params,
      ...(config.fastModel ? { model: config.fastModel } : {}),
      tools: this.options.tools,
      approvalMode: config.approvalMode,
      createOverlay: this.options.createOverlay,
      classifyShell: this.options.classifyShell,
      toolContext: this.options.toolContext,
      maxTurns: config.maxTurns,
      maxMessages: config.maxMessages,
      generatePipelinedSuggestion: async (conversation, signal) => {
        const result = await generateSuggestion({
          history: conversation,
          // Same prefix as the main chat, then the suggestion and the speculated turns.
          fork: forkRunnerFor(this.options.llm, () => chat.forkParams(), () => this.options.config().fastModel, conversation.slice(params.history.length)),
          signal,
          conditions: { enabled: true, approvalPending: false, lastTurn: 'completed', planMode: false, userTyping: false },
        });
        this.noteGeneration(result);
        return result.kind === 'suggestion' ? result.suggestion : null;
      },
      log: this.options.log,
    });
    this.speculation = speculation;
    this.options.stats?.recordSpeculationStarted();
    let lastStatus = 'running';
    this.unsubscribeSpeculation = speculation.subscribe((event) => {
      if (this.accept.promoted === speculation) emit({ type: 'speculation_progress', event });
      if (this.speculation !== speculation) return;
      if (event.type === 'status') {
        const snapshot = event.snapshot;
        if (snapshot.status !== lastStatus) {
          lastStatus = snapshot.status;
          this.recordFinish(snapshot);
          if (snapshot.status !== 'running') this.countRunUsage(speculation);
        }
        emit({ type: 'speculation', snapshot });
      } else if (event.type === 'tool_end' || event.type === 'tool_start') {
        emit({ type: 'speculation', snapshot: speculation.snapshot() });
      }
    });
    emit({ type: 'speculation', snapshot: speculation.snapshot() });
  }

  private recordFinish(snapshot: SpeculationSnapshot): void {
    const stats = this.options.stats;
    if (!stats) return;
    if (snapshot.status === 'completed') stats.recordSpeculationCompleted();
    else if (snapshot.status === 'boundary') stats.recordSpeculationBoundary(snapshot.boundary?.type ?? 'unknown');
    else if (snapshot.status === 'failed') stats.recordSpeculationFailed();
    if (snapshot.status !== 'running') stats.recordForkUsage(snapshot.usage);
  }

  private countRunUsage(speculation: Speculation): void {
    if (this.countedRuns.has(speculation)) return;
    this.countedRuns.add(speculation);
    this.options.chat.recordUsage('speculation', this.backgroundModel, speculation.snapshot().usage);
  }

  /** Aborts the current speculation: closes its request, deletes its overlay. */
  async abortSpeculation(why = 'aborted'): Promise<void> {
    // An accepted run still predicting its next suggestion: the user moved on, so that call goes too.
    const waiting = this.pipelineSource;
    this.pipelineSource = undefined;
    if (waiting) void waiting.abort().catch(() => undefined);
    const speculation = this.speculation;
    if (!speculation || this.accept.busyWith(speculation)) return;
    this.speculation = undefined;
    this.unsubscribeSpeculation?.();
    this.unsubscribeSpeculation = undefined;
    // Thrown away before Tab, still running or already finished: to the user both are an abort.
    // (A failed run was counted as failed; an accepted one never comes here.)
    const status = speculation.snapshot().status;
    await speculation.abort();
    this.countRunUsage(speculation);
    if (status === 'running' || status === 'completed' || status === 'boundary') this.options.stats?.recordSpeculationAborted();
    this.options.log(`speculation ${speculation.id} aborted: ${why}`);
    this.options.emit({ type: 'speculation', snapshot: null });
  }

  /** An abort the caller does not wait for (typing, a new suggestion, a setting); dispose() waits for it, so no overlay outlives the chat. */
  private abortInBackground(why: string): void {
    const aborting = this.abortSpeculation(why).catch((error: unknown) => this.options.log(`aborting the speculation failed: ${String(error)}`));
    this.aborting.add(aborting);
    void aborting.finally(() => this.aborting.delete(aborting));
  }

  /** The run is no longer the current one (accepted, failed, discarded): its events stop. */
  private release(speculation: Speculation): void {
    if (this.speculation !== speculation) return;
    this.speculation = undefined;
    this.unsubscribeSpeculation?.();
    this.unsubscribeSpeculation = undefined;
  }

  // ── Tab ──────────────────────────────────────────────────────────────────────────────────────

  /**
   * Tab (or Enter when enabled) on the visible suggestion. Completed → applied and shown at once;
   * boundary → the finished part applied, then the agent continues live; running → promoted to the
   * foreground; no usable speculation → the suggestion is sent as a normal message.
   */
  async acceptSpeculation(method: Exclude<AcceptMethod, 'right'>): Promise<void> {
    if (this.options.chat.busy || this.accept.pending) return;
    const text = this.followup.accept(method);
    // Counted once, by the follow-up controller's 'accepted' outcome (stats.recordOutcome).
    if (text === null) return;
    await this.accept.accept(this.speculation, text);
  }

  /** The user's answer for one conflicting file; when none is left the accept completes. */
  resolveConflict(path: string, choice: 'overwrite' | 'keep-mine'): Promise<void> {
    return this.accept.resolveConflict(path, choice);
  }

  /** The user's "run it live" on a refused accept's notice. */
  runRefusedLive(): Promise<TurnOutcome | undefined> {
    return this.accept.runRefusedLive();
  }

  /** Stop: a promoted run stops with the live turn. */
  stopPromoted(): void {
    this.accept.promoted?.abort().catch(() => undefined);
  }

  /**
   * Tab came after the run finished but before its next suggestion was predicted: the prediction
   * still counts (Tab, Tab, Tab), so it is shown when it arrives — unless the user moved on first.
   */
  private async showPipelinedWhenKnown(speculation: Speculation): Promise<void> {
    this.pipelineSource = speculation;
    const final = await speculation.done;
    if (this.pipelineSource !== speculation) return;
    this.pipelineSource = undefined;
    if (!final.pipelinedSuggestion || this.disposed || this.options.chat.busy || this.accept.pending || this.speculation) return;
    if (this.userTyping || this.followup.visibleText !== null || this.followup.pendingText !== null) return;
    this.followup.set(final.pipelinedSuggestion, { immediate: true });
  }

  /** Palette "Discard" on a pending conflict or a ready run: nothing is applied. */
  async discard(): Promise<void> {
    if (await this.accept.discardPending()) return;
    this.followup.clear();
    await this.abortSpeculation('discarded');
  }

  // ── settings and lifecycle ───────────────────────────────────────────────────────────────────

  /** New settings: a lasting fork failure is worth saying again; `rebuilt` aborts the speculation built on the old ones. */
  configChanged(rebuilt: boolean): void {
    this.forks.forget();
    if (rebuilt) this.abortInBackground('settings changed');
    if (!this.options.config().suggestionsEnabled) this.followup.clear();
  }

  /** New chat: its suggestion, speculation and any accept waiting for answers go. */
  async reset(): Promise<void> {
    this.forks.forget();
    this.suggestionAbort?.abort();
    this.followup.clear();
    await this.accept.reset();
    await this.abortSpeculation('new chat');
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.followup.cleanup();
    this.suggestionAbort?.abort();
    const speculation = this.speculation ?? this.accept.promoted ?? this.accept.pending?.speculation;
    const waiting = this.pipelineSource;
    this.pipelineSource = undefined;
    if (waiting) await waiting.abort();
    await this.accept.dispose();
    if (speculation) await speculation.abort();
    this.speculation = undefined;
    await Promise.all([...this.aborting]);
  }
}
