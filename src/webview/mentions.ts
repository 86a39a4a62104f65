// Context for the next message: `@` in the input opens a list (workspace files, @selection,
// @problems), the paperclip opens it too, a file dropped on the chat is attached; the chips wait
// above the input and go with the message (their ids; the host holds what they attach).
import type { AttachmentView, MentionItem, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon, type IconName } from './icons';
import { attachmentChip } from './messageActions';

export interface MentionActions {
  post(message: WebviewToHost): void;
  announce(text: string): void;
}

/** An `@` at the start or after a space, and what follows it up to the caret. */
const MENTION_BEFORE_CARET = /(?:^|\s)@([^\s@]*)$/;
const QUERY_DELAY_MS = 60;
const ITEM_ICON: Record<MentionItem['kind'], IconName> = { file: 'file', selection: 'selection', problems: 'warning' };
/** What VS Code's explorer and the OS put on a dragged file. */
const URI_LIST_TYPES = ['application/vnd.code.uri-list', 'text/uri-list'];

/**
 * The files a drop carries, each once. VS Code's explorer puts several lists on a drag: `codefiles`
 * (the paths, as the extension host sees them: right in a remote window too), its own full URI list,
 * and `text/uri-list` (only the first file). The paths win; an OS drop has only the URI list.
 */
export function droppedFiles(data: DataTransfer): string[] {
  try {
    const paths = JSON.parse(data.getData('codefiles') || '[]') as unknown;
    if (Array.isArray(paths)) {
      const found = paths.filter((p): p is string => typeof p === 'string' && p !== '');
      if (found.length > 0) return [...new Set(found)];
    }
  } catch {
    // not VS Code's own list
  }
  const found: string[] = [];
  for (const type of URI_LIST_TYPES) {
    for (const line of data.getData(type).split(/\r?\n/)) if (line.trim() && !line.startsWith('#')) found.push(line.trim());
  }
  return [...new Set(found)];
}

export class Mentions {
  /** The chips above the input. */
  readonly chips: HTMLElement;
  /** The `@` list, shown above the input. */
  readonly popup: HTMLElement;
  readonly attachButton: HTMLButtonElement;
  private readonly attached: AttachmentView[] = [];
  private items: MentionItem[] = [];
  private active = 0;
  private requestId = 0;
  private mentionStart = -1;
  private queryTimer: number | undefined;

  constructor(private readonly textarea: HTMLTextAreaElement, private readonly actions: MentionActions) {
    this.chips = h('div', { class: 'chips input-chips', hidden: true, 'aria-label': 'Context for the next message' });
    this.popup = h('ul', { class: 'mention-list', role: 'listbox', id: 'mention-list', hidden: true, 'aria-label': 'Attach context' });
    this.attachButton = button(icon('attach'), () => this.openFromButton(), {
      class: 'icon-button attach',
      'aria-label': 'Attach context (@)',
      title: 'Attach a file, the selection or the problems (@)',
    });
    // Capture: the list takes its keys before the composer sees them (Enter must pick, not send).
    textarea.addEventListener('keydown', (event) => this.onKeyDown(event), { capture: true });
    textarea.addEventListener('input', () => this.update());
    textarea.addEventListener('click', () => this.update());
    // Leaving the input closes the list, unless the focus came back meanwhile (the paperclip's click).
    textarea.addEventListener('blur', () => window.setTimeout(() => document.activeElement !== textarea && this.close(), 150));
  }

  /** The chips' ids for `submit`. */
  ids(): string[] {
    return this.attached.map((a) => a.id);
  }

  /** After sending: the chips went with the message. */
  sent(): void {
    this.attached.length = 0;
    this.renderChips();
  }

  /** A new chat: chips waiting for the old one go (the host drops them too). */
  clear(): void {
    this.sent();
    this.close();
  }

  add(attachment: AttachmentView): void {
    if (this.attached.some((a) => a.id === attachment.id)) return;
    this.attached.push(attachment);
    this.renderChips();
    this.actions.announce(`Attached ${attachment.label}`);
  }

  private remove(id: string): void {
    const at = this.attached.findIndex((a) => a.id === id);
    if (at < 0) return;
    const [gone] = this.attached.splice(at, 1);
    this.actions.post({ type: 'removeAttachment', id });
    this.renderChips();
    this.actions.announce(`Removed ${gone!.label}`);
    this.textarea.focus();
  }

  private renderChips(): void {
    this.chips.replaceChildren(...this.attached.map((a) => attachmentChip(a, () => this.remove(a.id))));
    this.chips.hidden = this.attached.length === 0;
  }

  /** Lets a drop of files on `zone` attach them. */
  acceptDrops(zone: HTMLElement): void {
    zone.addEventListener('dragover', (event) => {
      const types = event.dataTransfer?.types ?? [];
      if (![...URI_LIST_TYPES, 'codefiles', 'Files'].some((t) => types.includes(t))) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
      zone.classList.add('drop-target');
    });
    zone.addEventListener('dragleave', () => zone.classList.remove('drop-target'));
    zone.addEventListener('drop', (event) => {
      zone.classList.remove('drop-target');
      const files = event.dataTransfer ? droppedFiles(event.dataTransfer) : [];
      if (files.length === 0) return;
      event.preventDefault();
      for (const file of files) this.actions.post({ type: 'attach', kind: 'file', path: file });
      this.textarea.focus();
    });
  }

