// The history view: past chats of this workspace with title, date and workspace; search by text,
// open one, rename it in place, delete it (after a second click). Opened from the view's title bar.
import type { HistoryEntry, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';

/** What the history view needs of the chat page around it. */
export interface HistoryViewHost {
  post(message: WebviewToHost): void;
  announce(text: string): void;
  /** The history closed: the input gets the focus back. */
  closed(): void;
}

const SEARCH_DELAY_MS = 150;

/** "Today 14:05", "Yesterday", "3 Mar", "3 Mar 2023". */
export function formatWhen(ms: number, now = Date.now()): string {
  const date = new Date(ms);
  const today = new Date(now);
  const sameDay = (a: Date, b: Date) => a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (sameDay(date, today)) return `Today ${time}`;
  const yesterday = new Date(now - 24 * 60 * 60 * 1000);
  if (sameDay(date, yesterday)) return `Yesterday ${time}`;
  const options: Intl.DateTimeFormatOptions = date.getFullYear() === today.getFullYear() ? { day: 'numeric', month: 'short' } : { day: 'numeric', month: 'short', year: 'numeric' };
  return date.toLocaleDateString(undefined, options);
}

export class HistoryView {
  readonly element: HTMLElement;
  private readonly search: HTMLInputElement;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  private searchTimer: number | undefined;
  private query = '';

  constructor(private readonly actions: HistoryViewHost) {
    this.search = h('input', { type: 'search', class: 'field history-search', placeholder: 'Search chats', 'aria-label': 'Search chats' });
    this.list = h('ul', { class: 'history-list', 'aria-label': 'Past chats' });
    this.empty = h('p', { class: 'history-empty', hidden: true }, 'No chats yet.');
    const close = button(icon('close'), () => this.close(), { class: 'icon-button history-close', 'aria-label': 'Close the history', title: 'Close (Escape)' });
    this.element = h(
      'section',
      { class: 'history', hidden: true, role: 'dialog', 'aria-label': 'Chat history' },
      h('div', { class: 'history-head' }, icon('history'), h('h2', {}, 'Chat history'), close),
      h('div', { class: 'history-search-row' }, icon('search'), this.search),
      this.list,
      this.empty,
    );
    this.search.addEventListener('input', () => {
      window.clearTimeout(this.searchTimer);
      this.searchTimer = window.setTimeout(() => this.ask(this.search.value), SEARCH_DELAY_MS);
    });
    this.element.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !(event.target instanceof HTMLInputElement && event.target.classList.contains('history-rename'))) {
        event.preventDefault();
        this.close();
      }
    });
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  open(): void {
    this.element.hidden = false;
    this.ask(this.search.value);
    this.search.focus();
  }

  close(): void {
    if (this.element.hidden) return;
    this.element.hidden = true;
    this.actions.closed();
  }

  toggle(): void {
    if (this.isOpen) this.close();
    else this.open();
  }

  private ask(query: string): void {
    this.query = query;
    this.actions.post({ type: 'historyQuery', query });
  }

  /** The host's answer; an answer to an older query than the box holds is ignored. */
  show(query: string, entries: HistoryEntry[]): void {
    if (query !== this.query) return;
    this.list.replaceChildren(...entries.map((entry) => this.row(entry)));
    this.empty.hidden = entries.length > 0;
    this.empty.textContent = query.trim() ? `No chat mentions “${query.trim()}”.` : 'No chats yet. Your conversations appear here.';
    if (this.isOpen && query.trim()) this.actions.announce(`${entries.length} chat${entries.length === 1 ? '' : 's'} found`);
  }

  private row(entry: HistoryEntry): HTMLElement {
    const openChat = (): void => {
      this.actions.post({ type: 'historyOpen', id: entry.id });
      this.close();
    };
    const title = button(h('span', { class: 'history-title-text' }, entry.title), openChat, { class: 'history-open', title: `Open “${entry.title}”` });
    const meta = h('div', { class: 'history-meta' }, formatWhen(entry.updatedAt), entry.workspace ? ` · ${entry.workspace}` : '', entry.model ? ` · ${entry.model}` : '');
    const row = h('li', { class: `history-entry${entry.current ? ' current' : ''}`, 'data-id': entry.id }, h('div', { class: 'history-text' }, title, meta));
    if (entry.current) title.setAttribute('aria-current', 'true');
    const rename = button(icon('edit'), () => this.startRename(row, entry), { class: 'icon-button history-rename-button', 'aria-label': `Rename “${entry.title}”`, title: 'Rename' });
    const remove = button(icon('trash'), () => this.confirmDelete(row, entry, remove), { class: 'icon-button history-delete', 'aria-label': `Delete “${entry.title}”`, title: 'Delete' });
    row.appendChild(h('div', { class: 'history-row-actions' }, rename, remove));
    return row;
  }

  private startRename(row: HTMLElement, entry: HistoryEntry): void {
    const text = row.querySelector<HTMLElement>('.history-text');
    if (!text || row.querySelector('.history-rename')) return;
    const input = h('input', { type: 'text', class: 'field history-rename', 'aria-label': 'New title', maxlength: '80' });
    input.value = entry.title;
    let done = false;
    const finish = (save: boolean): void => {
      if (done) return;
      done = true;
      const title = input.value.trim();
      input.remove();
      text.hidden = false;
      if (save && title !== '' && title !== entry.title) this.actions.post({ type: 'historyRename', id: entry.id, title });
      row.querySelector<HTMLButtonElement>('.history-rename-button')?.focus();
    };
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        finish(true);
      } else if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        finish(false);
      }
    });
    input.addEventListener('blur', () => finish(true));
    text.hidden = true;
    text.before(input);
    input.focus();
    input.select();
  }

  /** Delete asks once more in place: a second click on "Delete?" deletes, anything else cancels. */
  private confirmDelete(row: HTMLElement, entry: HistoryEntry, trigger: HTMLButtonElement): void {
    if (row.querySelector('.history-confirm')) return;
    const cancel = (): void => {
      confirm.remove();
      trigger.hidden = false;
      trigger.focus();
    };
    const yes = button('Delete', () => this.actions.post({ type: 'historyDelete', id: entry.id }), { class: 'button danger history-confirm-delete' });
    const no = button('Cancel', cancel, { class: 'button secondary' });
    const confirm = h('div', { class: 'history-confirm', role: 'group', 'aria-label': `Delete “${entry.title}”?` }, yes, no);
    trigger.hidden = true;
    row.appendChild(confirm);
    yes.focus();
  }
}
