// Keeps the webview's off-screen copy of the running speculation current (speculationPreview) and
// settles Tab's reveal of it: applied, waiting on conflicts, or withdrawn. Pure TypeScript, no vscode.
import type { SpeculationSnapshot, ToolCallRecord } from '../../core/followup/speculation';
import type { ChatMessage } from '../../core/messages';
import { ensureToolResultPairing } from '../../core/messages/pairing';
import type { ChatSession } from '../../core/session';
import type { HostToWebview, SpeculationPreview, Suggestion, TranscriptItem } from '../../shared/protocol';

/** How messages become transcript items: the presenter's itemsFromMessages (passed in, not imported back). */
export type ItemsFromMessages = (
  messages: readonly ChatMessage[],
  records: readonly ToolCallRecord[],
  nextId: () => string,
  speculated: boolean,
  onUser?: (itemId: string, messageIndex: number) => void,
) => TranscriptItem[];

export interface PreviewRelayOptions {
  post(message: HostToWebview): void;
  /** A fresh host id with this prefix, from the presenter's counter so ids stay unique in the chat. */
  nextId(prefix: string): string;
  toItems: ItemsFromMessages;
}

/** The version of the preview the webview holds. */
interface Sent {
  runId: string;
  /** Prefix of this run's item ids: an item keeps its id from version to version. */
  runKey: string;
  suggestionId: string;
  seq: number;
  final: boolean;
  items: TranscriptItem[];
  /** JSON of each item, to find the first one that changed. */
  itemJson: string[];
  next: Suggestion | null;
  /** What the last snapshot looked like, to skip the work when only a tool started or ended. */
  shape: string;
}

/** A reveal the host accepted and has not settled yet. */
interface PendingReveal {
  seq: number;
  runId: string;
  runKey: string;
  suggestionId: string;
  items: TranscriptItem[];
  state: 'applying' | 'conflicts';
  /** False once the webview reloaded: it no longer shows the block, so the result is appended instead. */
  inWebview: boolean;
  /** Where the block sits in the presenter's transcript (later items, e.g. the conflicts, follow it). */
  at: number;
}

function isFinal(snapshot: SpeculationSnapshot): boolean {
  return snapshot.status === 'completed' || snapshot.status === 'boundary';
}

export class SpeculationPreviewRelay {
  private seq = 0;
  private sent: Sent | undefined;
  private reveal: PendingReveal | undefined;
  /** The pipelined suggestion's id given out in a preview: the suggestion keeps it when it is shown. */
  private reserved: Suggestion | undefined;

  constructor(private readonly options: PreviewRelayOptions) {}

  /** After each speculation snapshot: sends what changed, or that there is no preview any more. */
  update(snapshot: SpeculationSnapshot | null, suggestionId: string | undefined): void {
    if (snapshot && this.reveal?.runId === snapshot.id) return;
    const usable = snapshot && suggestionId && snapshot.status !== 'aborted' && snapshot.status !== 'failed';
    if (!usable) {
      this.drop();
      return;
    }
    const shape = `${snapshot.status}|${snapshot.messages.length}|${snapshot.pipelinedSuggestion ?? ''}|${suggestionId}`;
    const previous = this.sent?.runId === snapshot.id && this.sent.suggestionId === suggestionId ? this.sent : undefined;
    if (previous?.shape === shape) return;
    const runKey = previous?.runKey ?? this.options.nextId('v');
    const items = this.previewItems(snapshot.messages, snapshot.toolCalls, runKey);
    const itemJson = items.map((item) => JSON.stringify(item));
    const final = isFinal(snapshot);
    const next = final && snapshot.status === 'completed' && snapshot.pipelinedSuggestion ? this.reserve(snapshot.pipelinedSuggestion) : null;
    let from = 0;
    if (previous) {
      while (from < items.length && from < previous.itemJson.length && itemJson[from] === previous.itemJson[from]) from++;
      const unchanged = from === items.length && from === previous.items.length && previous.final === final && previous.next?.id === next?.id;
      if (unchanged) {
        previous.shape = shape;
        return;
      }
    }
    const seq = ++this.seq;
    this.sent = { runId: snapshot.id, runKey, suggestionId, seq, final, items, itemJson, next, shape };
    this.options.post({ type: 'speculationPreview', preview: { seq, suggestionId, final, from, items: items.slice(from), next } });
  }

