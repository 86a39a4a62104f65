// The conversation pane: user messages, streamed assistant Markdown, tool groups, inline
// approvals, errors with Retry and the buttons that fix them, notices and conflict choices. Only the streaming message re-renders.
import type {
  AttachmentView,
  ApprovalChoice,
  ChatAction,
  ConflictFile,
  ConflictResolution,
  NoticeTone,
  ToolCallView,
  TranscriptItem,
  WebviewToHost,
} from '../shared/protocol';
import { button, h, isScrolledToEnd } from './dom';
import { icon, type IconName } from './icons';
import { renderMarkdown } from './markdown';
import { PLAN_TOOL, planDecisionText, renderPlanCard } from './planCard';
import { approvalDecisionText, renderApprovalCard } from './approvalCard';
import { ConflictBlocks } from './conflictBlock';
import { chatActionMessage, renderErrorBlock } from './errorBlock';
import { renderToolCall } from './toolCallCard';
import { attachmentChips, responseActions, userMessageActions } from './messageActions';


export interface TranscriptActions {
  post(message: WebviewToHost): void;
  /** Says something through the polite live region. */
  announce(text: string): void;
  /** true while the user has a draft in the input: approvals then do not take the focus. */
  isTyping(): boolean;
  focusInput(): void;
  /** Builds items other components own (turn-end lines, undo conflicts); the transcript places them. */
  renderItem?(item: TranscriptItem): HTMLElement | null;
}

interface AssistantEntry {
  body: HTMLElement;
  text: string;
  streaming: boolean;
  frame: number | null;
  /** The folded reasoning section, created on the first reasoning delta. */
  reasoning: { fold: HTMLDetailsElement; label: HTMLElement; content: HTMLElement; text: string } | null;
}

interface GroupEntry {
  element: HTMLElement;
  list: HTMLElement;
  rows: Map<string, HTMLElement>;
}

interface ApprovalEntry {
  element: HTMLElement;
  actions: HTMLElement;
  outcome: HTMLElement;
  allow: HTMLButtonElement;
  tool: string;
}

export class Transcript {
  /** The scrolling container; main.ts places it. */
  readonly element: HTMLElement;
  private readonly items: HTMLElement;
  private response: HTMLElement | null = null;
  private readonly assistants = new Map<string, AssistantEntry>();
  private readonly groups = new Map<string, GroupEntry>();
  private readonly approvals = new Map<string, ApprovalEntry>();
  private readonly conflictBlocks: ConflictBlocks;
  /** Renders hidden, for a later adopt(): no scrolling, and `element` is not the scroller. */
  private readonly offscreen: boolean;
  /** The last answer's article: only it offers Regenerate. */
  private latestResponse: HTMLElement | null = null;

  constructor(
    private readonly welcome: HTMLElement,
    private readonly actions: TranscriptActions,
    options: { offscreen?: boolean } = {},
  ) {
    this.offscreen = options.offscreen === true;
    this.conflictBlocks = new ConflictBlocks(actions);
    this.items = h('div', { class: 'transcript-items' });
    this.element = this.offscreen
      ? h('div', { class: 'transcript-offscreen', hidden: true, 'aria-hidden': 'true' }, this.items)
      : h('section', { class: 'transcript', 'aria-label': 'Conversation', tabindex: '-1' }, welcome, this.items);
    this.updateEmpty();
  }

  /**
   * A transcript rendered out of sight (the speculated block before Tab): same elements as the
   * visible one, so revealing it is moving them, not building them.
   */
  static offscreen(actions: TranscriptActions): Transcript {
    return new Transcript(h('div'), actions, { offscreen: true });
  }

