// Turns the session's events into the webview protocol and keeps the transcript snapshot that a
// reloaded webview gets in `init`. Pure TypeScript (no vscode import) so it is unit-tested directly.
import type { ApprovalAnswer, ApprovalPrompter, ApprovalRequest } from '../core/chat/approvals';
import type { ChatEvent, ToolCallStatus as CoreToolStatus } from '../core/chat/events';
import type { ChatMessage } from '../core/messages';
import type { SpeculationEvent, SpeculationSnapshot, ToolCallRecord } from '../core/followup/speculation';
import type { CheckpointSummary, RestoreConflict } from '../core/checkpoints';
import type { SessionEvent } from '../core/session';
import { acceptLineText, changedText, checkpointView, undoConflictFiles } from './checkpointViews';
import { attachmentLabel, userTextOf, type Attachment } from '../core/context/attachments';
import { describeContext, type ContextSource } from '../core/context/turnContext';
import { costOf, formatCost, formatCounts, formatUsageSummary, summarizeUsage, type PriceTable } from '../core/usage/prices';
import { UsageLedger, type TokenCounts, type UsageSnapshot, type UsageSource } from '../core/usage/usageLedger';
import { isTranscriptItem } from '../shared/protocol';
import type { ErrorAction } from '../core/llm/llmClient';
import { boundarySentence } from './boundaryWords';
import type {
  AttachmentView,
  ApprovalDecision,
  ChatAction,
  ChatActionId,
  ChatSettings,
  ChatSnapshot,
  ConflictFile,
  FolderView,
  HostToWebview,
  ModelInfo,
  NoticeTone,
  SpeculationStatus,
  ToolCallStatus,
  ToolCallView,
  SpeculationFiles,
  TranscriptItem,
  UndoConflictResolution,
  UndoDirection,
  UsageLine,
} from '../shared/protocol';
import { CHAT_ACTION_LABELS } from '../shared/protocol';
import { SpeculationPreviewRelay } from './speculationPreview';

const MAX_RESULT_CHARS = 20_000;
/** Steps of a sub-agent kept on its card. */
const MAX_PROGRESS_LINES = 50;

