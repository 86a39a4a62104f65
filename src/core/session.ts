// ChatSession: one conversation, its visible suggestion and its one speculation. The single owner of
// that state: it publishes events with snapshots, and the UI (VS Code or CLI) only calls its methods.
import { ApprovalScheduler, type ApprovalPrompter, type ApprovalMode } from './chat/approvals';
import { RecordingWorkspaceFs, summaryOf, type CheckpointStore, type CheckpointSummary, type RestoreOptions, type RestoreOutcome, type RestorePlan } from './checkpoints';
import { Conversation } from './chat/conversation';
import type { ChatEvent, TurnOutcome } from './chat/events';
import type { ChatMessage } from './messages';
import { composeUserMessage, replaceUserText, type Attachment } from './context/attachments';
import { filesInPlay } from './context/instructions';
import type { ContextSource, TurnContextProvider } from './context/turnContext';
import { createSubAgentRunner } from './chat/subAgent';
import type { PlanModeSwitch, SubAgentRunner } from './tools/types';
import type { ToolRegistry } from './chat/toolRegistry';
import { SpeculationAcceptance, type AcceptedRun, type AcceptStep, type ConflictChoice } from './followup/acceptance';
import type { DroppedHunks } from './followup/hunkDrops';
import { describeHunk, splitHunks, StaleHunkError, textForHunks, type Hunk } from './checkpoints/hunks';
import { planHunkUndo, type HunkUndoPlan } from './checkpoints/hunkUndo';
import { sha256 } from './checkpoints/fileState';
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
import { flushed } from './fs/pendingFlush';
import type { LlmClient, Usage } from './llm/llmClient';
import type { SpeculateStats } from './stats/speculateStats';
import type { ToolContext } from './tools/types';
import { isZero, UsageLedger, type TokenCounts, type UsageSnapshot, type UsageSource } from './usage/usageLedger';

export interface SessionConfig {
  model: string;
  /** Model for suggestions and speculation; empty = the main model. */
  fastModel: string;
  approvalMode: ApprovalMode;
  suggestionsEnabled: boolean;
  speculationEnabled: boolean;
  maxTurns: number;
  maxMessages: number;
  /** What the agent tool's sub-agents run on: the fast model (default) or the main one. */
  subAgentModel?: 'fast' | 'main';
}

export interface ChatSessionOptions {
  llm: LlmClient;
  config: SessionConfig;
  systemPrompt: string;
  tools: ToolRegistry;
  /** Ports for tools: fs is the real workspace; the session sets signals. */
  toolContext: ToolContext;
  prompter: ApprovalPrompter;
  classifyShell: (command: string, directory?: string) => Promise<{ readOnly: boolean; reason: string }>;
  createOverlay: () => Promise<SpeculationOverlay>;
  /**
   * The project's instructions, memory and skills for each live turn: the system prompt is rebuilt
   * from it before every turn (so an edited AGENTS.md counts at once); forks replay what was sent.
   */
  turnContext?: TurnContextProvider;
  /** Why this chat may not leave plan mode (Restricted Mode), or undefined when it may. */
  planExitBlocked?: () => string | undefined;
  /**
   * Where each accept and each turn that changes files records its checkpoint (what undoes it).
   * Without it nothing is recorded (tests of other things).
   */
  checkpoints?: CheckpointStore;
  clock?: FollowupClock;
  stats?: SpeculateStats;
  log?: (line: string) => void;
}

/** A place in the chat the user can go back to: the end of a turn or of an accept. */
export interface ChatPoint {
  id: string;
  /** Messages in the history at that point. */
  historyLength: number;
  /** The checkpoint of the files changed in the step that ended here. */
  checkpointId: string | null;
}