  /** The whole preview, for `init` after the webview (re)loads. */
  forInit(): SpeculationPreview | undefined {
    const sent = this.sent;
    if (!sent) return undefined;
    return { seq: sent.seq, suggestionId: sent.suggestionId, final: sent.final, from: 0, items: structuredClone(sent.items), next: sent.next };
  }

  /** The webview reloaded: a block it had revealed is gone from its screen. */
  webviewReloaded(): void {
    if (this.reveal) this.reveal.inWebview = false;
  }

  /**
   * Tab revealed preview `seq`. Accepted only when that is exactly what the host would apply now:
   * the newest version sent, of a finished run, whose turns still match the run's. Otherwise the
   * webview is told to take the block down (and the caller accepts the usual way).
   */
  begin(seq: number, snapshot: SpeculationSnapshot | null, at: number): boolean {
    const sent = this.sent;
    const matches =
      sent !== undefined && sent.seq === seq && sent.final && snapshot !== null && snapshot.id === sent.runId && isFinal(snapshot) &&
      JSON.stringify(this.previewItems(snapshot.messages, snapshot.toolCalls, sent.runKey)) === JSON.stringify(sent.items);
    if (!matches || this.reveal) {
      this.refuse(seq);
      return false;
    }
    // The webview moved its copy on screen: there is no off-screen preview left on either side.
    this.sent = undefined;
    this.reveal = { seq, runId: sent.runId, runKey: sent.runKey, suggestionId: sent.suggestionId, items: sent.items, state: 'applying', inWebview: true, at };
    return true;
  }

  /** A reveal the host will not apply (another suggestion, an older version): the block goes. */
  refuse(seq: number): void {
    this.options.post({ type: 'revealAnswer', seq, outcome: 'withdrawn', notApplied: [] });
  }

  /** The webview cleared this suggestion itself when it revealed the block: no suggestionCleared needed. */
  clearedByReveal(suggestionId: string | undefined): boolean {
    return suggestionId !== undefined && this.reveal?.suggestionId === suggestionId && this.reveal.inWebview;
  }

  /** The id for a suggestion the session shows: the one reserved for it in a preview, if any. */
  takeReservedId(text: string): string | undefined {
    const reserved = this.reserved;
    if (!reserved || reserved.text !== text) return undefined;
    this.reserved = undefined;
    return reserved.id;
  }

  /**
   * The revealed run was applied and injected. Returns the items to keep in the transcript and
   * where they sit, or undefined when the turns must be appended the usual way: this accept was no
   * reveal, the webview reloaded since (it no longer shows the block), or the injected turns differ
   * from the revealed ones (then the block is withdrawn first).
   */
  accepted(
    runId: string,
    messages: readonly ChatMessage[],
    toolCalls: readonly ToolCallRecord[],
    notApplied: readonly string[],
    /** Told which message each kept user item stands for (Edit & resend). */
    onUser?: (itemId: string, messageIndex: number) => void,
  ): { items: TranscriptItem[]; at: number } | undefined {
    const reveal = this.reveal;
    if (!reveal || reveal.runId !== runId) return undefined;
    this.reveal = undefined;
    if (!reveal.inWebview) return undefined;
    // The injected turns differ from the revealed ones only where the user kept their own file
    // (a note on that tool result); anything else means the block is not what was applied.
    const users: [string, number][] = [];
    const items = this.previewItems(messages, toolCalls, reveal.runKey, (id, index) => users.push([id, index]));
    const updates = changedCalls(reveal.items, items);
    if (updates === undefined) {
      this.options.post({ type: 'revealAnswer', seq: reveal.seq, outcome: 'withdrawn', notApplied: [] });
      return undefined;
    }
    for (const [id, index] of users) onUser?.(id, index);
    for (const update of updates) this.options.post(update);
    this.options.post({ type: 'revealAnswer', seq: reveal.seq, outcome: 'applied', notApplied: [...notApplied] });
    return { items, at: reveal.at };
  }

  /** The revealed run's apply found files changed under it; nothing more happens until the user chooses. */
  conflicts(runId: string, paths: readonly string[]): void {
    const reveal = this.reveal;
    if (!reveal || reveal.runId !== runId) return;
    reveal.state = 'conflicts';
    if (reveal.inWebview) this.options.post({ type: 'revealAnswer', seq: reveal.seq, outcome: 'conflicts', notApplied: [...paths] });
  }

