// The block that lists the files the user changed while a speculation worked on them: per file,
// Open diff, Overwrite and Keep mine (nothing is overwritten until the user says so), keyboard-first.
import type { ConflictAction, ConflictFile, ConflictResolution, WebviewToHost } from '../shared/protocol';
import { button, cssId, h } from './dom';
import { icon } from './icons';

const RESOLUTION_TEXT: Record<ConflictResolution, string> = {
  overwrite: 'Overwritten with Speculate’s version',
  'keep-mine': 'Kept your version',
};

interface ConflictRow {
  row: HTMLElement;
  actions: HTMLElement;
  outcome: HTMLElement;
  file: ConflictFile;
}

export interface ConflictBlockHost {
  post(message: WebviewToHost): void;
  announce(text: string): void;
  isTyping(): boolean;
  focusInput(): void;
}

export class ConflictBlocks {
  private readonly sets = new Map<string, Map<string, ConflictRow>>();

  constructor(private readonly host: ConflictBlockHost) {}

  /**
   * The block for conflict set `id` (undefined when it is already shown); the caller places
   * `element`, then calls `shown()`, which marks files already settled, says it and takes the focus.
   */
  render(id: string, files: ConflictFile[]): { element: HTMLElement; shown(): void } | undefined {
    if (this.sets.has(id)) return undefined;
    const rows = new Map<string, ConflictRow>();
    this.sets.set(id, rows);
    const titleId = `conflicts-title-${cssId(id)}`;
    const list = h('ul', { class: 'conflict-files' });
    for (const file of files) {
      const entry = this.renderRow(id, file);
      rows.set(file.path, entry);
      list.appendChild(entry.row);
    }
    const count = files.length === 1 ? '1 file changed' : `${files.length} files changed`;
    const element = h(
      'div',
      { class: 'conflicts', 'data-id': id, role: 'group', 'aria-labelledby': titleId },
      h('div', { class: 'conflicts-title', id: titleId }, icon('warning'), h('span', {}, `${count} while Speculate was working`)),
      h('p', { class: 'conflicts-hint' }, 'Nothing was overwritten. Choose which version to keep for each file.'),
      list,
    );
    const shown = (): void => {
      for (const file of files) if (file.resolution) this.resolved(id, file.path, file.resolution);
      this.host.announce(`${count} while Speculate was working. Choose which version to keep.`);
      if (!this.host.isTyping()) this.focusNext(id);
    };
    return { element, shown };
  }

  /** A staged transcript's blocks join this one (adopt): later messages about them find them here. */
  takeFrom(other: ConflictBlocks): string[] {
    const ids = [...other.sets.keys()];
    for (const [id, rows] of other.sets) this.sets.set(id, rows);
    other.sets.clear();
    return ids;
  }

  forget(ids: readonly string[]): void {
    for (const id of ids) this.sets.delete(id);
  }

  clear(): void {
    this.sets.clear();
  }

  /** Blocks no longer in the page (truncated) are dropped. */
  pruneDisconnected(): void {
    for (const [id, rows] of this.sets) if (![...rows.values()].some((r) => r.row.isConnected)) this.sets.delete(id);
  }

  resolved(id: string, path: string, resolution: ConflictResolution): void {
    const row = this.sets.get(id)?.get(path);
    if (!row) return;
    row.file.resolution = resolution;
    row.row.classList.add('resolved');
    for (const resolve of row.actions.querySelectorAll('.resolve')) resolve.remove();
    row.outcome.hidden = false;
    row.outcome.replaceChildren(icon('check'), h('span', {}, RESOLUTION_TEXT[resolution]));
  }

  private renderRow(id: string, file: ConflictFile): ConflictRow {
    const actions = h('div', { class: 'conflict-actions' });
    const outcome = h('span', { class: 'conflict-outcome', hidden: true });
    const choose = (choice: ConflictAction): void => {
      this.host.post({ type: 'conflictChoice', conflictId: id, path: file.path, choice });
      if (choice !== 'open-diff') {
        this.resolved(id, file.path, choice);
        this.focusNext(id);
      }
    };
    actions.append(
      button(h('span', { class: 'button-label' }, icon('diff'), 'Open diff'), () => choose('open-diff'), {
        class: 'button secondary',
        'data-choice': 'open-diff',
        title: `Compare your ${file.path} with Speculate's version`,
      }),
      button('Overwrite', () => choose('overwrite'), {
        class: 'button secondary resolve',
        'data-choice': 'overwrite',
        title: `Replace your ${file.path} with Speculate's version`,
      }),
      button('Keep mine', () => choose('keep-mine'), {
        class: 'button secondary resolve',
        'data-choice': 'keep-mine',
        title: `Keep your ${file.path} and drop Speculate's change to it`,
      }),
    );
    const row = h(
      'li',
      { class: 'conflict-file', 'data-path': file.path },
      h('div', { class: 'conflict-head' }, h('a', { href: '#', class: 'link file', 'data-path': file.path }, file.path), h('span', { class: 'conflict-reason' }, file.reason)),
      actions,
      outcome,
    );
    return { row, actions, outcome, file };
  }

  /** The first file not settled gets the focus; with none left, the chat input does (unless the user is elsewhere). */
  private focusNext(id: string): void {
    const rows = this.sets.get(id);
    const next = rows && [...rows.values()].find((r) => !r.file.resolution);
    const target = next?.actions.querySelector<HTMLButtonElement>('button');
    if (target) target.focus();
    else if (rows && rows.size > 0 && document.activeElement === document.body) this.host.focusInput();
  }
}