/** What the session tells its UI. Plain data, safe to post to a webview. */
export type SessionEvent =
  | { type: 'chat'; event: ChatEvent }
  /** The user's words (attachments apart) and where the message sits in the history. */
  | { type: 'user_message'; text: string; historyIndex: number; attachments: Attachment[] }
  /** What the turn about to run has in its system prompt beyond the fixed part (instructions, memory, skills). */
  | { type: 'context_used'; sources: ContextSource[] }
  /** Edit & resend or Regenerate cut the history to its first `length` messages. */
  | { type: 'history_truncated'; length: number }
  /** Tokens one turn, suggestion or speculation spent; `chat` is the chat's running total. */
  | { type: 'usage'; source: UsageSource; model: string; counts: TokenCounts; chat: UsageSnapshot }
  | { type: 'busy'; busy: boolean }
  | { type: 'suggestion'; text: string | null }
  | { type: 'speculation'; snapshot: SpeculationSnapshot | null }
  /** Tab on a still-running speculation: it continues in the foreground; its progress follows. */
  | { type: 'speculation_promoted'; snapshot: SpeculationSnapshot; historyStart: number }
  | { type: 'speculation_progress'; event: SpeculationEvent }
  | {
      type: 'speculation_accepted';
      runId: string;
      suggestion: string;
      messages: ChatMessage[];
      /** Where `messages` start in the history. */
      historyStart: number;
      toolCalls: ToolCallRecord[];
      applied: string[];
      notApplied: string[];
      timeSavedMs: number;
      /** True when the run was promoted and its turns are already on screen. */
      alreadyRendered: boolean;
      /** A boundary run: the main agent continues live from here. */
      continuesLive: boolean;
      /** Files the user left out before Tab. */
      excluded: string[];
      /** Hunks the user dropped before Tab, per applied file (the turns carry a note saying so). */
      droppedHunks?: DroppedHunks[];
      point: ChatPoint;
      /** What undoes the accept; null when it changed no file. */
      checkpoint: CheckpointSummary | null;
      /** Set when the accept committed ahead: the refs it moved, and why the index stayed as it was if it did. */
      committedAhead?: { moved: string[]; indexNote?: string };
    }
  /** A live turn ended (or a failed accept left files applied): its point and the checkpoint of what it changed. */
  | { type: 'turn_recorded'; point: ChatPoint; checkpoint: CheckpointSummary | null }
  /** A checkpoint was undone or redone (state and files as they are now). */
  | { type: 'checkpoint_changed'; checkpoint: CheckpointSummary }
  | { type: 'conflicts'; runId: string; conflicts: { path: string; reason: string }[] }
  /** `offer`: a button the UI shows with the notice (run_live: the refused request, live, on the user's word). */
  | { type: 'notice'; text: string; offer?: 'run_live' }
  /**
   * Suggestions or speculation cannot work with this endpoint for a reason that waiting will not
   * fix (a refused request, a model that cannot stop thinking …). Said once per reason, quietly.
   */
  | { type: 'fork_unavailable'; reason: string };

export type { ConflictChoice } from './followup/acceptance';