  /**
   * Moves everything `staged` rendered to the end of this transcript, ids included, so later
   * messages about those items find them; `staged` is left empty. Returns the moved elements and
   * a function that takes them out again. (A new map of items by id must move here too.)
   */
  adopt(staged: Transcript): { elements: HTMLElement[]; remove(): void } {
    const elements = [...staged.items.children] as HTMLElement[];
    const moved = {
      assistants: [...staged.assistants],
      groups: [...staged.groups],
      approvals: [...staged.approvals],
    };
    let conflictIds: string[] = [];
    this.mutate(() => {
      this.items.append(...elements);
      conflictIds = this.conflictBlocks.takeFrom(staged.conflictBlocks);
      for (const [id, entry] of moved.assistants) this.assistants.set(id, entry);
      for (const [id, entry] of moved.groups) this.groups.set(id, entry);
      for (const [id, entry] of moved.approvals) this.approvals.set(id, entry);
      // What comes next joins the block's last response, as after appended items.
      this.response = staged.response;
    });
    staged.assistants.clear();
    staged.groups.clear();
    staged.approvals.clear();
    staged.response = null;
    const remove = (): void => {
      this.mutate(() => {
        if (this.response && elements.some((element) => element.contains(this.response))) this.response = null;
        for (const element of elements) element.remove();
        for (const [id] of moved.assistants) this.assistants.delete(id);
        for (const [id] of moved.groups) this.groups.delete(id);
        for (const [id] of moved.approvals) this.approvals.delete(id);
        this.conflictBlocks.forget(conflictIds);
      });
    };
    return { elements, remove };
  }

  /** Replaces everything (init). */
  reset(items: TranscriptItem[]): void {
    this.clear();
    for (const item of items) this.append(item);
  }

  clear(): void {
    for (const entry of this.assistants.values()) if (entry.frame !== null) cancelAnimationFrame(entry.frame);
    this.assistants.clear();
    this.groups.clear();
    this.approvals.clear();
    this.conflictBlocks.clear();
    this.response = null;
    this.latestResponse = null;
    this.items.replaceChildren();
    this.updateEmpty();
  }

  isEmpty(): boolean {
    return this.items.childElementCount === 0;
  }

  append(item: TranscriptItem): void {
    switch (item.kind) {
      case 'user':
        this.userMessage(item.id, item.text, item.speculated === true, item.attachments);
        break;
      case 'usage':
        this.usage(item.id, item.text, item.detail);
        break;
      case 'assistant':
        this.assistantStart(item.id, item.speculated === true);
        if (item.reasoning) this.reasoningDelta(item.id, item.reasoning);
        this.assistantDelta(item.id, item.text);
        if (!item.streaming) this.assistantEnd(item.id);
        break;
      case 'toolGroup':
        this.toolGroupStart(item.id, item.calls, item.speculated === true);
        if (item.done) this.toolGroupEnd(item.id);
        break;
      case 'approval':
        this.approvalRequest(item.id, item.tool, item.summary, item.detail, item.decision === undefined);
        if (item.decision) this.approvalResolved(item.id, item.decision);
        break;
      case 'error':
        this.error(item.id, item.message, item.retryable, item.actions);
        break;
      case 'notice':
        this.notice(item.id, item.text, item.tone, item.actions);
        break;
      case 'conflicts':
        this.conflicts(item.id, item.files);
        break;
      default: {
        const element = this.actions.renderItem?.(item);
        if (element) this.appendBlock(element);
      }
    }
  }

  /** A block another component built: it ends the current response, like a notice. */
  appendBlock(element: HTMLElement): void {
    this.mutate(() => {
      this.response = null;
      this.items.appendChild(element);
    });
  }

  userMessage(id: string, text: string, speculated: boolean, attachments?: AttachmentView[]): void {
    this.mutate(() => {
      this.response = null;
      const article = h(
        'article',
        { class: 'turn request', 'data-id': id, 'aria-label': speculated ? 'You (accepted suggestion)' : 'You' },
        this.header('account', 'You', speculated),
        h('div', { class: 'user-text' }, text),
        attachmentChips(attachments),
      );
      article.appendChild(userMessageActions(article, id, text, (message) => this.actions.post(message)));
      this.items.appendChild(article);
    });
  }

