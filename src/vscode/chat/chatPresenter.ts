// Turns the session's events into the webview protocol and keeps the transcript snapshot that a
// reloaded webview gets in `init`. Pure TypeScript (no vscode import) so it is unit-tested directly.
import type { ApprovalAnswer, ApprovalPrompter, ApprovalRequest } from '../../core/chat/approvals';
import type { ChatEvent } from '../../core/chat/events';
import type { ChatMessage } from '../../core/messages';
import type { SpeculationEvent, SpeculationSnapshot } from '../../core/followup/speculation';
import type { RestoreConflict } from '../../core/checkpoints';
import type { SessionEvent } from '../../core/session';
import { acceptLineText, changedText } from '../checkpoints/checkpointViews';
import type { PriceTable } from '../../core/usage/prices';
import type { UsageSnapshot } from '../../core/usage/usageLedger';
import type { ErrorAction } from '../../core/llm/llmClient';
import type {
  ApprovalChoice,
  ChatAction,
  ChatActionId,
  ChatSettings,
  ChatSnapshot,
  ConflictFile,
  FolderView,
  HostToWebview,
  ModelInfo,
  NoticeTone,
  SpeculationStatusView,
  SpeculationFiles,
  TranscriptItem,
  UndoConflictResolution,
  UndoDirection,
  UsageLine,
} from '../../shared/protocol';
import { CHAT_ACTION_LABELS } from '../../shared/protocol';
import { SpeculationPreviewRelay, type RevealHost } from '../speculation/speculationPreview';
import { speculationStatusOf } from '../speculation/speculationStatus';
import { clip, itemsFromMessages, viewStatus } from './transcriptItems';
import { TranscriptModel } from './transcriptModel';
import { isPresenterView, settled, type PresenterView } from './storedView';
import { ApprovalCards } from './approvalCards';
import { CheckpointLines } from './checkpointLines';
import { UserItems } from './userItems';
import { ContextLine } from './contextLine';
import { chatUsageLine, usageText } from './usageLines';
import type { SpeculationFilesView } from '../speculation/speculationReview';
import type { CheckpointTranscript } from '../checkpoints/checkpointActions';
import type { HistoryTranscript } from '../history/historyActions';

const ACTION_IDS: Record<ErrorAction, ChatActionId> = {
  open_settings: 'openUserSettings',
  set_api_key: 'setApiKey',
  select_model: 'selectModel',
  set_up_endpoint: 'setUpEndpoint',
};

/** The buttons an error block offers: each fix as a chat action (the host maps it to a fixed command). */
export function errorActions(actions: readonly ErrorAction[]): ChatAction[] {
  return [...new Set(actions.map((action) => ACTION_IDS[action]))].map((id) => ({ action: id, label: CHAT_ACTION_LABELS[id] }));
}

export interface PresenterOptions {
  post: (message: HostToWebview) => void;
  model: () => ModelInfo;
  settings: () => ChatSettings;
  /** The price table in force (speculate.usage.prices); none = tokens only. */
  prices?: () => PriceTable | undefined;
  /** Every error shown in the chat also goes here (the Speculate output channel). */
  logError?: (message: string) => void;
  /** The folder the chat works on, for the header. */
  folder?: () => FolderView | undefined;
}

/**
 * Owns the transcript as the webview shows it. Session events go in; protocol messages go out
 * and the snapshot stays in step, so `init` after a reload shows exactly what was on screen.
 */