  /**
   * Something other than the revealed run's accept happened (a notice, a live turn, the run was
   * dropped): the accept did not inject it, so the block must not stay on screen as if it had.
   */
  interrupted(): void {
    const reveal = this.reveal;
    if (!reveal) return;
    this.reveal = undefined;
    if (reveal.inWebview) this.options.post({ type: 'revealAnswer', seq: reveal.seq, outcome: 'withdrawn', notApplied: [] });
  }

  /** The session's accept call returned: a reveal it neither applied nor paused on conflicts did not happen. */
  acceptReturned(): void {
    if (this.reveal?.state === 'applying') this.interrupted();
  }

  /** Whether `event` is the revealed run's own snapshot (which must not withdraw it). */
  isRevealedRun(runId: string | undefined): boolean {
    return runId !== undefined && this.reveal?.runId === runId;
  }

  get revealPending(): boolean {
    return this.reveal !== undefined;
  }

  /** New chat. */
  clear(): void {
    this.sent = undefined;
    this.reveal = undefined;
    this.reserved = undefined;
  }

  /** The turns of a speculation as the transcript shows them once accepted, with ids stable per run. */
  private previewItems(messages: readonly ChatMessage[], records: readonly ToolCallRecord[], runKey: string, onUser?: (itemId: string, messageIndex: number) => void): TranscriptItem[] {
    let index = 0;
    return this.options.toItems(ensureToolResultPairing(messages), records, () => `${runKey}.${index++}`, true, onUser);
  }

  private drop(): void {
    if (!this.sent) return;
    this.sent = undefined;
    this.options.post({ type: 'speculationPreview', preview: null });
  }

  private reserve(text: string): Suggestion {
    if (this.reserved?.text !== text) this.reserved = { id: this.options.nextId('s'), text };
    return { ...this.reserved };
  }
}

/** The chat's side of a Tab on a revealed block (the presenter implements it; declared here so this room imports nothing above it). */
export interface RevealHost {
  readonly currentSuggestionId: string | undefined;
  /** True when the host takes preview `seq` (the accept that follows settles it). */
  beginReveal(seq: number, snapshot: SpeculationSnapshot | null): boolean;
  refuseReveal(seq: number): void;
  revealAcceptReturned(): void;
}

/** Who takes part in a Tab on a revealed block: the controller passes its session and presenter. */
export interface RevealParties {
  session: Pick<ChatSession, 'currentSpeculation' | 'acceptSuggestion'> | undefined;
  presenter: RevealHost;
  /** Today's accept: the host applies and sends the turns. */
  acceptUsual(): Promise<void>;
}

/**
 * Tab on a block the webview already revealed (preview `seq`). The host applies exactly that
 * version or refuses it; refused, the Tab is accepted the usual way — unless the suggestion itself
 * is no longer the current one, which the usual path ignores as well.
 */
export async function acceptRevealed(parties: RevealParties, tab: { suggestionId: string; seq: number; method: 'tab' | 'enter' }): Promise<void> {
  const { session, presenter } = parties;
  if (!session || tab.suggestionId !== presenter.currentSuggestionId) {
    presenter.refuseReveal(tab.seq);
    return;
  }
  // Checked and acted on in one go: nothing can change the run between the check and the accept.
  if (!presenter.beginReveal(tab.seq, session.currentSpeculation)) {
    await parties.acceptUsual();
    return;
  }
  try {
    await session.acceptSuggestion(tab.method);
  } finally {
    presenter.revealAcceptReturned();
  }
}

/**
 * The tool-call updates that turn the revealed items into the applied ones, or undefined when they
 * differ in more than tool results.
 */
function changedCalls(revealed: readonly TranscriptItem[], applied: readonly TranscriptItem[]): HostToWebview[] | undefined {
  if (revealed.length !== applied.length) return undefined;
  const updates: HostToWebview[] = [];
  for (let i = 0; i < revealed.length; i++) {
    const before = revealed[i];
    const after = applied[i];
    if (JSON.stringify(before) === JSON.stringify(after)) continue;
    if (before.kind !== 'toolGroup' || after.kind !== 'toolGroup' || before.id !== after.id || before.calls.length !== after.calls.length) return undefined;
    for (let c = 0; c < after.calls.length; c++) {
      const call = after.calls[c];
      const old = before.calls[c];
      if (old.callId !== call.callId || old.tool !== call.tool) return undefined;
      if (JSON.stringify(old) !== JSON.stringify(call)) updates.push({ type: 'toolCallUpdate', groupId: after.id, call });
    }
  }
  return updates;
}