  /** What one answer cost, quietly under it. */
  usage(id: string, text: string, detail: string): void {
    this.mutate(() => {
      const line = h('div', { class: 'usage-line', 'data-id': id, title: detail }, text);
      const responses = this.items.querySelectorAll(':scope > article.response');
      const parts = responses[responses.length - 1]?.querySelector('.response-parts');
      (parts ?? this.items).appendChild(line);
    });
  }

  /** Edit & resend, Regenerate: everything after the item `afterId` goes (everything without it). */
  truncateAfter(afterId?: string): void {
    this.mutate(() => {
      let node: Element | null = afterId ? this.items.querySelector(`[data-id="${CSS.escape(afterId)}"]`) : null;
      if (afterId && !node) return;
      if (!node) this.items.replaceChildren();
      // Everything after the item, at its own level and at every level up to the transcript.
      while (node && node !== this.items) {
        while (node.nextSibling) node.nextSibling.remove();
        node = node.parentElement;
      }
      this.response = null;
      for (const [key, entry] of this.assistants) {
        if (entry.body.isConnected) continue;
        if (entry.frame !== null) cancelAnimationFrame(entry.frame);
        this.assistants.delete(key);
      }
      for (const [key, entry] of this.groups) if (!entry.element.isConnected) this.groups.delete(key);
      for (const [key, entry] of this.approvals) if (!entry.element.isConnected) this.approvals.delete(key);
      this.conflictBlocks.pruneDisconnected();
    });
  }

  /** The Markdown of every answer part of a response (what Copy copies). */
  private responseMarkdown(article: HTMLElement): string {
    const texts: string[] = [];
    for (const body of article.querySelectorAll<HTMLElement>('.assistant-text[data-id]')) {
      const text = this.assistants.get(body.dataset.id ?? '')?.text.trim();
      if (text) texts.push(text);
    }
    return texts.join('\n\n');
  }

  assistantStart(id: string, speculated: boolean): void {
    if (this.assistants.has(id)) return;
    this.mutate(() => {
      const body = h('div', { class: 'assistant-text markdown streaming', 'data-id': id });
      this.responseParts(speculated).appendChild(body);
      this.assistants.set(id, { body, text: '', streaming: true, frame: null, reasoning: null });
    });
  }

  assistantDelta(id: string, text: string): void {
    const entry = this.assistants.get(id);
    if (!entry || !entry.streaming || text === '') return;
    entry.text += text;
    // Deltas arrive faster than frames; render the message once per frame.
    if (entry.frame === null) {
      entry.frame = requestAnimationFrame(() => {
        entry.frame = null;
        this.mutate(() => this.renderAssistant(entry));
      });
    }
  }

  reasoningDelta(id: string, text: string): void {
    const entry = this.assistants.get(id);
    if (!entry || !entry.streaming || text === '') return;
    this.mutate(() => {
      if (!entry.reasoning) {
        const label = h('span', {}, 'Thinking…');
        const content = h('div', { class: 'reasoning-text' });
        const fold = h('details', { class: 'reasoning' }, h('summary', {}, icon('chevron', 'fold-chevron'), label), content);
        entry.body.before(fold);
        entry.reasoning = { fold, label, content, text: '' };
      }
      entry.reasoning.text += text;
      entry.reasoning.content.textContent = entry.reasoning.text;
    });
  }

  assistantEnd(id: string): void {
    const entry = this.assistants.get(id);
    if (!entry || !entry.streaming) return;
    if (entry.frame !== null) cancelAnimationFrame(entry.frame);
    entry.frame = null;
    entry.streaming = false;
    if (entry.reasoning) entry.reasoning.label.textContent = 'Reasoning';
    this.mutate(() => {
      entry.body.classList.remove('streaming');
      if (entry.text.trim() === '') entry.body.remove();
      else this.renderAssistant(entry);
    });
    if (entry.text.trim() !== '') this.actions.announce(entry.body.textContent ?? '');
  }

