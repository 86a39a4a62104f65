// ChatSession: one conversation, its visible suggestion and its one speculation. The single owner of
// that state: it publishes events with snapshots, and the UI (VS Code or CLI) only calls its methods.
import { ApprovalScheduler, type ApprovalPrompter, type ApprovalMode } from './chat/approvals';
import { Conversation } from './chat/conversation';
import type { ChatEvent, TurnOutcome } from './chat/events';
import type { ChatMessage } from './messages';
import type { ToolRegistry } from './chat/toolRegistry';
import { SpeculationAcceptance, type AcceptedRun, type AcceptStep, type ConflictChoice } from './followup/acceptance';
import { FollowupController, systemClock, type AcceptMethod, type FollowupClock } from './followup/followupState';
import { CacheSafeParamsStore, runForkedQuery } from './followup/forkedQuery';
import {
  startSpeculation,
  type Speculation,
  type SpeculationEvent,
  type SpeculationOverlay,
  type SpeculationSnapshot,
  type ToolCallRecord,
} from './followup/speculation';
import { forkRunnerFromQuery, generateSuggestion, type SuggestionResult } from './followup/suggestionGenerator';
import type { LlmClient } from './llm/llmClient';
import type { SpeculateStats } from './stats/speculateStats';
import type { ToolContext } from './tools/types';

export interface SessionConfig {
  model: string;
  /** Model for suggestions and speculation; empty = the main model. */
  fastModel: string;
  approvalMode: ApprovalMode;
  suggestionsEnabled: boolean;
  speculationEnabled: boolean;
  maxTurns: number;
  maxMessages: number;
}

export interface ChatSessionOptions {
  llm: LlmClient;
  config: SessionConfig;
  systemPrompt: string;
  tools: ToolRegistry;
  /** Ports for tools: fs is the real workspace; the session sets signals. */
  toolContext: ToolContext;
  prompter: ApprovalPrompter;
  classifyShell: (command: string) => Promise<{ readOnly: boolean; reason: string }>;
  createOverlay: () => Promise<SpeculationOverlay>;
  clock?: FollowupClock;
  stats?: SpeculateStats;
  log?: (line: string) => void;
}

/** What the session tells its UI. Plain data, safe to post to a webview. */
export type SessionEvent =
  | { type: 'chat'; event: ChatEvent }
  | { type: 'user_message'; text: string }
  | { type: 'busy'; busy: boolean }
  | { type: 'suggestion'; text: string | null }
  | { type: 'speculation'; snapshot: SpeculationSnapshot | null }
  /** Tab on a still-running speculation: it continues in the foreground; its progress follows. */
  | { type: 'speculation_promoted'; snapshot: SpeculationSnapshot }
  | { type: 'speculation_progress'; event: SpeculationEvent }
  | {
      type: 'speculation_accepted';
      runId: string;
      suggestion: string;
      messages: ChatMessage[];
      toolCalls: ToolCallRecord[];
      applied: string[];
      notApplied: string[];
      timeSavedMs: number;
      /** True when the run was promoted and its turns are already on screen. */
      alreadyRendered: boolean;
      /** A boundary run: the main agent continues live from here. */
      continuesLive: boolean;
    }
  | { type: 'conflicts'; runId: string; conflicts: { path: string; reason: string }[] }
  | { type: 'notice'; text: string };

export type { ConflictChoice } from './followup/acceptance';

export class ChatSession {
  private config: SessionConfig;
  private conversation: Conversation;
  private readonly cacheStore = new CacheSafeParamsStore();
  private readonly approvals: ApprovalScheduler;
  private readonly followup: FollowupController;
  private readonly listeners = new Set<(event: SessionEvent) => void>();
  private speculation: Speculation | undefined;
  private unsubscribeSpeculation: (() => void) | undefined;
  private suggestionAbort: AbortController | undefined;
  private lastTurn: 'completed' | 'failed' | 'cancelled' = 'completed';
  /** The chat input holds a draft (the webview reports only that, never the text). */
  private userTyping = false;
  private approvalPending = false;
  /** An accept waiting for the user's answers to its conflicts. */
  private pendingAccept: SpeculationAcceptance | undefined;
  private promoted: Speculation | undefined;
  /** An accepted run whose pipelined suggestion was still being predicted at Tab. */
  private pipelineSource: Speculation | undefined;
  private turnRunning = false;
  private disposed = false;

