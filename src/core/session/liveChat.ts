// The chat itself: the conversation with its live turns (send, edit & resend, regenerate, retry), its
// approval mode and plan mode, the project's context before each turn, what it spent, the checkpoint
// each turn records, and the cache-safe parameters that forks of it start from.
import { ApprovalScheduler, type ApprovalMode, type ApprovalPrompter } from '../chat/approvals';
import { Conversation, type AppendResult } from '../chat/conversation';
import type { TurnOutcome } from '../chat/events';
import { createSubAgentRunner } from '../chat/subAgent';
import type { ToolRegistry } from '../chat/toolRegistry';
import { RecordingWorkspaceFs, type CheckpointStore, type CheckpointSummary } from '../checkpoints';
import { composeUserMessage, type Attachment } from '../context/attachments';
import { filesInPlay } from '../context/instructions';
import type { TurnContextProvider } from '../context/turnContext';
import type { ChatPoint, FollowedChat } from '../followup/followupPorts';
import { CacheSafeParamsStore, type CacheSafeParams } from '../followup/forkedQuery';
import type { LlmClient, Usage } from '../llm/llmClient';
import type { ChatMessage } from '../messages';
import type { PlanModeSwitch, SubAgentRunner, ToolContext } from '../tools/types';
import { isZero, UsageLedger, type UsageSnapshot, type UsageSource } from '../usage/usageLedger';
import type { SessionConfig, SessionEvent } from './sessionEvents';

export interface LiveChatOptions {
  llm: LlmClient;
  config: SessionConfig;
  systemPrompt: string;
  tools: ToolRegistry;
  /** Ports for tools: fs is the real workspace; the session sets signals. */
  toolContext: ToolContext;
  prompter: ApprovalPrompter;
  classifyShell: (command: string, directory?: string) => Promise<{ readOnly: boolean; reason: string }>;
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
  emit: (event: SessionEvent) => void;
  /** A live turn ended as a completed one: the next prompt may be predicted. */
  onTurnCompleted: () => void;
  log: (line: string) => void;
}

export class LiveChat implements FollowedChat {
  private config: SessionConfig;
  /** The approval mode the settings give; the chat's own differs after an approved plan. */
  private settingsMode: ApprovalMode;
  private conversation: Conversation;
  private readonly cacheStore = new CacheSafeParamsStore();
  private readonly approvals: ApprovalScheduler;
  private turnRunning = false;
  private lastTurnState: 'completed' | 'failed' | 'cancelled' = 'completed';
  private waitingForApproval = false;
  /** What this chat spent, main turns and background work apart. */
  private usage = new UsageLedger();
  /** The live tools' file system: records each turn's checkpoint before the first write of a path. */
  readonly recordingFs: RecordingWorkspaceFs | undefined;
  private pointCounter = 0;
  /** The system prompt of the latest turn (the options' until the first turn builds one). */
  private systemPrompt: string;
  readonly subAgent: SubAgentRunner;
  private readonly planMode: PlanModeSwitch;

  constructor(private readonly options: LiveChatOptions) {
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
  }

