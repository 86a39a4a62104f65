// ChatSession: one conversation, its visible suggestion and its one speculation — a thin facade over
// the chat (session/liveChat.ts), the follow-up life cycle (followup/followupDriver.ts) and undo
// (session/sessionCheckpoints.ts). It orders what they do together and publishes their events; the
// UI (VS Code or CLI) only calls its methods.
import type { ApprovalMode } from './chat/approvals';
import type { TurnOutcome } from './chat/events';
import type { CheckpointStore, RestoreOutcome, RestorePlan } from './checkpoints';
import type { Hunk } from './checkpoints/hunks';
import { replaceUserText, type Attachment } from './context/attachments';
import type { ConflictChoice } from './followup/acceptance';
import { FollowupDriver } from './followup/followupDriver';
import type { AcceptMethod, FollowupClock } from './followup/followupState';
import type { CacheSafeParams } from './followup/forkedQuery';
import type { DroppedHunks } from './followup/hunkDrops';
import type { SpeculationOverlay, SpeculationSnapshot } from './followup/speculation';
import { flushed } from './fs/pendingFlush';
import type { ChatMessage } from './messages';
import { LiveChat, type LiveChatOptions } from './session/liveChat';
import { SessionCheckpoints, type HunkUndoOutcome } from './session/sessionCheckpoints';
import type { SessionConfig, SessionEvent } from './session/sessionEvents';
import type { SpeculateStats } from './stats/speculateStats';
import type { UsageSnapshot } from './usage/usageLedger';

export type { ConflictChoice } from './followup/acceptance';
export type { HunkUndoOutcome } from './session/sessionCheckpoints';
export type { ChatPoint, SessionConfig, SessionEvent } from './session/sessionEvents';

/** The chat's own options (session/liveChat.ts: llm, config, prompt, tools, approvals, context, checkpoints) and the follow-up's. */
export interface ChatSessionOptions extends Omit<LiveChatOptions, 'emit' | 'onTurnCompleted' | 'log'> {
  createOverlay: () => Promise<SpeculationOverlay>;
  clock?: FollowupClock;
  stats?: SpeculateStats;
  log?: (line: string) => void;
}

type Refused = { status: 'refused'; reason: string };

export class ChatSession {
  private readonly listeners = new Set<(event: SessionEvent) => void>();
  private readonly chat: LiveChat;
  private readonly followup: FollowupDriver;
  private readonly undo: SessionCheckpoints;

  constructor(private readonly options: ChatSessionOptions) {
    const emit = (event: SessionEvent) => this.emit(event);
    const log = (line: string) => this.log(line);
    this.chat = new LiveChat({ ...options, emit, log, onTurnCompleted: () => void this.followup.suggestNext() });
    this.followup = new FollowupDriver({
      ...options,
      toolContext: { ...options.toolContext, subAgent: this.chat.subAgent },
      config: () => this.chat.currentConfig,
      chat: this.chat,
      emit,
      submit: (text) => this.submit(text),
      log,
    });
    this.undo = new SessionCheckpoints({ store: options.checkpoints, fs: options.toolContext.fs, chat: this.chat, followup: this.followup, emit });
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
    return this.chat.messages;
  }

  get busy(): boolean {
    return this.chat.busy;
  }

  get visibleSuggestion(): string | null {
    return this.followup.visibleSuggestion;
  }

  get currentSpeculation(): SpeculationSnapshot | null {
    return this.followup.currentSpeculation;
  }

  /** The overlay of the current speculation, for the speculation: file system. */
  get currentOverlay(): SpeculationOverlay | undefined {
    return this.followup.currentOverlay;
  }

  get cacheSafeParams(): CacheSafeParams | undefined {
    return this.chat.forkParams();
  }

  /** What this chat has spent so far. */
  get usageSnapshot(): UsageSnapshot {
    return this.chat.usageSnapshot;
  }

  /** The approval mode this chat runs in now (after an approved plan, not the setting's). */
  get approvalMode(): ApprovalMode {
    return this.chat.currentConfig.approvalMode;
  }

  /** No live turn runs and no accept waits for answers: the chat may change. */
  private get idle(): boolean {
    return !this.chat.busy && !this.followup.conflictsPending;
  }

  // ── the main path ────────────────────────────────────────────────────────────────────────────

