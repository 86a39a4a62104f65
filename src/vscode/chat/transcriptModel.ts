// The chat's transcript as the host keeps it, and the turn that is streaming into it: the open
// assistant message, the open tool group and its calls' updates, each change posted to the webview
// as it is made so the picture a reloaded webview gets in `init` is exactly the one on screen.
import type { HostToWebview, ToolCallStatusView, ToolCallView, TranscriptItem } from '../../shared/protocol';

/** Steps of a sub-agent kept on its card. */
const MAX_PROGRESS_LINES = 50;

type ToolGroupItem = Extract<TranscriptItem, { kind: 'toolGroup' }>;

export class TranscriptModel {
  items: TranscriptItem[] = [];
  /** The last id handed out; ids stay unique across a reload (it is stored with the chat's view). */
  counter = 0;
  private openAssistant: string | undefined;
  private openGroup: string | undefined;

  constructor(/** Every change goes to the webview as it is made. */ readonly post: (message: HostToWebview) => void) {}

  nextId(prefix: string): string {
    return `${prefix}${++this.counter}`;
  }

  /** A new chat (or another one loaded): nothing shown, nothing streaming; ids keep counting. */
  reset(items: TranscriptItem[] = []): void {
    this.items = items;
    this.openAssistant = undefined;
    this.openGroup = undefined;
  }

  find<K extends TranscriptItem['kind']>(kind: K, id: string): Extract<TranscriptItem, { kind: K }> | undefined {
    return this.items.find((item): item is Extract<TranscriptItem, { kind: K }> => item.kind === kind && item.id === id);
  }

  /** Streamed text joins the open assistant message. */
  text(delta: string, speculated: boolean): void {
    const id = this.openAssistantMessage(speculated);
    const item = this.find('assistant', id);
    if (item) item.text += delta;
    this.post({ type: 'assistantDelta', id, text: delta });
  }

  /** A tool call starts: in the open group, or a new group after text. */
  toolStarted(call: ToolCallView, speculated: boolean): void {
    this.closeAssistant();
    if (this.openGroup) return this.updateCall(call);
    const id = this.nextId('g');
    this.openGroup = id;
    this.items.push({ kind: 'toolGroup', id, calls: [call], done: false, ...(speculated ? { speculated } : {}) });
    this.post({ type: 'toolGroupStart', id, calls: [call], ...(speculated ? { speculated } : {}) });
  }

  append(items: TranscriptItem[]): void {
    if (items.length === 0) return;
    this.closeOpen();
    this.items.push(...items);
    this.post({ type: 'appendItems', items });
  }

  /** The revealed turns were applied as shown: they join the transcript where the webview shows them. */
  keepRevealed(items: TranscriptItem[], at: number): void {
    this.closeOpen();
    this.items.splice(Math.min(at, this.items.length), 0, ...items);
  }

  /** The assistant message that streamed text joins; a new one starts after a tool group. */
  openAssistantMessage(speculated: boolean): string {
    if (this.openGroup) this.closeGroup();
    if (this.openAssistant) return this.openAssistant;
    const id = this.nextId('m');
    this.openAssistant = id;
    this.items.push({ kind: 'assistant', id, text: '', streaming: true, ...(speculated ? { speculated } : {}) });
    this.post({ type: 'assistantStart', id, ...(speculated ? { speculated } : {}) });
    return id;
  }

  findCall(callId: string): { group: ToolGroupItem; index: number } | undefined {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item.kind !== 'toolGroup') continue;
      const index = item.calls.findIndex((c) => c.callId === callId);
      if (index >= 0) return { group: item, index };
    }
    return undefined;
  }

  updateCall(call: ToolCallView): void {
    const found = this.findCall(call.callId);
    if (found) {
      found.group.calls[found.index] = { ...found.group.calls[found.index], ...call };
      this.post({ type: 'toolCallUpdate', groupId: found.group.id, call: found.group.calls[found.index] });
      return;
    }
    const group = this.items.find((t) => t.kind === 'toolGroup' && t.id === this.openGroup);
    if (group && group.kind === 'toolGroup') {
      group.calls.push(call);
      this.post({ type: 'toolCallUpdate', groupId: group.id, call });
    }
  }

  /** A step of a long call (a sub-agent's): kept on its card, the newest MAX_PROGRESS_LINES of them. */
  addProgress(callId: string, line: string): void {
    const found = this.findCall(callId);
    if (!found) return;
    const call = found.group.calls[found.index];
    const progress = [...(call.progress ?? []), line.length > 200 ? `${line.slice(0, 199)}…` : line].slice(-MAX_PROGRESS_LINES);
    found.group.calls[found.index] = { ...call, progress };
    this.post({ type: 'toolCallUpdate', groupId: found.group.id, call: found.group.calls[found.index] });
  }

  /** A call that ran ahead in the sandbox: its card says so and lists what it changed. */
  markSandboxed(callId: string, sandboxed: { writable: boolean; changed: string[] }): void {
    const found = this.findCall(callId);
    if (!found) return;
    found.group.calls[found.index] = { ...found.group.calls[found.index], sandbox: { writable: sandboxed.writable, changed: [...sandboxed.changed] } };
    this.post({ type: 'toolCallUpdate', groupId: found.group.id, call: found.group.calls[found.index] });
  }

  setCallStatus(callId: string, status: ToolCallStatusView): void {
    const found = this.findCall(callId);
    if (!found) return;
    found.group.calls[found.index] = { ...found.group.calls[found.index], status };
    this.post({ type: 'toolCallUpdate', groupId: found.group.id, call: found.group.calls[found.index] });
  }

  closeAssistant(): void {
    if (!this.openAssistant) return;
    const item = this.items.find((t) => t.kind === 'assistant' && t.id === this.openAssistant);
    if (item && item.kind === 'assistant') delete item.streaming;
    this.post({ type: 'assistantEnd', id: this.openAssistant });
    this.openAssistant = undefined;
  }

  closeGroup(): void {
    if (!this.openGroup) return;
    const group = this.items.find((t) => t.kind === 'toolGroup' && t.id === this.openGroup);
    if (group && group.kind === 'toolGroup') group.done = true;
    this.post({ type: 'toolGroupEnd', id: this.openGroup });
    this.openGroup = undefined;
  }

  closeOpen(): void {
    this.closeAssistant();
    this.closeGroup();
  }
}