  constructor(private readonly options: ChatSessionOptions) {
    this.config = { ...options.config };
    this.approvals = new ApprovalScheduler({ mode: this.config.approvalMode, isReadOnly: async (command) => (await options.classifyShell(command)).readOnly });
    this.conversation = this.createConversation();
    this.followup = new FollowupController(options.clock ?? systemClock, {
      onVisible: (text) => this.onSuggestionVisible(text),
      onHidden: () => this.emit({ type: 'suggestion', text: null }),
      onOutcome: (event) => options.stats?.recordOutcome(event),
      onCallbackError: (error) => this.log(`suggestion callback failed: ${String(error)}`),
    });
  }

  private createConversation(history?: readonly ChatMessage[]): Conversation {
    const prompter: ApprovalPrompter = {
      request: async (request) => {
        this.approvalPending = true;
        try {
          return await this.options.prompter.request(request);
        } finally {
          this.approvalPending = false;
        }
      },
    };
    const conversation = new Conversation({
      llm: this.options.llm,
      model: this.config.model,
      systemPrompt: this.options.systemPrompt,
      tools: this.options.tools,
      toolContext: this.options.toolContext,
      approvals: this.approvals,
      prompter,
      onSettled: (request) => this.cacheStore.save(request),
      ...(history ? { history } : {}),
    });
    conversation.subscribe((event) => this.emit({ type: 'chat', event }));
    return conversation;
  }

