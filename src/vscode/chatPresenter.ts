// Turns the session's events into the webview protocol and keeps the transcript snapshot that a
// reloaded webview gets in `init`. Pure TypeScript (no vscode import) so it is unit-tested directly.
import type { ApprovalAnswer, ApprovalPrompter, ApprovalRequest } from '../core/chat/approvals';
import type { ChatEvent, ToolCallStatus as CoreToolStatus } from '../core/chat/events';
import type { ChatMessage } from '../core/messages';
import type { SpeculationEvent, SpeculationSnapshot, ToolCallRecord } from '../core/followup/speculation';
import type { SessionEvent } from '../core/session';
import type {
  ApprovalDecision,
  ChatSettings,
  ChatSnapshot,
  ConflictFile,
  HostToWebview,
  ModelInfo,
  SpeculationStatus,
  ToolCallStatus,
  ToolCallView,
  TranscriptItem,
} from '../shared/protocol';
import { speculationNoticeText } from '../shared/protocol';

const MAX_RESULT_CHARS = 20_000;

function clip(text: string): string {
  return text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}\n… (${text.length - MAX_RESULT_CHARS} more characters)` : text;
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
  };
  switch (snapshot.status) {
    case 'running':
      return { state: 'running', ...base };
    case 'completed':
      return { state: 'ready', ...base };
    case 'boundary':
      return {
        state: 'boundary',
        ...base,
        boundary: { type: snapshot.boundary?.type ?? 'limit', tool: snapshot.boundary?.tool ?? '', detail: snapshot.boundary?.detail ?? 'stopped' },
      };
    case 'failed':
      return { state: 'failed', ...base, error: snapshot.error ?? 'failed' };
    case 'aborted':
      return { state: 'idle', toolCalls: 0, filesWritten: [] };
  }
}

/** What an approval shows beyond its summary: the command, the file and the size of the change. */
export function approvalDetail(request: Pick<ApprovalRequest, 'tool' | 'args' | 'summary'>): string {
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
    default:
      return request.summary;
  }
}

/** Rebuilds transcript items from messages (an accepted speculation's turns). */
export function itemsFromMessages(messages: readonly ChatMessage[], records: readonly ToolCallRecord[], nextId: () => string, speculated: boolean): TranscriptItem[] {
  const byId = new Map(records.map((record) => [record.id, record]));
  const results = new Map<string, string>();
  for (const message of messages) if (message.role === 'tool') results.set(message.tool_call_id, message.content);
  const items: TranscriptItem[] = [];
  for (const message of messages) {
    if (message.role === 'user') items.push({ kind: 'user', id: nextId(), text: message.content, speculated });
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
        };
      });
      items.push({ kind: 'toolGroup', id: nextId(), calls, done: true, speculated });
    }
  }
  return items;
}

export interface PresenterOptions {
  post: (message: HostToWebview) => void;
  model: () => ModelInfo;
  settings: () => ChatSettings;
}

/**
 * Owns the transcript as the webview shows it. Session events go in; protocol messages go out
 * and the snapshot stays in step, so `init` after a reload shows exactly what was on screen.
 */
export class ChatPresenter implements ApprovalPrompter {
  private transcript: TranscriptItem[] = [];
  private counter = 0;
  private busy = false;
  private suggestion: { id: string; text: string } | null = null;
  private speculation: SpeculationStatus = { state: 'idle', toolCalls: 0, filesWritten: [] };
  private openAssistant: string | undefined;
  private openGroup: string | undefined;
  private readonly pendingApprovals = new Map<string, { resolve: (answer: ApprovalAnswer) => void; callId: string }>();
  private conflictSetId: string | undefined;

  constructor(private readonly options: PresenterOptions) {}

  private id(prefix: string): string {
    return `${prefix}${++this.counter}`;
  }

  private post(message: HostToWebview): void {
    this.options.post(message);
  }

  snapshot(): ChatSnapshot {
    return {
      transcript: structuredClone(this.transcript),
      busy: this.busy,
      suggestion: this.suggestion ? { ...this.suggestion } : null,
      speculation: structuredClone(this.speculation),
      model: this.options.model(),
      settings: this.options.settings(),
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
    this.post({ type: 'init', state: this.snapshot() });
  }

  sendConfig(): void {
    this.post({ type: 'config', model: this.options.model(), settings: this.options.settings() });
  }

  clear(): void {
    for (const pending of this.pendingApprovals.values()) pending.resolve('deny');
    this.pendingApprovals.clear();
    this.transcript = [];
    this.suggestion = null;
    this.speculation = { state: 'idle', toolCalls: 0, filesWritten: [] };
    this.openAssistant = undefined;
    this.openGroup = undefined;
    this.conflictSetId = undefined;
    this.post({ type: 'clear' });
  }

  notice(text: string): void {
    const id = this.id('n');
    this.transcript.push({ kind: 'notice', id, text });
    this.post({ type: 'notice', id, text });
  }

  error(message: string, retryable: boolean): void {
    this.closeOpen();
    const id = this.id('e');
    this.transcript.push({ kind: 'error', id, message, retryable });
    this.post({ type: 'error', id, message, retryable });
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
        const id = this.id('u');
        this.transcript.push({ kind: 'user', id, text: event.text });
        this.post({ type: 'userMessage', id, text: event.text });
        return;
      }
      case 'busy':
        this.busy = event.busy;
        if (!event.busy) this.closeOpen();
        this.post({ type: 'turnState', busy: event.busy });
        return;
      case 'suggestion':
        if (event.text === null) {
          if (!this.suggestion) return;
          this.suggestion = null;
          this.post({ type: 'suggestionCleared' });
        } else {
          this.suggestion = { id: this.id('s'), text: event.text };
          this.post({ type: 'suggestion', ...this.suggestion });
        }
        return;
      case 'speculation':
        this.speculation = speculationStatusOf(event.snapshot, this.suggestion?.id);
        this.post({ type: 'speculation', status: this.speculation });
        return;
      case 'speculation_promoted': {
        const items = itemsFromMessages(event.snapshot.messages, event.snapshot.toolCalls, () => this.id('p'), true);
        this.appendItems(items);
        return;
      }
      case 'speculation_progress':
        return this.handleProgress(event.event);
      case 'speculation_accepted': {
        if (!event.alreadyRendered) this.appendItems(itemsFromMessages(event.messages, event.toolCalls, () => this.id('p'), true));
        this.closeOpen();
        const kept = event.notApplied.length > 0 ? ` · kept your version of ${event.notApplied.join(', ')}` : '';
        const live = event.continuesLive ? ' · continuing live' : '';
        this.notice(`${speculationNoticeText(event.toolCalls.length, event.timeSavedMs)}${kept}${live}`);
        return;
      }
      case 'conflicts': {
        const id = this.id('c');
        this.conflictSetId = id;
        const files: ConflictFile[] = event.conflicts.map((c) => ({ path: c.path, reason: c.reason }));
        this.transcript.push({ kind: 'conflicts', id, files });
        this.post({ type: 'conflicts', id, files });
        return;
      }
      case 'notice':
        this.notice(event.text);
        return;
    }
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
        return this.handleChat(
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
      case 'reasoning':
        this.post({ type: 'reasoningDelta', id: this.openAssistantMessage(speculated), text: event.delta });
        return;
      case 'turn_done':
      case 'turn_aborted':
        this.closeOpen();
        if (event.type === 'turn_aborted') this.notice('Stopped.');
        return;
      case 'turn_error':
        this.error(event.message, event.kind !== 'aborted');
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