export class ChatPresenter implements ApprovalPrompter, RevealHost, SpeculationFilesView, CheckpointTranscript, HistoryTranscript {
  /** The transcript as the webview shows it, and the turn streaming into it. */
  private readonly model: TranscriptModel;
  /** Notices shown above every chat (pinNotice). */
  private pinned: TranscriptItem[] = [];
  private busy = false;
  private suggestion: { id: string; text: string } | null = null;
  private speculation: SpeculationStatusView = { state: 'idle', toolCalls: 0, filesWritten: [] };
  /** The context line above a turn: instructions, memory, skills (said when it changes). */
  private readonly contextLine = new ContextLine((text, extras) => this.notice(text, extras));
  private readonly approvals: ApprovalCards;
  private readonly checkpointLines: CheckpointLines;
  private conflictSetId: string | undefined;
  /** The user's messages and where each sits in the history (Edit & resend, Regenerate). */
  private readonly users: UserItems;
  private usageLine: UsageLine | null = null;
  private title = '';
  /** The off-screen copy of the running speculation in the webview, and Tab's reveal of it. */
  private readonly previews = new SpeculationPreviewRelay({
    post: (message) => this.post(message),
    nextId: (prefix) => this.id(prefix),
    toItems: itemsFromMessages,
  });
  private speculationFiles: SpeculationFiles | null = null;

  constructor(private readonly options: PresenterOptions) {
    this.model = new TranscriptModel((message) => this.post(message));
    this.approvals = new ApprovalCards(this.model);
    this.checkpointLines = new CheckpointLines(this.model);
    this.users = new UserItems(this.model);
  }

  private id(prefix: string): string {
    return this.model.nextId(prefix);
  }

  /** The items of the transcript (the model owns the array; loading a chat replaces it). */
  private get transcript(): TranscriptItem[] {
    return this.model.items;
  }

  /** Sends a message to the webview as is (replies that are not part of the transcript). */
  post(message: HostToWebview): void {
    this.options.post(message);
  }

  snapshot(): ChatSnapshot {
    const preview = this.previews.forInit();
    return {
      transcript: structuredClone([...this.pinned, ...this.transcript]),
      busy: this.busy,
      suggestion: this.suggestion ? { ...this.suggestion } : null,
      speculation: structuredClone(this.speculation),
      model: this.options.model(),
      settings: this.options.settings(),
      ...(this.options.folder?.() ? { folder: this.options.folder()! } : {}),
      usage: this.usageLine,
      title: this.title,
      ...(preview ? { preview } : {}),
      speculationFiles: structuredClone(this.speculationFiles),
    };
  }

  get currentSuggestionId(): string | undefined {
    return this.suggestion?.id;
  }

  get currentConflictSetId(): string | undefined {
    return this.conflictSetId;
  }

  /** Sends the full state (on `ready`, and after a reload). */
  sendInit(): void {
    this.previews.webviewReloaded();
    this.post({ type: 'init', state: this.snapshot() });
  }

  sendConfig(): void {
    const folder = this.options.folder?.();
    this.post({ type: 'config', model: this.options.model(), settings: this.options.settings(), ...(folder ? { folder } : {}) });
  }

  clear(): void {
    this.approvals.denyAll();
    this.model.reset();
    this.contextLine.reset();
    this.suggestion = null;
    this.speculation = { state: 'idle', toolCalls: 0, filesWritten: [] };
    this.conflictSetId = undefined;
    this.users.reset();
    this.usageLine = null;
    this.title = '';
    this.previews.clear();
    this.speculationFiles = null;
    this.post({ type: 'clear' });
    for (const item of this.pinned) if (item.kind === 'notice') this.post({ type: 'notice', ...structuredClone(item) });
  }

  // ── history, edit & resend, usage (the chat as stored) ──────────────────────────────────────

  /** What is stored beside the messages, so a reopened chat looks exactly as it did. */
  exportView(): PresenterView {
    return { transcript: structuredClone(this.transcript), userHistory: this.users.entries(), counter: this.model.counter };
  }

  /**
   * Shows a stored chat: its stored view when that is sound, else a view rebuilt from its
   * messages (less detail: no notices or approvals, but every message and tool result).
   */
  loadChat(chat: { messages: readonly ChatMessage[]; view?: unknown; usage?: UsageSnapshot; title: string }): void {
    this.clear();
    if (isPresenterView(chat.view)) {
      // Saved mid-turn: nothing streams any more after a reload.
      this.model.reset(structuredClone(chat.view.transcript).map(settled));
      this.users.reset(chat.view.userHistory);
      this.model.counter = Math.max(this.model.counter, chat.view.counter);
    } else {
      this.model.reset(itemsFromMessages(chat.messages, [], () => this.id('r'), false, (id, index) => this.users.remember(id, index)));
    }
    this.usageLine = chat.usage ? chatUsageLine(chat.usage, this.options.prices?.()) : null;
    this.title = chat.title;
    this.sendInit();
  }