  subscribe(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: SessionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.log(`session listener failed: ${String(error)}`);
      }
    }
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  get messages(): ChatMessage[] {
    return this.conversation.messages;
  }

  get busy(): boolean {
    return this.turnRunning;
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

  get cacheSafeParams() {
    return this.cacheStore.get();
  }

  // ── the main path ────────────────────────────────────────────────────────────────────────────

  /** The user sends a message: any suggestion and speculation go, then a live turn runs. */
  async submit(text: string): Promise<TurnOutcome | undefined> {
    const trimmed = text.trim();
    if (trimmed === '' || this.turnRunning || this.pendingAccept) return undefined;
    this.followup.clear();
    await this.abortSpeculation('new main turn');
    this.emit({ type: 'user_message', text: trimmed });
    return this.runTurn(() => this.conversation.send(trimmed));
  }

  /** Retries the last failed turn, keeping the user's message and finished tool results. */
  async retry(): Promise<TurnOutcome | undefined> {
    if (this.turnRunning || !this.conversation.canResume()) return undefined;
    await this.abortSpeculation('retry');
    return this.runTurn(() => this.conversation.retryLastTurn());
  }

  /** Stops the running turn. */
  stop(): void {
    this.conversation.abort();
    this.promoted?.abort().catch(() => undefined);
  }

  private async runTurn(run: () => Promise<TurnOutcome>): Promise<TurnOutcome> {
    this.turnRunning = true;
    this.emit({ type: 'busy', busy: true });
    let outcome: TurnOutcome;
    try {
      outcome = await run();
    } finally {
      this.turnRunning = false;
      this.emit({ type: 'busy', busy: false });
    }
    this.lastTurn = outcome.status === 'done' ? 'completed' : outcome.status === 'error' ? 'failed' : 'cancelled';
    if (outcome.status === 'done') void this.suggestNext();
    return outcome;
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
    void this.abortSpeculation('suggestion dismissed');
  }

  private forkRunner(extraHistory: readonly ChatMessage[] = []) {
    return forkRunnerFromQuery(async (extraMessages, signal) => {
      const params = this.cacheStore.get();
      if (!params) throw new Error('no conversation to fork from yet');
      return runForkedQuery({
        params,
        llm: this.options.llm,
        extraMessages: [...extraHistory, ...extraMessages],
        ...(this.config.fastModel ? { model: this.config.fastModel } : {}),
        signal,
      });
    });
  }

  private async suggestNext(): Promise<void> {
    this.suggestionAbort?.abort();
    const controller = new AbortController();
    this.suggestionAbort = controller;
    const result: SuggestionResult = await generateSuggestion({
      history: this.conversation.messages,
      fork: this.forkRunner(),
      signal: controller.signal,
      conditions: {
        enabled: this.config.suggestionsEnabled,
        approvalPending: this.approvalPending,
        lastTurn: this.lastTurn,
        planMode: this.config.approvalMode === 'plan',
        userTyping: this.userTyping,
      },
    });
    if (this.suggestionAbort === controller) this.suggestionAbort = undefined;
    this.options.stats?.recordGeneration(result);
    if (result.kind === 'failed') this.log(`suggestion ${result.failed}: ${result.message}`);
    if (result.kind !== 'suggestion' || controller.signal.aborted || this.disposed) return;
    // The user may have started typing or sent something while the fork ran.
    if (this.userTyping || this.turnRunning) return;
    this.followup.set(result.suggestion);
  }

  private onSuggestionVisible(text: string): void {
    this.options.stats?.recordShown();
    this.emit({ type: 'suggestion', text });
    if (this.speculation?.suggestion === text && this.speculation.snapshot().status !== 'aborted') return;
    this.beginSpeculation(text);
  }

  // ── speculation ──────────────────────────────────────────────────────────────────────────────

  private beginSpeculation(suggestion: string): void {
    const params = this.cacheStore.get();
    if (!this.config.speculationEnabled || !params) return;
    void this.abortSpeculation('replaced');
    const speculation = startSpeculation(suggestion, {
      llm: this.options.llm,
      params,
      ...(this.config.fastModel ? { model: this.config.fastModel } : {}),
      tools: this.options.tools,
      approvalMode: this.config.approvalMode,
      createOverlay: this.options.createOverlay,
      classifyShell: this.options.classifyShell,
      toolContext: this.options.toolContext,
      maxTurns: this.config.maxTurns,
      maxMessages: this.config.maxMessages,
      generatePipelinedSuggestion: async (conversation, signal) => {
        const result = await generateSuggestion({
          history: conversation,
          // Same prefix as the main chat, then the suggestion and the speculated turns.
          fork: this.forkRunner(conversation.slice(params.history.length)),
          signal,
          conditions: { enabled: true, approvalPending: false, lastTurn: 'completed', planMode: false, userTyping: false },
        });
        this.options.stats?.recordGeneration(result);
        return result.kind === 'suggestion' ? result.suggestion : null;
      },
      log: (line) => this.log(line),
    });
    this.speculation = speculation;
    this.options.stats?.recordSpeculationStarted();
    let lastStatus = 'running';
    this.unsubscribeSpeculation = speculation.subscribe((event) => {
      if (this.promoted === speculation) this.emit({ type: 'speculation_progress', event });
      if (this.speculation !== speculation) return;
      if (event.type === 'status') {
        const snapshot = event.snapshot;
        if (snapshot.status !== lastStatus) {
          lastStatus = snapshot.status;
          this.recordFinish(snapshot);
        }
        this.emit({ type: 'speculation', snapshot });
      } else if (event.type === 'tool_end' || event.type === 'tool_start') {
        this.emit({ type: 'speculation', snapshot: speculation.snapshot() });
      }
    });
    this.emit({ type: 'speculation', snapshot: speculation.snapshot() });
  }

  private recordFinish(snapshot: SpeculationSnapshot): void {
    const stats = this.options.stats;
    if (!stats) return;
    if (snapshot.status === 'completed') stats.recordSpeculationCompleted();
    else if (snapshot.status === 'boundary') stats.recordSpeculationBoundary(snapshot.boundary?.type ?? 'unknown');
    else if (snapshot.status === 'failed') stats.recordSpeculationFailed();
    if (snapshot.status !== 'running') stats.recordForkUsage(snapshot.usage);
  }

  /** Aborts the current speculation: closes its request, deletes its overlay. */
  async abortSpeculation(why = 'aborted'): Promise<void> {
    // An accepted run still predicting its next suggestion: the user moved on, so that call goes too.
    const waiting = this.pipelineSource;
    this.pipelineSource = undefined;
    if (waiting) void waiting.abort().catch(() => undefined);
    const speculation = this.speculation;
    if (!speculation || this.promoted === speculation || this.pendingAccept?.speculation === speculation) return;
    this.speculation = undefined;
    this.unsubscribeSpeculation?.();
    this.unsubscribeSpeculation = undefined;
    // Thrown away before Tab, still running or already finished: to the user both are an abort.
    // (A failed run was counted as failed; an accepted one never comes here.)
    const status = speculation.snapshot().status;
    await speculation.abort();
    if (status === 'running' || status === 'completed' || status === 'boundary') this.options.stats?.recordSpeculationAborted();
    this.log(`speculation ${speculation.id} aborted: ${why}`);
    this.emit({ type: 'speculation', snapshot: null });
  }

  /**
   * Tab (or Enter when enabled) on the visible suggestion. Completed → applied and shown at once;
   * boundary → the finished part applied, then the agent continues live; running → promoted to the
   * foreground; no usable speculation → the suggestion is sent as a normal message.
   */
  async acceptSuggestion(method: Exclude<AcceptMethod, 'right'>): Promise<void> {
    if (this.turnRunning || this.pendingAccept) return;
    const text = this.followup.accept(method);
    // Counted once, by the follow-up controller's 'accepted' outcome (stats.recordOutcome).
    if (text === null) return;
    const speculation = this.speculation;
    if (!speculation || speculation.suggestion !== text) {
      await this.submit(text);
      return;
    }
    const status = speculation.snapshot().status;
    if (status === 'completed' || status === 'boundary') {
      await this.applyAccepted(speculation, false);
    } else if (status === 'running') {
      await this.promote(speculation);
    } else {
      this.speculation = undefined;
      await speculation.abort();
      await this.submit(text);
    }
  }

  private async promote(speculation: Speculation): Promise<void> {
    this.promoted = speculation;
    this.turnRunning = true;
    this.emit({ type: 'busy', busy: true });
    this.emit({ type: 'speculation_promoted', snapshot: speculation.snapshot() });
    const final = await speculation.done;
    this.turnRunning = false;
    this.emit({ type: 'busy', busy: false });
    if (final.status === 'completed' || final.status === 'boundary') {
      await this.applyAccepted(speculation, true);
      this.promoted = undefined;
      return;
    }
    // Failed or stopped: nothing was applied; run the request live so the user's Tab still counts.
    this.promoted = undefined;
    this.speculation = undefined;
    this.unsubscribeSpeculation?.();
    this.emit({ type: 'speculation', snapshot: null });
    if (final.status === 'failed') {
      this.emit({ type: 'notice', text: 'Running ahead failed, so the request runs live now.' });
      this.lastTurn = 'completed';
      await this.runTurn(() => this.conversation.send(speculation.suggestion));
    }
  }

  private async applyAccepted(speculation: Speculation, alreadyRendered: boolean): Promise<void> {
    const acceptance = new SpeculationAcceptance(speculation, alreadyRendered, { inject: (messages) => this.conversation.appendMessages(messages) });
    await this.afterAcceptStep(acceptance, await acceptance.start());
  }

  /** The user's answer for one conflicting file; when none is left the accept completes. */
  async resolveConflict(path: string, choice: ConflictChoice): Promise<void> {
    const pending = this.pendingAccept;
    if (!pending || !pending.waitsFor(path)) return;
    await this.afterAcceptStep(pending, await pending.resolve(path, choice));
  }

  /** Conflicts pending: the caller may abandon the accept (nothing more is written). */
  get conflictsPending(): boolean {
    return this.pendingAccept !== undefined;
  }

  private async afterAcceptStep(acceptance: SpeculationAcceptance, step: AcceptStep): Promise<void> {
    const speculation = acceptance.speculation;
    switch (step.kind) {
      case 'waiting':
        return;
      case 'conflicts':
        this.pendingAccept = acceptance;
        this.emit({ type: 'conflicts', runId: speculation.id, conflicts: step.conflicts });
        return;
      case 'run_live':
        this.pendingAccept = undefined;
        this.log(step.why);
        this.emit({ type: 'notice', text: step.notice });
        await this.discardSpeculation(speculation);
        await this.runTurn(() => this.conversation.send(speculation.suggestion));
        return;
      case 'injected':
        this.pendingAccept = undefined;
        await this.finishAccept(speculation, step.run, acceptance.alreadyRendered);
    }
  }

  private async finishAccept(speculation: Speculation, run: AcceptedRun, alreadyRendered: boolean): Promise<void> {
    this.options.stats?.recordTimeSaved(run.timeSavedMs);
    this.emit({
      type: 'speculation_accepted',
      runId: speculation.id,
      suggestion: speculation.suggestion,
      messages: run.messages,
      toolCalls: run.toolCalls,
      applied: run.applied,
      notApplied: run.notApplied,
      timeSavedMs: run.timeSavedMs,
      alreadyRendered,
      continuesLive: run.continuesLive,
    });
    await this.discardSpeculation(speculation);
    if (run.continuesLive && this.conversation.canResume()) {
      // The boundary call goes through approval as usual from here on.
      this.lastTurn = 'completed';
      await this.runTurn(() => this.conversation.resume());
      return;
    }
    this.saveParamsAfterInjection();
    this.lastTurn = 'completed';
    if (run.snapshot.pipelinedSuggestion) this.followup.set(run.snapshot.pipelinedSuggestion, { immediate: true });
    else if (run.snapshot.status === 'completed') void this.showPipelinedWhenKnown(speculation);
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
    if (!final.pipelinedSuggestion || this.disposed || this.turnRunning || this.pendingAccept || this.speculation) return;
    if (this.userTyping || this.followup.visibleText !== null || this.followup.pendingText !== null) return;
    this.followup.set(final.pipelinedSuggestion, { immediate: true });
  }

  /** After an injected completed run the main history grew; forks must start from it. */
  private saveParamsAfterInjection(): void {
    const previous = this.cacheStore.get();
    if (!previous) return;
    this.cacheStore.save({
      systemPrompt: previous.generationConfig.systemPrompt,
      tools: previous.generationConfig.tools,
      ...(previous.generationConfig.temperature !== undefined ? { temperature: previous.generationConfig.temperature } : {}),
      history: this.conversation.messages,
      model: previous.model,
    });
  }

  private async discardSpeculation(speculation: Speculation): Promise<void> {
    if (this.speculation === speculation) {
      this.speculation = undefined;
      this.unsubscribeSpeculation?.();
      this.unsubscribeSpeculation = undefined;
    }
    await speculation.disposeOverlay();
    this.emit({ type: 'speculation', snapshot: null });
  }

  /** Palette "Discard" on a pending conflict or a ready run: nothing is applied. */
  async discard(): Promise<void> {
    const pending = this.pendingAccept;
    if (pending) {
      this.pendingAccept = undefined;
      this.emit({ type: 'notice', text: pending.cancelledNotice() });
      await this.discardSpeculation(pending.speculation);
      return;
    }
    this.followup.clear();
    await this.abortSpeculation('discarded');
  }

  // ── settings and lifecycle ───────────────────────────────────────────────────────────────────

  /** A changed model, endpoint or approval mode aborts the speculation built on the old one. */
  updateConfig(config: SessionConfig): void {
    const before = this.config;
    this.config = { ...config };
    this.approvals.setMode(config.approvalMode);
    if (before.model !== config.model) this.conversation.setModel(config.model);
    const changed = before.model !== config.model || before.fastModel !== config.fastModel || before.approvalMode !== config.approvalMode ||
      before.speculationEnabled !== config.speculationEnabled || before.maxTurns !== config.maxTurns || before.maxMessages !== config.maxMessages;
    if (changed) void this.abortSpeculation('settings changed');
    if (!config.suggestionsEnabled) this.followup.clear();
  }

  /** New chat: the old conversation, its suggestion, speculation and cache snapshot all go. */
  async newChat(): Promise<void> {
    this.conversation.abort();
    this.suggestionAbort?.abort();
    this.followup.clear();
    const pending = this.pendingAccept;
    this.pendingAccept = undefined;
    if (pending) await this.discardSpeculation(pending.speculation);
    await this.abortSpeculation('new chat');
    this.approvals.resetGrants();
    this.conversation.reset();
    this.cacheStore.clear();
    this.lastTurn = 'completed';
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.followup.cleanup();
    this.suggestionAbort?.abort();
    this.conversation.abort();
    const speculation = this.speculation ?? this.promoted ?? this.pendingAccept?.speculation;
    const waiting = this.pipelineSource;
    this.pipelineSource = undefined;
    if (waiting) await waiting.abort();
    this.promoted = undefined;
    this.pendingAccept = undefined;
    if (speculation) await speculation.abort();
    this.speculation = undefined;
    this.listeners.clear();
  }
}
