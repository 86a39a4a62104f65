// The screen reader's live region: every sentence is appended as its own line (the log pattern)
// instead of replacing the one before, so the suggestion's text is never cut off by the status
// that follows it 40 ms later; the region keeps only the last few lines.
import { h } from './dom';

/** Lines kept in the region; older ones were read already. */
const KEPT_LINES = 4;

export class Announcer {
  readonly element: HTMLElement;

  constructor() {
    // role=log is polite, and additions are read in order, each once.
    this.element = h('div', { class: 'sr-only', role: 'log', 'aria-live': 'polite', 'aria-atomic': 'false', 'aria-relevant': 'additions', id: 'announcer' });
  }

  /** Says `text` after what is being said now; a repeated sentence is said again. */
  say(text: string): void {
    const line = text.trim();
    if (line === '') return;
    this.element.appendChild(h('div', {}, line));
    while (this.element.childElementCount > KEPT_LINES) this.element.firstElementChild?.remove();
  }

  /** The lines in the region now, oldest first (tests and the reveal read them). */
  get lines(): string[] {
    return [...this.element.children].map((child) => child.textContent ?? '');
  }
}