  setTitle(title: string): void {
    this.title = title;
    this.post({ type: 'chatTitle', title });
  }

  /** The history index of the user message behind transcript item `id`. */
  historyIndexOf(id: string): number | undefined {
    return this.users.historyIndexOf(id);
  }

  /** Edit & resend is about to replace the message `id`: its chips go onto the resent one. */
  prepareEdit(id: string): void {
    this.users.prepareEdit(id);
  }



  private onUsage(event: Extract<SessionEvent, { type: 'usage' }>): void {
    const prices = this.options.prices?.();
    if (event.source === 'chat') {
      const line = usageText(event.source, event.model, event.counts, prices);
      this.model.append([{ kind: 'usage', id: this.id('us'), text: line.text, detail: line.detail }]);
    }
    this.usageLine = chatUsageLine(event.chat, prices);
    this.post({ type: 'chatUsage', usage: this.usageLine });
  }

  /** A line in the transcript; a 'warning' with actions is a block with buttons (ignored settings). */
  notice(text: string, extras: { tone?: NoticeTone; actions?: ChatAction[] } = {}): void {
    this.previews.interrupted();
    const id = this.id('n');
    this.transcript.push({ kind: 'notice', id, text, ...structuredClone(extras) });
    this.post({ type: 'notice', id, text, ...structuredClone(extras) });
  }

  /**
   * A notice above every chat while a condition lasts (an untrusted folder): shown again after New
   * Chat and with a reopened chat, never stored with a chat. Unpinned ones go with the next clear.
   */
  pinNotice(text: string, extras: { tone?: NoticeTone; actions?: ChatAction[] } = {}): void {
    const id = this.id('n');
    this.pinned.push({ kind: 'notice', id, text, ...structuredClone(extras) });
    this.post({ type: 'notice', id, text, ...structuredClone(extras) });
  }

  unpinNotices(): void {
    this.pinned = [];
  }

  error(message: string, retryable: boolean, actions: readonly ErrorAction[] = []): void {
    this.options.logError?.(message);
    this.model.closeOpen();
    const id = this.id('e');
    const buttons = errorActions(actions);
    const extra = buttons.length > 0 ? { actions: buttons } : {};
    this.transcript.push({ kind: 'error', id, message, retryable, ...extra });
    this.post({ type: 'error', id, message, retryable, ...extra });
  }

  // ── approvals (the session's ApprovalPrompter) ──────────────────────────────────────────────