/** What undoing one hunk of a checkpoint did; `changed`: the user edited it since (ask, then pass overwrite). */
export type HunkUndoOutcome =
  | { ok: true; hunk: Hunk; checkpoint: CheckpointSummary | null }
  | { ok: false; reason: 'busy' | 'changed' | 'stale' | 'unknown'; message: string };

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
  /** An accept the workspace refused: its request waits for the user's "run it live". */
  private refusedRequest: { text: string; alreadyRendered: boolean } | undefined;
  private promoted: Speculation | undefined;
  /** An accepted run whose pipelined suggestion was still being predicted at Tab. */
  private pipelineSource: Speculation | undefined;
  private turnRunning = false;
  /** The lasting fork failure last said to the user (said once per reason). */
  private reportedForkFailure: string | undefined;
  private disposed = false;
  /** What this chat spent, main turns and background work apart. */
  private usage = new UsageLedger();
  /** Runs whose tokens are already in `usage` (a run is counted once, however it ends). */
  private readonly countedRuns = new WeakSet<Speculation>();
  /** The live tools' file system: records each turn's checkpoint before the first write of a path. */
  private readonly recordingFs: RecordingWorkspaceFs | undefined;
  private pointCounter = 0;
  /** Files the user left out of the current speculation's accept (by run id). */
  private excluded: { runId: string; paths: Set<string> } | undefined;
  private undoing = false;
  /** The system prompt of the latest turn (the options' until the first turn builds one). */
  private systemPrompt: string;
  /** The approval mode the settings give; the chat's own differs after an approved plan. */
  private settingsMode: ApprovalMode;
  private readonly subAgent: SubAgentRunner;
  private readonly planMode: PlanModeSwitch;

  constructor(private readonly options: ChatSessionOptions) {
    this.config = { ...options.config };
    this.systemPrompt = options.systemPrompt;
    this.settingsMode = options.config.approvalMode;
    this.subAgent = createSubAgentRunner({
      llm: options.llm,
      model: () => (this.config.subAgentModel === 'main' ? this.config.model : this.config.fastModel || this.config.model),
      approvalMode: () => this.config.approvalMode,
      tools: options.tools,
      workspaceRoot: options.toolContext.fs.root,
    });
    this.planMode = { mode: () => this.config.approvalMode, leave: () => this.leavePlanMode() };
    if (options.checkpoints) this.recordingFs = new RecordingWorkspaceFs(options.toolContext.fs, options.checkpoints);
    this.approvals = new ApprovalScheduler({ mode: this.config.approvalMode, isReadOnly: async (command, directory) => (await options.classifyShell(command, directory)).readOnly });
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
      systemPrompt: this.systemPrompt,
      tools: this.options.tools,
      toolContext: { ...this.options.toolContext, ...(this.recordingFs ? { fs: this.recordingFs } : {}), subAgent: this.subAgent, planMode: this.planMode },
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

  /**
   * A fork that failed for a lasting reason is logged and said once (per reason) in the
   * speculation status; a transient one is only logged. A fork that works clears it.
   */
  private noteForkResult(result: SuggestionResult): void {
    if (result.kind !== 'failed') {
      this.reportedForkFailure = undefined;
      return;
    }
    this.log(`suggestion ${result.failed}: ${result.message}`);
    if (result.failed !== 'error' || result.transient === true) return;
    const reason = result.reason ?? result.message;
    if (reason === this.reportedForkFailure) return;
    this.reportedForkFailure = reason;
    this.emit({ type: 'fork_unavailable', reason });
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

  /** What this chat has spent so far. */
  get usageSnapshot(): UsageSnapshot {
    return this.usage.snapshot();
  }

  private recordUsage(source: UsageSource, model: string, usage: Usage): void {
    const counts = this.usage.add(source, model, usage);
    if (!isZero(counts)) this.emit({ type: 'usage', source, model, counts, chat: this.usage.snapshot() });
  }

  /** The model background work runs on. */
  private get backgroundModel(): string {
    return this.config.fastModel || this.config.model;
  }

  private countRunUsage(speculation: Speculation): void {
    if (this.countedRuns.has(speculation)) return;
    this.countedRuns.add(speculation);
    this.recordUsage('speculation', this.backgroundModel, speculation.snapshot().usage);
  }

  // ── the main path ────────────────────────────────────────────────────────────────────────────

  /**
   * The user sends a message: any suggestion and speculation go, then a live turn runs. Attached
   * context is written into the message once, here, so the history (and every fork) keeps it as sent.
   */
  async submit(text: string, attachments: readonly Attachment[] = []): Promise<TurnOutcome | undefined> {
    const trimmed = text.trim();
    if (trimmed === '' || this.turnRunning || this.pendingAccept) return undefined;
    this.followup.clear();
    await this.abortSpeculation('new main turn');
    return this.sendLive(trimmed, composeUserMessage(trimmed, attachments), [...attachments]);
  }

  private sendLive(text: string, content: string, attachments: Attachment[]): Promise<TurnOutcome> {
    this.emit({ type: 'user_message', text, historyIndex: this.conversation.messages.length, attachments });
    return this.runTurn(() => this.conversation.send(content), text, attachments.map((a) => a.path));
  }

  /**
   * Edit & resend: the chat from the user message at `historyIndex` on is replaced by the edited
   * message and a new answer. Its attachments stay; files are not rewound.
   */
  async editAndResend(historyIndex: number, text: string): Promise<TurnOutcome | { status: 'refused'; reason: string } | undefined> {
    const trimmed = text.trim();
    if (trimmed === '' || this.turnRunning || this.pendingAccept) return undefined;
    const original = this.conversation.messages[historyIndex];
    if (original?.role !== 'user') return { status: 'refused', reason: 'That message is no longer in this chat.' };
    const cut = await this.cutHistory(historyIndex);
    if (!cut.ok) return { status: 'refused', reason: cut.reason };
    return this.sendLive(trimmed, replaceUserText(original.content, trimmed), []);
  }

  /** Regenerate: the last answer (everything after the last user message) goes, and a new one runs. */
  async regenerate(): Promise<TurnOutcome | { status: 'refused'; reason: string } | undefined> {
    if (this.turnRunning || this.pendingAccept) return undefined;
    const messages = this.conversation.messages;
    let lastUser = messages.length - 1;
    while (lastUser >= 0 && messages[lastUser].role !== 'user') lastUser--;
    if (lastUser < 0) return { status: 'refused', reason: 'There is no answer to regenerate yet.' };
    const cut = await this.cutHistory(lastUser + 1);
    if (!cut.ok) return { status: 'refused', reason: cut.reason };
    return this.runTurn(() => this.conversation.resume(), this.lastUserText());
  }

  private async cutHistory(length: number): Promise<{ ok: true } | { ok: false; reason: string }> {
    this.followup.clear();
    this.suggestionAbort?.abort();
    await this.abortSpeculation('the chat was edited');
    const cut = this.conversation.truncate(length);
    if (!cut.ok) return cut;
    // Forks must not start from turns that are gone; the next settled turn saves new params.
    this.cacheStore.clear();
    this.emit({ type: 'history_truncated', length });
    return cut;
  }

  /** Retries the last failed turn, keeping the user's message and finished tool results. */
  async retry(): Promise<TurnOutcome | undefined> {
    if (this.turnRunning || !this.conversation.canResume()) return undefined;
    await this.abortSpeculation('retry');
    return this.runTurn(() => this.conversation.retryLastTurn(), this.lastUserText());
  }

  private lastUserText(): string {
    const last = [...this.conversation.messages].reverse().find((m) => m.role === 'user');
    return last?.role === 'user' ? last.content : '';
  }

  /** Stops the running turn. */
  stop(): void {
    this.conversation.abort();
    this.promoted?.abort().catch(() => undefined);
  }

  private async runTurn(run: () => Promise<TurnOutcome>, prompt: string, attachedFiles: readonly string[] = []): Promise<TurnOutcome> {
    this.turnRunning = true;
    this.emit({ type: 'busy', busy: true });
    this.recordingFs?.begin({ kind: 'turn', prompt });
    let outcome: TurnOutcome;
    try {
      await this.refreshTurnContext(attachedFiles);
      outcome = await run();
      this.recordUsage('chat', this.config.model, outcome.usage);
    } finally {
      this.turnRunning = false;
      const checkpoint = await this.sealTurn();
      this.emit({ type: 'busy', busy: false });
      this.emit({ type: 'turn_recorded', point: this.addPoint(checkpoint), checkpoint });
    }
    this.lastTurn = outcome.status === 'done' ? 'completed' : outcome.status === 'error' ? 'failed' : 'cancelled';
    if (outcome.status === 'done') void this.suggestNext();
    return outcome;
  }

  /**
   * Rebuilds the system prompt for the turn about to run from the project's instructions, memory and
   * skills. Unchanged files give the same bytes, so the cached prefix holds; a failure keeps the last one.
   */
  private async refreshTurnContext(attachedFiles: readonly string[]): Promise<void> {
    const provider = this.options.turnContext;
    if (!provider) return;
    try {
      const context = await provider(filesInPlay(this.conversation.messages, attachedFiles));
      this.systemPrompt = context.systemPrompt;
      this.conversation.setSystemPrompt(context.systemPrompt);
      this.emit({ type: 'context_used', sources: context.sources });
    } catch (error) {
      this.log(`reading the project's instructions failed; the last system prompt stays: ${String(error)}`);
    }
  }

  /** exit_plan_mode, approved: this chat (not the setting) switches to auto-edit. */
  private leavePlanMode(): { ok: true; mode: string } | { ok: false; reason: string } {
    const blocked = this.options.planExitBlocked?.();
    if (blocked) return { ok: false, reason: blocked };
    this.config = { ...this.config, approvalMode: 'auto-edit' };
    this.approvals.setMode('auto-edit');
    this.emit({ type: 'notice', text: 'Plan approved: this chat now runs in auto-edit mode (edits run without asking; commands still ask). A new chat starts in the mode of your settings again.' });
    return { ok: true, mode: 'auto-edit' };
  }

  /** The approval mode this chat runs in now (after an approved plan, not the setting's). */
  get approvalMode(): ApprovalMode {
    return this.config.approvalMode;
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
    if ('usage' in result) this.recordUsage('suggestion', this.backgroundModel, result.usage);
    this.noteForkResult(result);
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
      toolContext: { ...this.options.toolContext, subAgent: this.subAgent },
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
        if ('usage' in result) this.recordUsage('suggestion', this.backgroundModel, result.usage);
        this.noteForkResult(result);
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
          if (snapshot.status !== 'running') this.countRunUsage(speculation);
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
    this.countRunUsage(speculation);
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
    this.emit({ type: 'speculation_promoted', snapshot: speculation.snapshot(), historyStart: this.conversation.messages.length });
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
      // The promoted run already showed the suggestion as the user's message.
      await this.runTurn(() => this.conversation.send(speculation.suggestion), speculation.suggestion);
    }
  }

  private async applyAccepted(speculation: Speculation, alreadyRendered: boolean): Promise<void> {
    const acceptance = new SpeculationAcceptance(speculation, alreadyRendered, {
      inject: (messages) => this.conversation.appendMessages(messages),
      ...(this.options.checkpoints ? { checkpoints: this.options.checkpoints } : {}),
      excluded: this.excludedFiles(speculation.id),
      log: (line) => this.log(line),
    });
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
        if (step.checkpoint) this.emit({ type: 'turn_recorded', point: this.addPoint(step.checkpoint), checkpoint: step.checkpoint });
        await this.discardSpeculation(speculation);
        if (acceptance.alreadyRendered) await this.runTurn(() => this.conversation.send(speculation.suggestion), speculation.suggestion);
        else await this.sendLive(speculation.suggestion, speculation.suggestion, []);
        return;
      case 'refused':
        // The live run would meet the same full disk or read-only folder: offered, never started unasked.
        this.pendingAccept = undefined;
        this.log(step.why);
        this.refusedRequest = { text: speculation.suggestion, alreadyRendered: acceptance.alreadyRendered };
        this.emit({ type: 'notice', text: step.notice, offer: 'run_live' });
        if (step.checkpoint) this.emit({ type: 'turn_recorded', point: this.addPoint(step.checkpoint), checkpoint: step.checkpoint });
        await this.discardSpeculation(speculation);
        return;
      case 'injected':
        this.pendingAccept = undefined;
        await this.finishAccept(speculation, step.run, acceptance.alreadyRendered);
    }
  }

  /** The user's "run it live" on a refused accept's notice: the request runs as a normal turn now. */
  async runRefusedLive(): Promise<TurnOutcome | undefined> {
    const refused = this.refusedRequest;
    if (!refused || this.turnRunning || this.pendingAccept) return undefined;
    this.refusedRequest = undefined;
    if (refused.alreadyRendered) return this.runTurn(() => this.conversation.send(refused.text), refused.text);
    return this.submit(refused.text);
  }

  private async finishAccept(speculation: Speculation, run: AcceptedRun, alreadyRendered: boolean): Promise<void> {
    this.options.stats?.recordTimeSaved(run.timeSavedMs);
    this.emit({
      type: 'speculation_accepted',
      runId: speculation.id,
      suggestion: speculation.suggestion,
      messages: run.messages,
      historyStart: this.conversation.messages.length - run.messages.length,
      toolCalls: run.toolCalls,
      applied: run.applied,
      notApplied: run.notApplied,
      timeSavedMs: run.timeSavedMs,
      alreadyRendered,
      continuesLive: run.continuesLive,
      excluded: run.excluded,
      ...(run.droppedHunks.length > 0 ? { droppedHunks: run.droppedHunks } : {}),
      point: this.addPoint(run.checkpoint),
      checkpoint: run.checkpoint,
      ...(run.committedAhead ? { committedAhead: { moved: run.committedAhead.moved, ...(run.committedAhead.indexNote ? { indexNote: run.committedAhead.indexNote } : {}) } } : {}),
    });
    await this.discardSpeculation(speculation);
    if (run.continuesLive && this.conversation.canResume()) {
      // The boundary call goes through approval as usual from here on.
      this.lastTurn = 'completed';
      await this.runTurn(() => this.conversation.resume(), speculation.suggestion);
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
      const checkpoint = await pending.cancel();
      if (checkpoint) this.emit({ type: 'turn_recorded', point: this.addPoint(checkpoint), checkpoint });
      await this.discardSpeculation(pending.speculation);
      return;
    }
    this.followup.clear();
    await this.abortSpeculation('discarded');
  }

  // ── settings and lifecycle ───────────────────────────────────────────────────────────────────

  /** A changed model, endpoint or approval mode aborts the speculation built on the old one. */
  updateConfig(incoming: SessionConfig): void {
    const before = this.config;
    // The chat keeps the mode an approved plan gave it until the setting itself changes (or a new chat).
    const settingChanged = incoming.approvalMode !== this.settingsMode;
    this.settingsMode = incoming.approvalMode;
    const config: SessionConfig = { ...incoming, approvalMode: settingChanged ? incoming.approvalMode : before.approvalMode };
    this.config = { ...config };
    // The endpoint, key or model may have changed: a lasting fork failure is worth saying again.
    this.reportedForkFailure = undefined;
    this.approvals.setMode(config.approvalMode);
    if (before.model !== config.model) this.conversation.setModel(config.model);
    const changed = before.model !== config.model || before.fastModel !== config.fastModel || before.approvalMode !== config.approvalMode ||
      before.speculationEnabled !== config.speculationEnabled || before.maxTurns !== config.maxTurns || before.maxMessages !== config.maxMessages;
    if (changed) void this.abortSpeculation('settings changed');
    if (!config.suggestionsEnabled) this.followup.clear();
  }

  /** New chat: the old conversation, its suggestion, speculation and cache snapshot all go. */
  async newChat(): Promise<void> {
    this.reportedForkFailure = undefined;
    this.refusedRequest = undefined;
    this.conversation.abort();
    this.suggestionAbort?.abort();
    this.followup.clear();
    const pending = this.pendingAccept;
    this.pendingAccept = undefined;
    if (pending) {
      await pending.cancel();
      await this.discardSpeculation(pending.speculation);
    }
    await this.abortSpeculation('new chat');
    this.approvals.resetGrants();
    this.conversation.reset();
    this.cacheStore.clear();
    if (this.config.approvalMode !== this.settingsMode) {
      this.config = { ...this.config, approvalMode: this.settingsMode };
      this.approvals.setMode(this.settingsMode);
    }
    this.usage = new UsageLedger();
    this.lastTurn = 'completed';
  }

  /**
   * A stored chat in place of the current one (opened from the history, or restored after a
   * reload): whatever ran is stopped and its overlay deleted first, as for a new chat. Forks can
   * start from it at once when it ends with an answer.
   */
  async openChat(chat: { messages: readonly ChatMessage[]; usage?: UsageSnapshot }): Promise<{ ok: true } | { ok: false; reason: string }> {
    await this.newChat();
    const replaced = this.conversation.replaceHistory(chat.messages);
    if (!replaced.ok) return replaced;
    this.usage = UsageLedger.restore(chat.usage);
    const last = chat.messages[chat.messages.length - 1];
    if (last?.role === 'assistant' && !last.tool_calls?.length) {
      this.cacheStore.save({ systemPrompt: this.systemPrompt, tools: this.options.tools.definitions(), history: chat.messages, model: this.config.model });
    }
    return { ok: true };
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
    const pending = this.pendingAccept;
    this.pendingAccept = undefined;
    await pending?.cancel();
    if (speculation) await speculation.abort();
    this.speculation = undefined;
    await this.recordingFs?.seal().catch(() => null);
    // An accept's or undo's flush runs after its result is shown; closing the window right after Tab
    // waits for it (VS Code awaits deactivate), so its redo log is gone, not left for recovery.
    await flushed(this.options.toolContext.fs.root);
    this.listeners.clear();
  }

  // ── review before Tab ────────────────────────────────────────────────────────────────────────

  /** Leaves `path` out of the current speculation's accept (or puts it back); others are kept. */
  setExcluded(runId: string, path: string, excluded: boolean): void {
    if (this.speculation?.id !== runId) return;
    if (this.excluded?.runId !== runId) this.excluded = { runId, paths: new Set() };
    if (excluded) this.excluded.paths.add(path);
    else this.excluded.paths.delete(path);
  }

  /** The hunks of `path` in run `runId` against the workspace (what its preview diff shows). */
  async speculationHunks(runId: string, path: string): Promise<Hunk[]> {
    const speculation = this.speculation;
    if (speculation?.id !== runId) throw new Error('That speculation is gone; its changes can no longer be reviewed.');
    return speculation.hunksOf(path, this.options.toolContext.fs);
  }

  /**
   * Drops one hunk of `path` from run `runId` before Tab (the overlay's file is rewritten without
   * it). Refused once Tab was pressed: the accept applies what the overlay held when it started.
   */
  async dropSpeculationHunk(runId: string, path: string, hunkId: string): Promise<DroppedHunks> {
    const speculation = this.speculation;
    if (speculation?.id !== runId) throw new Error('That speculation is gone; its changes can no longer be dropped.');
    if (this.pendingAccept || this.promoted === speculation) throw new Error('This speculation is being accepted; its changes can no longer be dropped.');
    const dropped = await speculation.dropHunk(path, hunkId, this.options.toolContext.fs);
    // Every change dropped: the file is left out whole, which the list and the turns then say.
    if (dropped.dropped.length >= dropped.total) this.setExcluded(runId, path, true);
    return dropped;
  }

  /** What the user dropped of run `runId` before Tab, per file. */
  droppedHunks(runId: string): DroppedHunks[] {
    return this.speculation?.id === runId ? this.speculation.droppedHunks() : [];
  }

  /** The files the user left out of run `runId`'s accept, sorted. */
  excludedFiles(runId: string): string[] {
    return this.excluded?.runId === runId ? [...this.excluded.paths].sort() : [];
  }

  // ── checkpoints: undo, redo, restore to a point ─────────────────────────────────────────────

  /** The store checkpoints are recorded in (the UI reads blobs and lists from it). */
  get checkpointStore(): CheckpointStore | undefined {
    return this.options.checkpoints;
  }

  private async sealTurn(): Promise<CheckpointSummary | null> {
    try {
      return (await this.recordingFs?.seal()) ?? null;
    } catch (error) {
      // The record stays 'recording' on disk; the next start completes it from the files.
      this.log(`finishing the turn's checkpoint failed: ${String(error)}`);
      return null;
    }
  }

  private addPoint(checkpoint: CheckpointSummary | null): ChatPoint {
    return { id: `pt${++this.pointCounter}`, historyLength: this.conversation.messages.length, checkpointId: checkpoint?.id ?? null };
  }

  /** Why the workspace cannot be rewound right now, or undefined when it can. */
  private undoBlocker(): string | undefined {
    if (this.turnRunning) return 'A turn is running and may be changing files; stop it (or wait for it), then undo.';
    if (this.pendingAccept) return 'An accept is waiting for your answers about changed files; answer them or discard it, then undo.';
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
    const store = this.options.checkpoints;
    if (!store) return { ok: false, reason: 'unknown', message: 'Checkpoints are not recorded in this session.' };
    return work(store);
  }

  private async rewind(id: string, direction: 'undo' | 'redo', options: RestoreOptions): Promise<RestoreOutcome> {
    const store = this.options.checkpoints;
    if (!store) return { ok: false, reason: 'unknown', message: 'Checkpoints are not recorded in this session.' };
    const blocked = this.undoBlocker();
    if (blocked) return { ok: false, reason: 'busy', message: blocked };
    this.undoing = true;
    try {
      this.suggestionAbort?.abort();
      this.followup.clear();
      await this.abortSpeculation(direction);
      const outcome = direction === 'undo' ? await store.undo(id, options) : await store.redo(id, options);
      const read = await store.read(id);
      if (read.ok) this.emit({ type: 'checkpoint_changed', checkpoint: summaryOf(read.record) });
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
    const store = this.options.checkpoints;
    const read = await store?.read(id);
    if (!store || !read?.ok || read.record.state !== 'applied') return;
    const fs = this.options.toolContext.fs;
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
    const store = this.options.checkpoints;
    if (!store) throw new Error('Checkpoints are not recorded in this session.');
    const read = await store.read(id);
    if (!read.ok) throw new Error(read.message);
    if (read.record.state !== 'applied') throw new Error('This change is undone already; redo it first to undo part of it.');
    const file = read.record.files.find((f) => f.path === path);
    if (!file) throw new Error(`This change did not touch ${path}.`);
    if (!file.before.exists || !file.after?.exists) {
      throw new Error(`${path} was ${file.before.exists ? 'deleted' : 'created'} by this change as a whole, so it has no separate changes; undo the whole change to take it back.`);
    }
    const fs = this.options.toolContext.fs;
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
      const fs = this.options.toolContext.fs;
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
      this.suggestionAbort?.abort();
      this.followup.clear();
      await this.abortSpeculation('undo');
      const target = this.recordingFs ?? fs;
      this.recordingFs?.begin({ kind: 'turn', prompt: `Undo ${where}` });
      try {
        await target.writeFile(path, plan.text, { expect: { exists: true, sha256: sha256(Buffer.from(current, 'utf8')) } });
      } catch (error) {
        await this.sealTurn();
        return { ok: false, reason: 'changed', message: `${path} changed while its change was being undone, so nothing was written (${error instanceof Error ? error.message : String(error)}).` };
      }
      const checkpoint = await this.sealTurn();
      if (checkpoint) this.emit({ type: 'turn_recorded', point: this.addPoint(checkpoint), checkpoint });
      return { ok: true, hunk: plan.hunk, checkpoint };
    } finally {
      this.undoing = false;
    }
  }

  /**
   * Rewinds the conversation to a point (Restore to here, when the user chose to): the messages
   * after its `historyLength` go. Files are not touched: undo the later checkpoints first.
   */
  async rewindConversation(historyLength: number): Promise<{ ok: true } | { ok: false; reason: string }> {
    const blocked = this.undoBlocker();
    if (blocked) return { ok: false, reason: blocked };
    if (historyLength >= this.conversation.messages.length) return { ok: true };
    const cut = await this.cutHistory(historyLength);
    if (cut.ok) this.lastTurn = 'completed';
    return cut;
  }
}