  /**
   * The user sends a message: any suggestion and speculation go, then a live turn runs. Attached
   * context is written into the message once, here, so the history (and every fork) keeps it as sent.
   */
  async submit(text: string, attachments: readonly Attachment[] = []): Promise<TurnOutcome | undefined> {
    const trimmed = text.trim();
    if (trimmed === '' || !this.idle) return undefined;
    await this.followup.clearAhead('new main turn');
    return this.chat.send(trimmed, attachments);
  }

  /**
   * Edit & resend: the chat from the user message at `historyIndex` on is replaced by the edited
   * message and a new answer. Its attachments stay; files are not rewound.
   */
  async editAndResend(historyIndex: number, text: string): Promise<TurnOutcome | Refused | undefined> {
    const trimmed = text.trim();
    if (trimmed === '' || !this.idle) return undefined;
    const original = this.chat.messages[historyIndex];
    if (original?.role !== 'user') return { status: 'refused', reason: 'That message is no longer in this chat.' };
    const cut = await this.cutHistory(historyIndex);
    if (!cut.ok) return { status: 'refused', reason: cut.reason };
    return this.chat.sendShowing(trimmed, replaceUserText(original.content, trimmed), []);
  }

  /** Regenerate: the last answer (everything after the last user message) goes, and a new one runs. */
  async regenerate(): Promise<TurnOutcome | Refused | undefined> {
    if (!this.idle) return undefined;
    const messages = this.chat.messages;
    let lastUser = messages.length - 1;
    while (lastUser >= 0 && messages[lastUser].role !== 'user') lastUser--;
    if (lastUser < 0) return { status: 'refused', reason: 'There is no answer to regenerate yet.' };
    const cut = await this.cutHistory(lastUser + 1);
    if (!cut.ok) return { status: 'refused', reason: cut.reason };
    return this.chat.regenerate();
  }

  private async cutHistory(length: number): Promise<{ ok: true } | { ok: false; reason: string }> {
    await this.followup.clearAhead('the chat was edited', { stopPrediction: true });
    return this.chat.cut(length);
  }

  /** Retries the last failed turn, keeping the user's message and finished tool results. */
  async retry(): Promise<TurnOutcome | undefined> {
    if (this.chat.busy || !this.chat.canResume()) return undefined;
    await this.followup.abortSpeculation('retry');
    return this.chat.retry();
  }

  /** Stops the running turn (a promoted speculation too). */
  stop(): void {
    this.chat.stop();
    this.followup.stopPromoted();
  }

  /**
   * Rewinds the conversation to a point (Restore to here, when the user chose to): the messages
   * after its `historyLength` go. Files are not touched: undo the later checkpoints first.
   */
  async rewindConversation(historyLength: number): Promise<{ ok: true } | { ok: false; reason: string }> {
    const blocked = this.undo.undoBlocker();
    if (blocked) return { ok: false, reason: blocked };
    if (historyLength >= this.chat.messages.length) return { ok: true };
    const cut = await this.cutHistory(historyLength);
    if (cut.ok) this.chat.settleLastTurn();
    return cut;
  }

  // ── the follow-up: suggestion, speculation, Tab ─────────────────────────────────────────────

  /** The chat input became non-empty (or empty again). Starting to type dismisses the suggestion and aborts its speculation. */
  setUserTyping(typing: boolean): void {
    this.followup.setUserTyping(typing);
  }

  /** Typing, pasting, Escape: the suggestion goes and its speculation is aborted, overlay deleted. */
  dismissSuggestion(): void {
    this.followup.dismissSuggestion();
  }

  /** Aborts the current speculation: closes its request, deletes its overlay. */
  abortSpeculation(why = 'aborted'): Promise<void> {
    return this.followup.abortSpeculation(why);
  }

  /** Tab (or Enter when enabled) on the visible suggestion (followupDriver.ts says what each state of its run does). */
  acceptSuggestion(method: Exclude<AcceptMethod, 'right'>): Promise<void> {
    return this.followup.acceptSpeculation(method);
  }

  /** The user's answer for one conflicting file; when none is left the accept completes. */
  resolveConflict(path: string, choice: ConflictChoice): Promise<void> {
    return this.followup.resolveConflict(path, choice);
  }

  /** Conflicts pending: the caller may abandon the accept (nothing more is written). */
  get conflictsPending(): boolean {
    return this.followup.conflictsPending;
  }