function clip(text: string): string {
  return text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}\n… (${text.length - MAX_RESULT_CHARS} more characters)` : text;
}

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

function viewStatus(status: CoreToolStatus): ToolCallStatus {
  // The webview shows every core status; the two lists are kept equal on purpose.
  return status;
}

/** The speculation status line: words for every state, never overlay paths. */
export function speculationStatusOf(snapshot: SpeculationSnapshot | null, suggestionId?: string): SpeculationStatus {
  if (!snapshot) return { state: 'idle', toolCalls: 0, filesWritten: [] };
  const base = {
    toolCalls: snapshot.toolCalls.filter((call) => call.executed).length,
    filesWritten: snapshot.filesWritten.map((file) => file.path),
    ...(suggestionId ? { suggestionId } : {}),
    ...(snapshot.commitAhead ? { commitAhead: { moves: snapshot.commitAhead.moves, log: snapshot.commitAhead.log, note: snapshot.commitAhead.note } } : {}),
  };
  switch (snapshot.status) {
    case 'running':
      return { state: 'running', ...base };
    case 'completed':
      return { state: 'ready', ...base };
    case 'boundary': {
      const boundary = snapshot.boundary ?? { type: 'limit' as const, tool: '', detail: 'stopped' };
      const record = snapshot.toolCalls.find((call) => call.decision === 'boundary');
      return {
        state: 'boundary',
        ...base,
        boundary: { type: boundary.type, tool: boundary.tool, detail: boundary.detail, text: boundarySentence(boundary, record, base.toolCalls) },
      };
    }
    case 'failed':
      return { state: 'failed', ...base, error: snapshot.errorReason ?? snapshot.error ?? 'failed' };
    case 'aborted':
      return { state: 'idle', toolCalls: 0, filesWritten: [] };
  }
}

/** What an approval shows beyond its summary: the command, the file and the size of the change. */
export function approvalDetail(request: Pick<ApprovalRequest, 'tool' | 'args' | 'summary' | 'change'>): string {
  const base = callDetail(request);
  const change = request.change;
  if (!change) return base;
  // The change itself, so the user judges what will be written and not a summary of it.
  const warning = change.protected
    ? `Protected file: ${change.path} — ${change.protected.why} (it matches "${change.protected.pattern}" in speculate.protectedPaths).`
    : undefined;
  return [warning, base, change.diff].filter((part) => part !== undefined && part !== '').join('\n\n');
}

function callDetail(request: Pick<ApprovalRequest, 'tool' | 'args' | 'summary'>): string {
  const args = request.args;
  const str = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : '');
  switch (request.tool) {
    case 'run_shell_command':
      return str('directory') ? `${str('command')}\n(in ${str('directory')})` : str('command');
    case 'edit': {
      const removed = str('old_string').split('\n').length;
      const added = str('new_string').split('\n').length;
      return `${str('file_path')}: replace ${removed} line${removed === 1 ? '' : 's'} with ${added}${args.replace_all === true ? ' (every occurrence)' : ''}`;
    }
    case 'write_file':
      return `${str('file_path')}: write ${str('content').split('\n').length} lines`;
    case 'web_fetch':
      return str('url');
    case 'web_search':
      return str('query');
    case 'exit_plan_mode':
      // The plan card shows the whole plan: it is what the user approves.
      return str('plan');
    default:
      // An MCP call is judged on its arguments, as a command is on its text: all of them, as sent.
      if (request.tool.startsWith('mcp__')) return `${request.summary}\n${JSON.stringify(args, null, 2)}`;
      return request.summary;
  }
}

/**
 * Rebuilds transcript items from messages (an accepted speculation's turns, or a stored chat without
 * its view). `onUser` learns which message each user item stands for, by its index in `messages`.
 */
export function itemsFromMessages(
  messages: readonly ChatMessage[],
  records: readonly ToolCallRecord[],
  nextId: () => string,
  speculated: boolean,
  onUser?: (itemId: string, messageIndex: number) => void,
): TranscriptItem[] {
  const byId = new Map(records.map((record) => [record.id, record]));
  const results = new Map<string, string>();
  for (const message of messages) if (message.role === 'tool') results.set(message.tool_call_id, message.content);
  const items: TranscriptItem[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role === 'user') {
      const id = nextId();
      items.push({ kind: 'user', id, text: userTextOf(message.content), ...(speculated ? { speculated } : {}) });
      onUser?.(id, index);
    }
    if (message.role !== 'assistant') continue;
    if (message.content) items.push({ kind: 'assistant', id: nextId(), text: message.content, speculated });
    if (message.tool_calls && message.tool_calls.length > 0) {
      const calls: ToolCallView[] = message.tool_calls.map((call) => {
        const record = byId.get(call.id);
        const result = results.get(call.id);
        return {
          callId: call.id,
          tool: call.function.name,
          summary: record?.summary || call.function.name,
          status: record?.ok === false ? 'error' : 'ok',
          ...(result !== undefined ? { result: clip(result) } : {}),
          ...(record?.sandboxed ? { sandbox: { writable: record.sandboxed.writable, changed: [...record.sandboxed.changed] } } : {}),
        };
      });
      items.push({ kind: 'toolGroup', id: nextId(), calls, done: true, ...(speculated ? { speculated } : {}) });
    }
  }
  return items;
}

/** The presenter's picture of a chat as it is stored beside the messages (StoredChat.view). */
export interface PresenterView {
  transcript: TranscriptItem[];
  /** [user item id, index of its message in the history]. */
  userHistory: [string, number][];
  counter: number;
}

function isPresenterView(value: unknown): value is PresenterView {
  if (typeof value !== 'object' || value === null) return false;
  const view = value as Record<string, unknown>;
  return (
    Array.isArray(view.transcript) &&
    view.transcript.every(isTranscriptItem) &&
    Array.isArray(view.userHistory) &&
    view.userHistory.every((pair) => Array.isArray(pair) && typeof pair[0] === 'string' && Number.isInteger(pair[1])) &&
    typeof view.counter === 'number' &&
    Number.isInteger(view.counter)
  );
}

/** Words for tokens (and money, with a price table): "12.3k in (9k cached) · 350 out · $0.004". */
export function usageText(source: UsageSource, model: string, counts: TokenCounts, prices: PriceTable | undefined): UsageLine {
  const cost = prices ? costOf([{ source, model, ...counts }], prices) : undefined;
  const money = cost && cost.unpriced.length === 0 ? ` · ${formatCost(cost.amount, prices!.currency)}` : '';
  return { text: `${formatCounts(counts)}${money}`, detail: `${model}: ${counts.input} input tokens (${counts.cached} from the prefix cache), ${counts.output} output tokens` };
}

/** The chat's line: its own tokens, then what suggestions and speculation added. */
export function chatUsageLine(snapshot: UsageSnapshot, prices: PriceTable | undefined): UsageLine | null {
  const summary = summarizeUsage(UsageLedger.restore(snapshot), prices);
  if (summary.total.input === 0 && summary.total.output === 0) return null;
  const background = summary.background.input + summary.background.output > 0
    ? ` · background ${formatCounts(summary.background)} (${Math.round(summary.backgroundShare * 100)}% of the ${summary.shareOf})`
    : '';
  const cost = summary.cost && summary.cost.unpriced.length === 0 ? ` · ${summary.cost.total}` : '';
  return { text: `This chat: ${formatCounts(summary.chat)}${background}${cost}`, detail: formatUsageSummary(summary, 'This chat').join('\n') };
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
export class ChatPresenter implements ApprovalPrompter {
  private transcript: TranscriptItem[] = [];
  /** Notices shown above every chat (pinNotice). */
  private pinned: TranscriptItem[] = [];
  private counter = 0;
  private busy = false;
  private suggestion: { id: string; text: string } | null = null;
  private speculation: SpeculationStatus = { state: 'idle', toolCalls: 0, filesWritten: [] };
  private openAssistant: string | undefined;
  private openGroup: string | undefined;
  /** The context line last shown (it is shown again only when it changes). */
  private lastContext = '';
  private readonly reportedSkillProblems = new Set<string>();
  private readonly pendingApprovals = new Map<string, { resolve: (answer: ApprovalAnswer) => void; callId: string }>();
  private conflictSetId: string | undefined;
  /** Which history message each user item stands for (Edit & resend needs it). */
  private userHistory = new Map<string, number>();
  /** Chips of a message being edited, shown again on its resent version. */
  private editedAttachments: { historyIndex: number; attachments: AttachmentView[] } | undefined;
  private usageLine: UsageLine | null = null;
  private title = '';
  /** The off-screen copy of the running speculation in the webview, and Tab's reveal of it. */
  private readonly previews = new SpeculationPreviewRelay({
    post: (message) => this.post(message),
    nextId: (prefix) => this.id(prefix),
    toItems: itemsFromMessages,
  });
  private speculationFiles: SpeculationFiles | null = null;

  constructor(private readonly options: PresenterOptions) {}

  private id(prefix: string): string {
    return `${prefix}${++this.counter}`;
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
    for (const pending of this.pendingApprovals.values()) pending.resolve('deny');
    this.pendingApprovals.clear();
    this.transcript = [];
    this.lastContext = '';
    this.suggestion = null;
    this.speculation = { state: 'idle', toolCalls: 0, filesWritten: [] };
    this.openAssistant = undefined;
    this.openGroup = undefined;
    this.conflictSetId = undefined;
    this.userHistory.clear();
    this.editedAttachments = undefined;
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
    return { transcript: structuredClone(this.transcript), userHistory: [...this.userHistory], counter: this.counter };
  }

  /**
   * Shows a stored chat: its stored view when that is sound, else a view rebuilt from its
   * messages (less detail: no notices or approvals, but every message and tool result).
   */
  loadChat(chat: { messages: readonly ChatMessage[]; view?: unknown; usage?: UsageSnapshot; title: string }): void {
    this.clear();
    if (isPresenterView(chat.view)) {
      // Saved mid-turn: nothing streams any more after a reload.
      this.transcript = structuredClone(chat.view.transcript).map(settled);
      this.userHistory = new Map(chat.view.userHistory);
      this.counter = Math.max(this.counter, chat.view.counter);
    } else {
      this.transcript = itemsFromMessages(chat.messages, [], () => this.id('r'), false, (id, index) => this.userHistory.set(id, index));
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
    return this.userHistory.get(id);
  }

  /** Edit & resend is about to replace the message `id`: its chips go onto the resent one. */
  prepareEdit(id: string): void {
    const historyIndex = this.userHistory.get(id);
    const item = this.transcript.find((t) => t.kind === 'user' && t.id === id);
    if (historyIndex === undefined || item?.kind !== 'user') return;
    this.editedAttachments = { historyIndex, attachments: item.attachments ?? [] };
  }

  private attachmentViews(attachments: readonly Attachment[]): AttachmentView[] {
    return attachments.map((attachment) => ({
      id: this.id('att'),
      kind: attachment.kind,
      label: attachmentLabel(attachment),
      path: attachment.path,
      ...(attachment.kind === 'selection' ? { line: attachment.startLine } : {}),
    }));
  }

  /** Everything from the first user item at or past `length` in the history goes (Edit), or else the answer after the last one (Regenerate). */
  private truncateHistory(length: number): void {
    this.closeOpen();
    let cut = this.transcript.findIndex((item) => item.kind === 'user' && (this.userHistory.get(item.id) ?? -1) >= length);
    if (cut < 0) {
      let lastUser = this.transcript.length - 1;
      while (lastUser >= 0 && !(this.transcript[lastUser].kind === 'user' && (this.userHistory.get(this.transcript[lastUser].id) ?? Infinity) < length)) lastUser--;
      cut = lastUser + 1;
    }
    const removed = this.transcript.splice(cut);
    for (const item of removed) this.userHistory.delete(item.id);
    const afterId = cut > 0 ? this.transcript[cut - 1].id : undefined;
    this.post(afterId ? { type: 'truncate', afterId } : { type: 'truncate' });
  }

  private onUsage(event: Extract<SessionEvent, { type: 'usage' }>): void {
    const prices = this.options.prices?.();
    if (event.source === 'chat') {
      const line = usageText(event.source, event.model, event.counts, prices);
      this.appendItems([{ kind: 'usage', id: this.id('us'), text: line.text, detail: line.detail }]);
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
    this.closeOpen();
    const id = this.id('e');
    const buttons = errorActions(actions);
    const extra = buttons.length > 0 ? { actions: buttons } : {};
    this.transcript.push({ kind: 'error', id, message, retryable, ...extra });
    this.post({ type: 'error', id, message, retryable, ...extra });
  }

  // ── approvals (the session's ApprovalPrompter) ──────────────────────────────────────────────

  request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const id = this.id('a');
    const detail = approvalDetail(request);
    this.setCallStatus(request.callId, 'pending-approval');
    this.transcript.push({ kind: 'approval', id, tool: request.tool, summary: request.summary, detail, callId: request.callId });
    this.post({ type: 'approvalRequest', id, tool: request.tool, summary: request.summary, detail, callId: request.callId });
    return new Promise<ApprovalAnswer>((resolve) => {
      const settle = (answer: ApprovalAnswer) => {
        if (!this.pendingApprovals.delete(id)) return;
        const decision: ApprovalDecision = answer === 'allow_always' ? 'always' : answer;
        const item = this.transcript.find((t) => t.kind === 'approval' && t.id === id);
        if (item && item.kind === 'approval') item.decision = decision;
        this.setCallStatus(request.callId, answer === 'deny' ? 'denied' : 'running');
        this.post({ type: 'approvalResolved', id, decision });
        resolve(answer);
      };
      this.pendingApprovals.set(id, { resolve: settle, callId: request.callId });
      request.signal?.addEventListener('abort', () => settle('deny'), { once: true });
    });
  }

  answerApproval(id: string, decision: ApprovalDecision): void {
    this.pendingApprovals.get(id)?.resolve(decision === 'always' ? 'allow_always' : decision);
  }

  get approvalPending(): boolean {
    return this.pendingApprovals.size > 0;
  }

  // ── session events ───────────────────────────────────────────────────────────────────────────

  handle(event: SessionEvent): void {
    switch (event.type) {
      case 'chat':
        return this.handleChat(event.event, false);
      case 'user_message': {
        this.previews.interrupted();
        const id = this.id('u');
        const edited = this.editedAttachments?.historyIndex === event.historyIndex ? this.editedAttachments.attachments : [];
        this.editedAttachments = undefined;
        const attachments = event.attachments.length > 0 ? this.attachmentViews(event.attachments) : edited;
        const extra = attachments.length > 0 ? { attachments } : {};
        this.transcript.push({ kind: 'user', id, text: event.text, ...extra });
        if (event.historyIndex >= 0) this.userHistory.set(id, event.historyIndex);
        this.post({ type: 'userMessage', id, text: event.text, ...extra });
        return;
      }
      case 'history_truncated':
        this.previews.interrupted();
        return this.truncateHistory(event.length);
      case 'usage':
        return this.onUsage(event);
      case 'busy':
        if (event.busy) this.previews.interrupted();
        this.busy = event.busy;
        if (!event.busy) this.closeOpen();
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
        const items = itemsFromMessages(event.snapshot.messages, event.snapshot.toolCalls, () => this.id('p'), true, (id, index) => this.userHistory.set(id, event.historyStart + index));
        this.appendItems(items);
        return;
      }
      case 'speculation_progress':
        return this.handleProgress(event.event);
      case 'speculation_accepted': {
        const onUser = (id: string, index: number) => this.userHistory.set(id, event.historyStart + index);
        const revealed = this.previews.accepted(event.runId, event.messages, event.toolCalls, event.notApplied, onUser);
        if (revealed) this.keepRevealed(revealed.items, revealed.at);
        else if (!event.alreadyRendered) this.appendItems(itemsFromMessages(event.messages, event.toolCalls, () => this.id('p'), true, onUser));
        this.closeOpen();
        this.turnEnd(acceptLineText(event), event.checkpoint, event.point.historyLength, true);
        return;
      }
      case 'turn_recorded':
        this.turnEnd(event.checkpoint ? changedText(event.checkpoint) : '', event.checkpoint, event.point.historyLength, false);
        return;
      case 'checkpoint_changed':
        return this.checkpointChanged(event.checkpoint);
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
        this.contextUsed(event.sources);
        return;
      case 'fork_unavailable':
        // Said quietly where running ahead is shown, not as an error in the chat.
        this.speculation = { state: 'failed', toolCalls: 0, filesWritten: [], error: event.reason };
        this.post({ type: 'speculation', status: this.speculation });
        return;
    }
  }

  // ── checkpoints: the line at each turn's end, undo conflicts, review before Tab ──────────────

  private turnEnd(text: string, checkpoint: CheckpointSummary | null, historyLength: number, speculated: boolean): void {
    const item: TranscriptItem = {
      kind: 'turnEnd',
      id: this.id('t'),
      text,
      historyLength,
      ...(checkpoint ? { checkpoint: checkpointView(checkpoint) } : {}),
      ...(speculated ? { speculated } : {}),
    };
    this.appendItems([item]);
  }

  private checkpointChanged(summary: CheckpointSummary): void {
    const view = checkpointView(summary);
    for (const item of this.transcript) if (item.kind === 'turnEnd' && item.checkpoint?.checkpointId === view.checkpointId) item.checkpoint = view;
    this.post({ type: 'checkpointUpdate', checkpoint: view });
  }

  /** The turn-end line `id`, if it is in this chat. */
  turnEndItem(id: string): Extract<TranscriptItem, { kind: 'turnEnd' }> | undefined {
    const item = this.transcript.find((t) => t.kind === 'turnEnd' && t.id === id);
    return item?.kind === 'turnEnd' ? item : undefined;
  }

  /**
   * The checkpoints of the lines after the item `itemId` (a turn-end line for Restore to here, a
   * user message for Edit & resend) that are not undone, newest first.
   */
  checkpointsAfter(itemId: string): string[] {
    const at = this.transcript.findIndex((t) => t.id === itemId && (t.kind === 'turnEnd' || t.kind === 'user'));
    if (at < 0) return [];
    const later = this.transcript.slice(at + 1).flatMap((t) => (t.kind === 'turnEnd' && t.checkpoint?.state === 'applied' ? [t.checkpoint.checkpointId] : []));
    return [...new Set(later)].reverse();
  }

  /** Shows the files an undo (or redo) found changed since; returns the block's id. */
  undoConflicts(checkpointId: string, direction: UndoDirection, conflicts: readonly RestoreConflict[]): string {
    const id = this.id('uc');
    this.appendItems([{ kind: 'undoConflicts', id, checkpointId, direction, files: undoConflictFiles(conflicts) }]);
    return id;
  }

  undoConflictResolved(id: string, path: string, resolution: UndoConflictResolution): void {
    const item = this.transcript.find((t) => t.kind === 'undoConflicts' && t.id === id);
    const file = item?.kind === 'undoConflicts' ? item.files.find((f) => f.path === path) : undefined;
    if (!file) return;
    file.resolution = resolution;
    this.post({ type: 'undoConflictResolved', id, path, resolution });
  }

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

  /** The revealed turns were applied as shown: they join the transcript where the webview shows them. */
  private keepRevealed(items: TranscriptItem[], at: number): void {
    this.closeOpen();
    this.transcript.splice(Math.min(at, this.transcript.length), 0, ...items);
  }

  private appendItems(items: TranscriptItem[]): void {
    if (items.length === 0) return;
    this.closeOpen();
    this.transcript.push(...items);
    this.post({ type: 'appendItems', items });
  }

  private handleProgress(event: SpeculationEvent): void {
    switch (event.type) {
      case 'assistant_start':
        this.closeOpen();
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
        if (event.record.sandboxed) this.markSandboxed(event.record.id, event.record.sandboxed);
        return;
      case 'status':
        return;
    }
  }

  private handleChat(event: ChatEvent, speculated: boolean): void {
    switch (event.type) {
      case 'text': {
        const id = this.openAssistantMessage(speculated);
        const item = this.transcript.find((t) => t.kind === 'assistant' && t.id === id);
        if (item && item.kind === 'assistant') item.text += event.delta;
        this.post({ type: 'assistantDelta', id, text: event.delta });
        return;
      }
      case 'assistant_message':
        this.closeAssistant();
        return;
      case 'tool_call_started': {
        this.closeAssistant();
        const call: ToolCallView = { callId: event.callId, tool: event.name, summary: event.summary, status: 'running' };
        if (!this.openGroup) {
          const id = this.id('g');
          this.openGroup = id;
          this.transcript.push({ kind: 'toolGroup', id, calls: [call], done: false, ...(speculated ? { speculated } : {}) });
          this.post({ type: 'toolGroupStart', id, calls: [call], ...(speculated ? { speculated } : {}) });
        } else {
          this.updateCall(call);
        }
        return;
      }
      case 'tool_call_finished':
        this.updateCall({ callId: event.callId, tool: event.name, summary: event.summary, status: viewStatus(event.status), result: clip(event.result) });
        return;
      case 'tool_call_progress':
        this.addProgress(event.callId, event.line);
        return;
      case 'reasoning':
        this.post({ type: 'reasoningDelta', id: this.openAssistantMessage(speculated), text: event.delta });
        return;
      case 'turn_done':
      case 'turn_aborted':
        this.closeOpen();
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

  /** The assistant message that streamed text joins; a new one starts after a tool group. */
  private openAssistantMessage(speculated: boolean): string {
    if (this.openGroup) this.closeGroup();
    if (this.openAssistant) return this.openAssistant;
    const id = this.id('m');
    this.openAssistant = id;
    this.transcript.push({ kind: 'assistant', id, text: '', streaming: true, ...(speculated ? { speculated } : {}) });
    this.post({ type: 'assistantStart', id, ...(speculated ? { speculated } : {}) });
    return id;
  }

  private findCall(callId: string): { group: Extract<TranscriptItem, { kind: 'toolGroup' }>; index: number } | undefined {
    for (let i = this.transcript.length - 1; i >= 0; i--) {
      const item = this.transcript[i];
      if (item.kind !== 'toolGroup') continue;
      const index = item.calls.findIndex((c) => c.callId === callId);
      if (index >= 0) return { group: item, index };
    }
    return undefined;
  }

  private updateCall(call: ToolCallView): void {
    const found = this.findCall(call.callId);
    if (found) {
      found.group.calls[found.index] = { ...found.group.calls[found.index], ...call };
      this.post({ type: 'toolCallUpdate', groupId: found.group.id, call: found.group.calls[found.index] });
      return;
    }
    const group = this.transcript.find((t) => t.kind === 'toolGroup' && t.id === this.openGroup);
    if (group && group.kind === 'toolGroup') {
      group.calls.push(call);
      this.post({ type: 'toolCallUpdate', groupId: group.id, call });
    }
  }

  /** A step of a long call (a sub-agent's): kept on its card, the newest MAX_PROGRESS_LINES of them. */
  private addProgress(callId: string, line: string): void {
    const found = this.findCall(callId);
    if (!found) return;
    const call = found.group.calls[found.index];
    const progress = [...(call.progress ?? []), line.length > 200 ? `${line.slice(0, 199)}…` : line].slice(-MAX_PROGRESS_LINES);
    found.group.calls[found.index] = { ...call, progress };
    this.post({ type: 'toolCallUpdate', groupId: found.group.id, call: found.group.calls[found.index] });
  }

  /**
   * What the turn's system prompt held beyond its fixed part, said quietly when it changes (not on
   * every turn); a skill that could not be read is said once, as a warning.
   */
  private contextUsed(sources: readonly ContextSource[]): void {
    const text = describeContext(sources);
    if (text !== '' && text !== this.lastContext) this.notice(`Context: ${text}`);
    this.lastContext = text;
    for (const source of sources) {
      if (source.kind !== 'skill_problem') continue;
      const key = `${source.path}\u0000${source.reason}`;
      if (this.reportedSkillProblems.has(key)) continue;
      this.reportedSkillProblems.add(key);
      this.notice(`Skill not loaded: ${source.path} ${source.reason}.`, { tone: 'warning' });
    }
  }

  /** A call that ran ahead in the sandbox: its card says so and lists what it changed. */
  private markSandboxed(callId: string, sandboxed: { writable: boolean; changed: string[] }): void {
    const found = this.findCall(callId);
    if (!found) return;
    found.group.calls[found.index] = { ...found.group.calls[found.index], sandbox: { writable: sandboxed.writable, changed: [...sandboxed.changed] } };
    this.post({ type: 'toolCallUpdate', groupId: found.group.id, call: found.group.calls[found.index] });
  }

  private setCallStatus(callId: string, status: ToolCallStatus): void {
    const found = this.findCall(callId);
    if (!found) return;
    found.group.calls[found.index] = { ...found.group.calls[found.index], status };
    this.post({ type: 'toolCallUpdate', groupId: found.group.id, call: found.group.calls[found.index] });
  }

  private closeAssistant(): void {
    if (!this.openAssistant) return;
    const item = this.transcript.find((t) => t.kind === 'assistant' && t.id === this.openAssistant);
    if (item && item.kind === 'assistant') delete item.streaming;
    this.post({ type: 'assistantEnd', id: this.openAssistant });
    this.openAssistant = undefined;
  }

  private closeGroup(): void {
    if (!this.openGroup) return;
    const group = this.transcript.find((t) => t.kind === 'toolGroup' && t.id === this.openGroup);
    if (group && group.kind === 'toolGroup') group.done = true;
    this.post({ type: 'toolGroupEnd', id: this.openGroup });
    this.openGroup = undefined;
  }

  private closeOpen(): void {
    this.closeAssistant();
    this.closeGroup();
  }
}

/** A stored item as it shows after a reload: no stream open, every tool group finished. */
function settled(item: TranscriptItem): TranscriptItem {
  if (item.kind === 'assistant' && item.streaming) {
    const { streaming: _streaming, ...rest } = item;
    return rest;
  }
  if (item.kind === 'toolGroup' && !item.done) return { ...item, done: true };
  return item;
}