  toolGroupStart(id: string, calls: ToolCallView[], speculated: boolean): void {
    if (this.groups.has(id)) return;
    this.mutate(() => {
      const list = h('ul', { class: 'tool-calls' });
      const element = h('div', { class: 'tool-group running', 'data-id': id, role: 'group', 'aria-label': 'Tool calls' }, list);
      const entry: GroupEntry = { element, list, rows: new Map() };
      this.groups.set(id, entry);
      this.responseParts(speculated).appendChild(element);
      for (const call of calls) this.putCall(entry, call);
    });
  }

  toolCallUpdate(groupId: string, call: ToolCallView): void {
    const entry = this.groups.get(groupId);
    if (!entry) return;
    this.mutate(() => this.putCall(entry, call));
  }

  toolGroupEnd(id: string): void {
    const entry = this.groups.get(id);
    if (!entry) return;
    entry.element.classList.remove('running');
    entry.element.classList.add('done');
  }

  approvalRequest(id: string, tool: string, summary: string, detail: string, takeFocus = true): void {
    if (this.approvals.has(id)) return;
    const answer = (decision: ApprovalChoice): void => {
      if (!this.approvals.get(id)?.actions.isConnected) return;
      this.actions.post({ type: 'approvalAnswer', id, decision });
      this.approvalResolved(id, decision);
      this.actions.focusInput();
    };
    if (tool === PLAN_TOOL) {
      const card = renderPlanCard(id, detail, answer, (text) => this.actions.post({ type: 'copyText', text }));
      this.approvals.set(id, { ...card, tool });
      this.mutate(() => this.responseParts(false).appendChild(card.element));
      if (takeFocus) {
        this.actions.announce('A plan is ready: Approve and switch to auto-edit, or Keep planning.');
        if (!this.actions.isTyping()) card.allow.focus();
      }
      return;
    }
    const { element, actions, outcome, allow } = renderApprovalCard(id, tool, summary, detail, answer);
    this.approvals.set(id, { element, actions, outcome, allow, tool });
    this.mutate(() => this.responseParts(false).appendChild(element));
    if (takeFocus) {
      this.actions.announce(`Approval needed: ${tool}${summary ? `, ${summary}` : ''}. Allow, Always allow or Deny.`);
      if (!this.actions.isTyping()) allow.focus();
    }
  }

  approvalResolved(id: string, decision: ApprovalChoice): void {
    const entry = this.approvals.get(id);
    if (!entry || !entry.actions.isConnected) return;
    const hadFocus = entry.actions.contains(document.activeElement);
    entry.actions.remove();
    entry.element.classList.remove('pending');
    entry.element.classList.add(`decided-${decision}`);
    entry.outcome.hidden = false;
    entry.outcome.replaceChildren(icon(decision === 'deny' ? 'denied' : 'check'), h('span', {}, entry.tool === PLAN_TOOL ? planDecisionText(decision) : approvalDecisionText(decision)));
    if (hadFocus) this.actions.focusInput();
  }

  error(id: string, message: string, retryable: boolean, actions: readonly ChatAction[] = []): void {
    this.mutate(() => this.responseParts(false).appendChild(renderErrorBlock(id, message, retryable, actions, (m) => this.actions.post(m))));
  }

  private postAction(action: ChatAction): void {
    this.actions.post(chatActionMessage(action));
  }

