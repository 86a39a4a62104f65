// The compact speculation status line above the input: running ahead, ready for Tab, stopped at
// a boundary (in the host's words) or quietly failed; with "Preview changes" when files were written.
import type { SpeculationStatusView, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';
import { renderInlineMarkdown } from './markdown';

export interface StatusActions {
  post(message: WebviewToHost): void;
  announce(text: string): void;
}

const IDLE: SpeculationStatusView = { state: 'idle', toolCalls: 0, filesWritten: [] };

export class SpeculationStatusLine {
  readonly element: HTMLElement;
  private status: SpeculationStatusView = IDLE;
  private acceptKey = 'Tab';

  constructor(private readonly actions: StatusActions) {
    this.element = h('div', { class: 'spec-status', hidden: true, 'data-state': 'idle' });
  }

  /** The key that accepts (Tab, or Ctrl+Enter while Tab moves focus), named in the line. */
  setAcceptKey(label: string): void {
    if (label === this.acceptKey) return;
    this.acceptKey = label;
    this.render();
  }

  get state(): SpeculationStatusView['state'] {
    return this.status.state;
  }

  /**
   * Shows `status` if it belongs to the suggestion on screen (`suggestionId` undefined = no
   * suggestion shown). A status for another suggestion is stale and hides the line.
   */
  update(status: SpeculationStatusView, suggestionId: string | undefined): void {
    // A failure without a suggestion says running ahead does not work at all: it stands on its own.
    const standalone = status.state === 'failed' && status.suggestionId === undefined;
    const stale = !standalone && status.state !== 'idle' && (suggestionId === undefined || (status.suggestionId !== undefined && status.suggestionId !== suggestionId));
    const next = stale ? IDLE : status;
    const stateChanged = next.state !== this.status.state;
    this.status = next;
    this.render();
    if (stateChanged) {
      const words = this.spokenState();
      if (words) this.actions.announce(words);
    }
  }

  private render(): void {
    const s = this.status;
    this.element.dataset.state = s.state;
    this.element.hidden = s.state === 'idle';
    if (s.state === 'idle') {
      this.element.replaceChildren();
      return;
    }
    const parts: (Node | string)[] = [];
    const trailing: Node[] = [];
    const counts = this.counts();
    // What matters most never shrinks ("Ready — Tab to apply"); the counts give way first, and the
    // buttons move to a second row before the key is cut.
    if (s.state === 'running') {
      parts.push(icon('spinner', 'spin status-icon'), h('span', { class: 'status-text status-primary' }, 'Running ahead…'));
      if (counts) parts.push(h('span', { class: 'status-counts' }, counts));
    } else if (s.state === 'ready') {
      parts.push(icon('check', 'status-icon'), h('span', { class: 'status-text status-primary' }, 'Ready — ', h('kbd', {}, this.acceptKey), ' to apply'));
      if (counts) parts.push(h('span', { class: 'status-counts' }, `· ${counts}`));
    } else if (s.state === 'boundary') {
      const boundary = s.boundary;
      const text = h('span', { class: 'status-text' });
      if (boundary?.text) text.append(renderInlineMarkdown(this.withKey(boundary.text)));
      else {
        text.append('Stopped before ');
        if (boundary) {
          text.append(h('code', {}, boundary.tool));
          if (boundary.detail) text.append(': ', renderInlineMarkdown(boundary.detail));
        } else text.append('a step that needs you');
        const note =
          s.toolCalls > 0
            ? `${this.acceptKey} applies the ${plural(s.toolCalls, 'finished tool call')}, then continues live.`
            : `${this.acceptKey} sends it and continues live.`;
        trailing.push(h('span', { class: 'status-note' }, note));
      }
      parts.push(icon('pending', 'status-icon'), text);
    } else {
      const reason = s.error ? `: ${s.error}` : '';
      parts.push(h('span', { class: 'status-text quiet' }, `Couldn’t run ahead${reason}${s.suggestionId !== undefined ? ` · ${this.acceptKey} still sends it` : ''}`));
    }
    if (s.commitAhead && s.commitAhead.moves.length > 0 && s.state !== 'failed') {
      // What Tab would commit: the moves in words, the commits' message, author and files on hover.
      trailing.push(h('span', { class: 'status-note commit-ahead', title: `${s.commitAhead.log}\n\n${s.commitAhead.note}`.trim() }, `${this.acceptKey} also commits: ${s.commitAhead.moves.join(', ')}`));
    }
    const actions = h('span', { class: 'status-actions' });
    if (s.filesWritten.length > 0 && s.state !== 'failed') {
      actions.append(
        button('Preview changes', () => this.actions.post({ type: 'previewChanges' }), {
          class: 'link-button preview',
          'aria-label': `Preview changes to ${plural(s.filesWritten.length, 'file')}`,
          title: `See the changes to ${s.filesWritten.join(', ')} before applying them`,
        }),
      );
    }
    if (s.state === 'running' || s.state === 'ready' || s.state === 'boundary') {
      actions.append(
        button(icon('close'), () => this.actions.post({ type: 'abortSpeculation' }), {
          class: 'icon-button small abort',
          'aria-label': 'Stop running ahead and discard its work',
          title: 'Stop running ahead and discard its work',
        }),
      );
    }
    this.element.replaceChildren(...parts, actions, ...trailing);
    this.element.title = [...this.element.querySelectorAll('.status-text, .status-counts, .status-note')].map((el) => el.textContent).join(' ');
  }

  private withKey(sentence: string): string {
    return replaceTab(sentence, this.acceptKey);
  }

  private counts(): string {
    const s = this.status;
    const items: string[] = [];
    if (s.toolCalls > 0) items.push(plural(s.toolCalls, 'tool call'));
    return items.join(' · ');
  }

  private spokenState(): string {
    const s = this.status;
    switch (s.state) {
      case 'running':
        return 'Running the suggestion ahead.';
      case 'ready': {
        const files = s.filesWritten.length > 0 ? `, ${plural(s.filesWritten.length, 'file')} changed` : '';
        return `Suggestion ready${this.counts() ? `, ${this.counts()}` : ''}${files}. ${this.acceptKey} to apply.`;
      }
      case 'boundary':
        if (s.boundary?.text) return this.withKey(s.boundary.text).replace(/`/g, '');
        return `Stopped before ${s.boundary?.tool ?? 'a step that needs you'}. ${this.acceptKey} applies what is done and continues.`;
      default:
        return '';
    }
  }
}

/** The host's sentence names Tab; while Tab moves focus the accept key is another. */
function replaceTab(sentence: string, key: string): string {
  return key === 'Tab' ? sentence : sentence.replace(/\bTab\b/g, key);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