  request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    return this.approvals.request(request);
  }

  answerApproval(id: string, decision: ApprovalChoice): void {
    this.approvals.answer(id, decision);
  }

  get approvalPending(): boolean {
    return this.approvals.pending;
  }

  // ── session events ───────────────────────────────────────────────────────────────────────────

  handle(event: SessionEvent): void {
    switch (event.type) {
      case 'chat':
        return this.handleChat(event.event, false);
      case 'user_message':
        this.previews.interrupted();
        return this.users.shown(event.text, event.historyIndex, event.attachments);
      case 'history_truncated':
        this.previews.interrupted();
        return this.users.truncate(event.length);
      case 'usage':
        return this.onUsage(event);
      case 'busy':
        if (event.busy) this.previews.interrupted();
        this.busy = event.busy;
        if (!event.busy) this.model.closeOpen();
        this.post({ type: 'turnState', busy: event.busy });
        // "Couldn't run ahead" was about the last suggestion; a new turn starts afresh.
        if (event.busy && this.speculation.state === 'failed' && this.speculation.suggestionId === undefined) {
          this.speculation = { state: 'idle', toolCalls: 0, filesWritten: [] };
          this.post({ type: 'speculation', status: this.speculation });
        }
        return;
      case 'suggestion':
        if (event.text === null) {
          if (!this.suggestion) return;
          const clearedByWebview = this.previews.clearedByReveal(this.suggestion.id);
          this.suggestion = null;
          if (!clearedByWebview) this.post({ type: 'suggestionCleared' });
        } else {
          this.suggestion = { id: this.previews.takeReservedId(event.text) ?? this.id('s'), text: event.text };
          this.post({ type: 'suggestion', ...this.suggestion });
        }
        return;
      case 'speculation':
        if (!this.previews.isRevealedRun(event.snapshot?.id)) this.previews.interrupted();
        // The preview first: by the time the line says "Ready — Tab to apply", Tab can reveal it.
        this.previews.update(event.snapshot, this.suggestion?.id);
        this.speculation = speculationStatusOf(event.snapshot, this.suggestion?.id);
        this.post({ type: 'speculation', status: this.speculation });
        return;
      case 'speculation_promoted': {
        const items = itemsFromMessages(event.snapshot.messages, event.snapshot.toolCalls, () => this.id('p'), true, (id, index) => this.users.remember(id, event.historyStart + index));
        this.model.append(items);
        return;
      }
      case 'speculation_progress':
        return this.handleProgress(event.event);
      case 'speculation_accepted': {
        const onUser = (id: string, index: number) => this.users.remember(id, event.historyStart + index);
        const revealed = this.previews.accepted(event.runId, event.messages, event.toolCalls, event.notApplied, onUser);
        if (revealed) this.model.keepRevealed(revealed.items, revealed.at);
        else if (!event.alreadyRendered) this.model.append(itemsFromMessages(event.messages, event.toolCalls, () => this.id('p'), true, onUser));
        this.model.closeOpen();
        this.checkpointLines.turnEnd(acceptLineText(event), event.checkpoint, event.point.historyLength, true);
        return;
      }
      case 'turn_recorded':
        this.checkpointLines.turnEnd(event.checkpoint ? changedText(event.checkpoint) : '', event.checkpoint, event.point.historyLength, false);
        return;
      case 'checkpoint_changed':
        return this.checkpointLines.changed(event.checkpoint);
      case 'conflicts': {
        this.previews.conflicts(event.runId, event.conflicts.map((c) => c.path));
        const id = this.id('c');
        this.conflictSetId = id;
        const files: ConflictFile[] = event.conflicts.map((c) => ({ path: c.path, reason: c.reason }));
        this.transcript.push({ kind: 'conflicts', id, files });
        this.post({ type: 'conflicts', id, files });
        return;
      }
      case 'notice':
        // A refused accept's offer becomes the button that runs the request live (on the user's word).
        this.notice(event.text, event.offer === 'run_live' ? { actions: [{ action: 'runLive', label: CHAT_ACTION_LABELS.runLive }] } : {});
        return;
      case 'context_used':
        this.contextLine.used(event.sources);
        return;
      case 'fork_unavailable':
        // Said quietly where running ahead is shown, not as an error in the chat.
        this.speculation = { state: 'failed', toolCalls: 0, filesWritten: [], error: event.reason };
        this.post({ type: 'speculation', status: this.speculation });
        return;
    }
  }

  // ── checkpoints: the line at each turn's end, undo conflicts (checkpointLines.ts) ───────────

  /** The turn-end line `id`, if it is in this chat. */
  turnEndItem(id: string): Extract<TranscriptItem, { kind: 'turnEnd' }> | undefined {
    return this.model.find('turnEnd', id);
  }

  checkpointsAfter(itemId: string): string[] {
    return this.checkpointLines.checkpointsAfter(itemId);
  }

  undoConflicts(checkpointId: string, direction: UndoDirection, conflicts: readonly RestoreConflict[]): string {
    return this.checkpointLines.undoConflicts(checkpointId, direction, conflicts);
  }

  undoConflictResolved(id: string, path: string, resolution: UndoConflictResolution): void {
    this.checkpointLines.undoConflictResolved(id, path, resolution);
  }

  // ── review before Tab ──────────────────────────────────────────────────────────────────────

  /**
   * The speculation's files for review before Tab (null hides the list). The list on screen again
   * sends nothing: a run refreshes it on every write and when it ends, and a second copy would only
   * arrive later, crossing the user's Tab.
   */
  setSpeculationFiles(files: SpeculationFiles | null): void {
    if (JSON.stringify(files) === JSON.stringify(this.speculationFiles)) return;
    this.speculationFiles = structuredClone(files);
    this.post({ type: 'speculationFiles', files });
  }

  conflictResolved(path: string, resolution: 'overwrite' | 'keep-mine'): void {
    const id = this.conflictSetId;
    if (!id) return;
    const item = this.transcript.find((t) => t.kind === 'conflicts' && t.id === id);
    if (item && item.kind === 'conflicts') {
      const file = item.files.find((f) => f.path === path);
      if (file) file.resolution = resolution;
      if (item.files.every((f) => f.resolution)) this.conflictSetId = undefined;
    }
    this.post({ type: 'conflictResolved', id, path, resolution });
  }

  // ── Tab's reveal of the off-screen speculated turns (the controller relays acceptRevealed) ────

  /**
   * The webview revealed preview `seq` on Tab. True when the host takes it (the accept that follows
   * settles it); false when it is not what the host would apply (the webview was told to take it down).
   */
  beginReveal(seq: number, snapshot: SpeculationSnapshot | null): boolean {
    return this.previews.begin(seq, snapshot, this.transcript.length);
  }

  /** A reveal of a suggestion that is no longer the current one: taken down, nothing accepted. */
  refuseReveal(seq: number): void {
    this.previews.refuse(seq);
  }

  /** The session's accept returned; a reveal it did not act on is taken down. */
  revealAcceptReturned(): void {
    this.previews.acceptReturned();
  }

  private handleProgress(event: SpeculationEvent): void {
    switch (event.type) {
      case 'assistant_start':
        this.model.closeOpen();
        return;
      case 'text':
        return this.handleChat({ type: 'text', delta: event.delta }, true);
      case 'tool_start':
        return this.handleChat({ type: 'tool_call_started', callId: event.record.id, name: event.record.name, args: event.record.args, summary: event.record.summary }, true);
      case 'tool_end':
        this.handleChat(
          {
            type: 'tool_call_finished',
            callId: event.record.id,
            name: event.record.name,
            summary: event.record.summary,
            status: event.record.ok ? 'ok' : 'error',
            result: event.record.result ?? '',
            filesChanged: [],
          },
          true,
        );
        if (event.record.sandboxed) this.model.markSandboxed(event.record.id, event.record.sandboxed);
        return;
      case 'status':
        return;
    }
  }

  private handleChat(event: ChatEvent, speculated: boolean): void {
    switch (event.type) {
      case 'text':
        return this.model.text(event.delta, speculated);
      case 'assistant_message':
        this.model.closeAssistant();
        return;
      case 'tool_call_started':
        return this.model.toolStarted({ callId: event.callId, tool: event.name, summary: event.summary, status: 'running' }, speculated);
      case 'tool_call_finished':
        this.model.updateCall({ callId: event.callId, tool: event.name, summary: event.summary, status: viewStatus(event.status), result: clip(event.result) });
        return;
      case 'tool_call_progress':
        this.model.addProgress(event.callId, event.line);
        return;
      case 'reasoning':
        this.post({ type: 'reasoningDelta', id: this.model.openAssistantMessage(speculated), text: event.delta });
        return;
      case 'turn_done':
      case 'turn_aborted':
        this.model.closeOpen();
        if (event.type === 'turn_aborted') this.notice('Stopped.');
        return;
      case 'turn_error':
        this.error(event.message, event.retryable && event.kind !== 'aborted', event.actions);
        return;
      case 'notice':
        this.notice(event.text);
        return;
      default:
        return;
    }
  }
}