  notice(id: string, text: string, tone: NoticeTone = 'info', actions: ChatAction[] = []): void {
    this.mutate(() => {
      this.response = null;
      if (tone === 'info' && actions.length === 0) {
        this.items.appendChild(h('div', { class: 'notice', 'data-id': id, role: 'note' }, icon('bolt'), h('span', {}, text)));
        return;
      }
      // A notice that limits the chat is a block of its own, with its buttons (the host runs them).
      const buttons = actions.map((action) =>
        button(action.label, () => this.postAction(action), {
          class: 'button secondary',
        }),
      );
      this.items.appendChild(
        h(
          'div',
          { class: `notice-block ${tone}`, 'data-id': id, role: 'note' },
          icon(tone === 'warning' ? 'shield' : 'bolt', 'notice-icon'),
          h('div', { class: 'notice-text' }, text),
          buttons.length > 0 ? h('div', { class: 'notice-actions' }, ...buttons) : null,
        ),
      );
    });
    this.actions.announce(text);
  }

  conflicts(id: string, files: ConflictFile[]): void {
    const block = this.conflictBlocks.render(id, files);
    if (!block) return;
    this.mutate(() => this.responseParts(false).appendChild(block.element));
    block.shown();
  }

  conflictResolved(id: string, path: string, resolution: ConflictResolution): void {
    this.conflictBlocks.resolved(id, path, resolution);
  }

  private renderAssistant(entry: AssistantEntry): void {
    entry.body.replaceChildren(renderMarkdown(entry.text, { copy: (text) => this.actions.post({ type: 'copyText', text }) }));
  }

  private putCall(entry: GroupEntry, call: ToolCallView): void {
    const row = renderToolCall(call, (path) => this.actions.post({ type: 'previewChanges', path }));
    const existing = entry.rows.get(call.callId);
    // Keep an open fold open when its call updates (each fold by its kind: a sub-agent's steps, the output).
    const open = new Set([...(existing?.querySelectorAll('details') ?? [])].filter((fold) => fold.open).map((fold) => fold.className));
    for (const fold of row.querySelectorAll('details')) if (open.has(fold.className)) fold.setAttribute('open', '');
    if (existing) existing.replaceWith(row);
    else entry.list.appendChild(row);
    entry.rows.set(call.callId, row);
  }

  /** The parts container of the current response, opening a new response after a user message. */
  private responseParts(speculated: boolean): HTMLElement {
    if (this.response) return this.response;
    const parts = h('div', { class: 'response-parts' });
    const article = h('article', { class: 'turn response', 'aria-label': 'Speculate' }, this.header('sparkle', 'Speculate', speculated), parts);
    article.appendChild(responseActions(() => this.responseMarkdown(article), (message) => this.actions.post(message)));
    this.items.appendChild(article);
    this.response = parts;
    return parts;
  }

  private header(iconName: IconName, name: string, speculated: boolean): HTMLElement {
    return h(
      'div',
      { class: 'turn-header' },
      h('span', { class: `avatar avatar-${iconName}` }, icon(iconName)),
      h('span', { class: 'turn-name' }, name),
      speculated ? h('span', { class: 'badge speculated', title: 'Ran ahead while the suggestion was shown' }, icon('bolt'), 'speculated') : null,
    );
  }

  /** Runs a DOM change, keeping the view pinned to the bottom if it was there before. */
  private mutate(change: () => void): void {
    if (this.offscreen) {
      change();
      return;
    }
    const scroller = this.element;
    const atBottom = isScrolledToEnd(scroller);
    change();
    this.updateEmpty();
    this.markLatestResponse();
    if (atBottom) scroller.scrollTop = scroller.scrollHeight;
  }

  private markLatestResponse(): void {
    const responses = this.items.querySelectorAll<HTMLElement>(':scope > article.response');
    const latest = responses[responses.length - 1] ?? null;
    if (latest === this.latestResponse) return;
    // An attribute, not a class: the article's classes say what it is, this only where it is.
    this.latestResponse?.removeAttribute('data-latest');
    latest?.setAttribute('data-latest', '');
    this.latestResponse = latest;
  }

  private updateEmpty(): void {
    const empty = this.isEmpty();
    this.welcome.hidden = !empty;
    this.element.classList.toggle('empty', empty);
  }
}