  /** The user's "run it live" on a refused accept's notice: the request runs as a normal turn now. */
  runRefusedLive(): Promise<TurnOutcome | undefined> {
    return this.followup.runRefusedLive();
  }

  /** Palette "Discard" on a pending conflict or a ready run: nothing is applied. */
  discard(): Promise<void> {
    return this.followup.discard();
  }

  // ── review before Tab ────────────────────────────────────────────────────────────────────────

  /** Leaves `path` out of the current speculation's accept (or puts it back); others are kept. */
  setExcluded(runId: string, path: string, excluded: boolean): void {
    this.followup.review.setExcluded(runId, path, excluded);
  }

  /** The hunks of `path` in run `runId` against the workspace (what its preview diff shows). */
  speculationHunks(runId: string, path: string): Promise<Hunk[]> {
    return this.followup.review.speculationHunks(runId, path);
  }

  /** Drops one hunk of `path` from run `runId` before Tab; refused once Tab was pressed. */
  dropSpeculationHunk(runId: string, path: string, hunkId: string): Promise<DroppedHunks> {
    return this.followup.review.dropSpeculationHunk(runId, path, hunkId);
  }

  droppedHunks(runId: string): DroppedHunks[] {
    return this.followup.review.droppedHunks(runId);
  }

  excludedFiles(runId: string): string[] {
    return this.followup.review.excludedFiles(runId);
  }

  // ── checkpoints: undo, redo, one change at a time (session/sessionCheckpoints.ts) ───────────

  /** The store checkpoints are recorded in (the UI reads blobs and lists from it). */
  get checkpointStore(): CheckpointStore | undefined {
    return this.undo.store;
  }

  planUndo(id: string): Promise<RestorePlan> {
    return this.undo.planUndo(id);
  }

  planRedo(id: string): Promise<RestorePlan> {
    return this.undo.planRedo(id);
  }

  /** Undoes a checkpoint (files changed since are kept unless listed in `force`); the suggestion and its speculation go first. */
  undoCheckpoint(id: string, force: readonly string[] = [], keep: readonly string[] = []): Promise<RestoreOutcome> {
    return this.undo.undoCheckpoint(id, force, keep);
  }

  redoCheckpoint(id: string, force: readonly string[] = [], keep: readonly string[] = []): Promise<RestoreOutcome> {
    return this.undo.redoCheckpoint(id, force, keep);
  }

  checkpointHunks(id: string, path: string): Promise<Hunk[]> {
    return this.undo.checkpointHunks(id, path);
  }

  rememberCheckpointAfter(id: string): Promise<void> {
    return this.undo.rememberCheckpointAfter(id);
  }

  undoCheckpointHunk(id: string, path: string, hunkId: string, options: { overwrite?: boolean } = {}): Promise<HunkUndoOutcome> {
    return this.undo.undoCheckpointHunk(id, path, hunkId, options);
  }

  // ── settings and lifecycle ───────────────────────────────────────────────────────────────────

  /** A changed model, endpoint or approval mode aborts the speculation built on the old one. */
  updateConfig(incoming: SessionConfig): void {
    this.followup.configChanged(this.chat.updateConfig(incoming));
  }

  /** New chat: the old conversation, its suggestion, speculation and cache snapshot all go. */
  async newChat(): Promise<void> {
    this.chat.stop();
    await this.followup.reset();
    this.chat.reset();
  }

  /**
   * A stored chat in place of the current one (opened from the history, or restored after a
   * reload): whatever ran is stopped and its overlay deleted first, as for a new chat. Forks can
   * start from it at once when it ends with an answer.
   */
  async openChat(chat: { messages: readonly ChatMessage[]; usage?: UsageSnapshot }): Promise<{ ok: true } | { ok: false; reason: string }> {
    await this.newChat();
    return this.chat.open(chat);
  }

  async dispose(): Promise<void> {
    this.chat.stop();
    await this.followup.dispose();
    await this.chat.recordingFs?.seal().catch(() => null);
    // An accept's or undo's flush runs after its result is shown; closing the window right after Tab
    // waits for it (VS Code awaits deactivate), so its redo log is gone, not left for recovery.
    await flushed(this.options.toolContext.fs.root);
    this.listeners.clear();
  }
}