  // ── the @ list ─────────────────────────────────────────────────────────────────────────────

  get isOpen(): boolean {
    return !this.popup.hidden;
  }

  private openFromButton(): void {
    const ta = this.textarea;
    ta.focus();
    const at = ta.selectionStart ?? ta.value.length;
    const before = ta.value.slice(0, at);
    const insert = before === '' || /\s$/.test(before) ? '@' : ' @';
    ta.setRangeText(insert, at, ta.selectionEnd ?? at, 'end');
    ta.dispatchEvent(new Event('input', { bubbles: true }));
  }

  /** Opens, narrows or closes the list from the text before the caret. */
  private update(): void {
    const ta = this.textarea;
    const caret = ta.selectionStart ?? 0;
    if (caret !== (ta.selectionEnd ?? caret)) return this.close();
    const match = MENTION_BEFORE_CARET.exec(ta.value.slice(0, caret));
    if (!match) return this.close();
    this.mentionStart = caret - match[1]!.length - 1;
    const query = match[1]!;
    window.clearTimeout(this.queryTimer);
    this.queryTimer = window.setTimeout(() => this.actions.post({ type: 'mentionQuery', requestId: ++this.requestId, query }), QUERY_DELAY_MS);
    if (this.popup.hidden) {
      this.popup.hidden = false;
      ta.setAttribute('aria-controls', 'mention-list');
      ta.setAttribute('aria-expanded', 'true');
    }
  }

  /** The host's items for request `requestId`; an answer to an older query is ignored. */
  show(requestId: number, items: MentionItem[]): void {
    if (requestId !== this.requestId || this.popup.hidden) return;
    this.items = items;
    this.active = 0;
    this.render();
  }

  private render(): void {
    const rows = this.items.map((item, index) => {
      const row = h(
        'li',
        { class: `mention-item mention-${item.kind}`, role: 'option', id: `mention-${index}`, 'aria-selected': String(index === this.active) },
        icon(ITEM_ICON[item.kind]),
        h('span', { class: 'mention-label' }, item.label),
        item.detail ? h('span', { class: 'mention-detail' }, item.detail) : null,
      );
      row.classList.toggle('active', index === this.active);
      row.addEventListener('mousedown', (event) => event.preventDefault());
      row.addEventListener('click', () => this.choose(index));
      return row;
    });
    const browse = h('li', { class: 'mention-item mention-browse', role: 'option', id: 'mention-browse' }, icon('attach'), h('span', { class: 'mention-label' }, 'Browse files…'));
    browse.addEventListener('mousedown', (event) => event.preventDefault());
    browse.addEventListener('click', () => this.choose(this.items.length));
    browse.classList.toggle('active', this.active === this.items.length);
    this.popup.replaceChildren(...rows, browse);
    this.textarea.setAttribute('aria-activedescendant', this.active < this.items.length ? `mention-${this.active}` : 'mention-browse');
    this.popup.querySelector('.active')?.scrollIntoView({ block: 'nearest' });
  }

  private close(): void {
    if (this.popup.hidden) return;
    window.clearTimeout(this.queryTimer);
    this.requestId++;
    this.popup.hidden = true;
    this.items = [];
    this.textarea.removeAttribute('aria-activedescendant');
    this.textarea.setAttribute('aria-expanded', 'false');
  }

  private onKeyDown(event: KeyboardEvent): void {
    if (this.popup.hidden || event.isComposing) return;
    const count = this.items.length + 1;
    const handled = (): void => {
      event.preventDefault();
      event.stopImmediatePropagation();
    };
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      handled();
      this.active = (this.active + (event.key === 'ArrowDown' ? 1 : -1) + count) % count;
      this.render();
    } else if ((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') {
      handled();
      this.choose(this.active);
    } else if (event.key === 'Escape') {
      handled();
      this.close();
    }
  }

  /** The `@query` text goes; the host resolves the item into a chip. */
  private choose(index: number): void {
    const ta = this.textarea;
    const caret = ta.selectionStart ?? ta.value.length;
    // Taken before the text changes: the input event below closes the list.
    const item = this.items[index];
    this.close();
    if (this.mentionStart >= 0 && this.mentionStart <= caret) {
      ta.setRangeText('', this.mentionStart, caret, 'end');
      ta.dispatchEvent(new Event('input', { bubbles: true }));
    }
    if (!item) this.actions.post({ type: 'pickAttachment' });
    else this.actions.post(item.kind === 'file' ? { type: 'attach', kind: 'file', path: item.path ?? item.label } : { type: 'attach', kind: item.kind });
    ta.focus();
  }
}