  private createConversation(history?: readonly ChatMessage[]): Conversation {
    const prompter: ApprovalPrompter = {
      request: async (request) => {
        this.waitingForApproval = true;
        try {
          return await this.options.prompter.request(request);
        } finally {
          this.waitingForApproval = false;
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
    conversation.subscribe((event) => this.options.emit({ type: 'chat', event }));
    return conversation;
  }

  get messages(): ChatMessage[] {
    return this.conversation.messages;
  }

  get busy(): boolean {
    return this.turnRunning;
  }

  get approvalPending(): boolean {
    return this.waitingForApproval;
  }

  get lastTurn(): 'completed' | 'failed' | 'cancelled' {
    return this.lastTurnState;
  }

  /** The settings as this chat runs them (its approval mode may differ after an approved plan). */
  get currentConfig(): SessionConfig {
    return this.config;
  }

  get usageSnapshot(): UsageSnapshot {
    return this.usage.snapshot();
  }

  forkParams(): CacheSafeParams | undefined {
    return this.cacheStore.get();
  }

  recordUsage(source: UsageSource, model: string, usage: Usage): void {
    const counts = this.usage.add(source, model, usage);
    if (!isZero(counts)) this.options.emit({ type: 'usage', source, model, counts, chat: this.usage.snapshot() });
  }

  // ── live turns ───────────────────────────────────────────────────────────────────────────────

  /** The user's message (attached context written into it once, so every fork keeps it as sent) and its turn. */
  send(text: string, attachments: readonly Attachment[]): Promise<TurnOutcome> {
    return this.sendShowing(text, composeUserMessage(text, attachments), [...attachments]);
  }

  /** A live turn of `content`, shown as the user's message `text`. */
  sendShowing(text: string, content: string, attachments: Attachment[]): Promise<TurnOutcome> {
    this.options.emit({ type: 'user_message', text, historyIndex: this.conversation.messages.length, attachments });
    return this.runTurn(() => this.conversation.send(content), text, attachments.map((a) => a.path));
  }

  sendLive(text: string): Promise<TurnOutcome> {
    return this.sendShowing(text, text, []);
  }

  runShown(text: string): Promise<TurnOutcome> {
    return this.runTurn(() => this.conversation.send(text), text);
  }

  resume(prompt: string): Promise<TurnOutcome> {
    return this.runTurn(() => this.conversation.resume(), prompt);
  }

  canResume(): boolean {
    return this.conversation.canResume();
  }

  /** Retries the last failed turn, keeping the user's message and finished tool results. */
  retry(): Promise<TurnOutcome> {
    return this.runTurn(() => this.conversation.retryLastTurn(), this.lastUserText());
  }

  /** Regenerate after the history was cut back to the last user message. */
  regenerate(): Promise<TurnOutcome> {
    return this.runTurn(() => this.conversation.resume(), this.lastUserText());
  }

  /** The history keeps its first `length` messages; forks must not start from turns that are gone. */
  cut(length: number): { ok: true } | { ok: false; reason: string } {
    const cut = this.conversation.truncate(length);
    if (!cut.ok) return cut;
    this.cacheStore.clear();
    this.options.emit({ type: 'history_truncated', length });
    return cut;
  }

  stop(): void {
    this.conversation.abort();
  }

  private lastUserText(): string {
    const last = [...this.conversation.messages].reverse().find((m) => m.role === 'user');
    return last?.role === 'user' ? last.content : '';
  }

  private async runTurn(run: () => Promise<TurnOutcome>, prompt: string, attachedFiles: readonly string[] = []): Promise<TurnOutcome> {
    this.setBusy(true);
    this.recordingFs?.begin({ kind: 'turn', prompt });
    let outcome: TurnOutcome;
    try {
      await this.refreshTurnContext(attachedFiles);
      outcome = await run();
      this.recordUsage('chat', this.config.model, outcome.usage);
    } finally {
      this.turnRunning = false;
      const checkpoint = await this.sealTurn();
      this.options.emit({ type: 'busy', busy: false });
      this.options.emit({ type: 'turn_recorded', point: this.addPoint(checkpoint), checkpoint });
    }
    this.lastTurnState = outcome.status === 'done' ? 'completed' : outcome.status === 'error' ? 'failed' : 'cancelled';
    if (outcome.status === 'done') this.options.onTurnCompleted();
    return outcome;
  }

  setBusy(busy: boolean): void {
    this.turnRunning = busy;
    this.options.emit({ type: 'busy', busy });
  }

  settleLastTurn(): void {
    this.lastTurnState = 'completed';
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
      this.options.emit({ type: 'context_used', sources: context.sources });
    } catch (error) {
      this.options.log(`reading the project's instructions failed; the last system prompt stays: ${String(error)}`);
    }
  }

  /** exit_plan_mode, approved: this chat (not the setting) switches to auto-edit. */
  private leavePlanMode(): { ok: true; mode: string } | { ok: false; reason: string } {
    const blocked = this.options.planExitBlocked?.();
    if (blocked) return { ok: false, reason: blocked };
    this.config = { ...this.config, approvalMode: 'auto-edit' };
    this.approvals.setMode('auto-edit');
    this.options.emit({ type: 'notice', text: 'Plan approved: this chat now runs in auto-edit mode (edits run without asking; commands still ask). A new chat starts in the mode of your settings again.' });
    return { ok: true, mode: 'auto-edit' };
  }

  // ── accepted turns, points and checkpoints ───────────────────────────────────────────────────

  appendMessages(messages: ChatMessage[]): AppendResult {
    return this.conversation.appendMessages(messages);
  }

  /** After an injected completed run the main history grew; forks must start from it. */
  forkFromCurrentHistory(): void {
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

  addPoint(checkpoint: CheckpointSummary | null): ChatPoint {
    return { id: `pt${++this.pointCounter}`, historyLength: this.conversation.messages.length, checkpointId: checkpoint?.id ?? null };
  }

  /** The checkpoint of what the turn (or a hunk undo) wrote; null when it wrote nothing or recording failed. */
  async sealTurn(): Promise<CheckpointSummary | null> {
    try {
      return (await this.recordingFs?.seal()) ?? null;
    } catch (error) {
      // The record stays 'recording' on disk; the next start completes it from the files.
      this.options.log(`finishing the turn's checkpoint failed: ${String(error)}`);
      return null;
    }
  }

  // ── settings and lifecycle ───────────────────────────────────────────────────────────────────

  /** New settings; true when what a speculation was built on changed (it must be aborted). */
  updateConfig(incoming: SessionConfig): boolean {
    const before = this.config;
    // The chat keeps the mode an approved plan gave it until the setting itself changes (or a new chat).
    const settingChanged = incoming.approvalMode !== this.settingsMode;
    this.settingsMode = incoming.approvalMode;
    const config: SessionConfig = { ...incoming, approvalMode: settingChanged ? incoming.approvalMode : before.approvalMode };
    this.config = { ...config };
    this.approvals.setMode(config.approvalMode);
    if (before.model !== config.model) this.conversation.setModel(config.model);
    return before.model !== config.model || before.fastModel !== config.fastModel || before.approvalMode !== config.approvalMode ||
      before.speculationEnabled !== config.speculationEnabled || before.maxTurns !== config.maxTurns || before.maxMessages !== config.maxMessages;
  }

  /** New chat: the conversation, its grants, cache snapshot and usage go; the settings' mode comes back. */
  reset(): void {
    this.approvals.resetGrants();
    this.conversation.reset();
    this.cacheStore.clear();
    if (this.config.approvalMode !== this.settingsMode) {
      this.config = { ...this.config, approvalMode: this.settingsMode };
      this.approvals.setMode(this.settingsMode);
    }
    this.usage = new UsageLedger();
    this.lastTurnState = 'completed';
  }

  /** A stored chat's history and usage in place of the (reset) current one; forks may start from it when it ends with an answer. */
  open(chat: { messages: readonly ChatMessage[]; usage?: UsageSnapshot }): { ok: true } | { ok: false; reason: string } {
    const replaced = this.conversation.replaceHistory(chat.messages);
    if (!replaced.ok) return replaced;
    this.usage = UsageLedger.restore(chat.usage);
    const last = chat.messages[chat.messages.length - 1];
    if (last?.role === 'assistant' && !last.tool_calls?.length) {
      this.cacheStore.save({ systemPrompt: this.systemPrompt, tools: this.options.tools.definitions(), history: chat.messages, model: this.config.model });
    }
    return { ok: true };
  }
}
