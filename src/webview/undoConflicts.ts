// The files an undo (or redo) found changed since the step it takes back: nothing was overwritten,
// and the user picks per file — Open diff, Restore (take the step's version back anyway) or Keep mine.
import type { TranscriptItem, UndoConflictFile, UndoConflictResolution, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';

type UndoConflictItem = Extract<TranscriptItem, { kind: 'undoConflicts' }>;

export interface UndoConflictActions {
  post(message: WebviewToHost): void;
  announce(text: string): void;
  isTyping(): boolean;
}

interface Row {
  row: HTMLElement;
  actions: HTMLElement;
  outcome: HTMLElement;
  file: UndoConflictFile;
}

const RESOLUTION_TEXT: Record<UndoConflictResolution, string> = {
  restore: 'Restored',
  'keep-mine': 'Kept your version',
};

export class UndoConflictBlocks {
  private readonly blocks = new Map<string, Map<string, Row>>();

  constructor(private readonly actions: UndoConflictActions) {}

  render(item: UndoConflictItem): HTMLElement {
    const rows = new Map<string, Row>();
    this.blocks.set(item.id, rows);
    const titleId = `undo-conflicts-${item.id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    const list = h('ul', { class: 'conflict-files' });
    for (const file of item.files) {
      const actions = h('div', { class: 'conflict-actions' });
      const outcome = h('span', { class: 'conflict-outcome', hidden: true });
      const choose = (choice: 'open-diff' | UndoConflictResolution) => {
        this.actions.post({ type: 'undoConflictChoice', conflictId: item.id, path: file.path, choice });
        if (choice !== 'open-diff') {
          this.resolved(item.id, file.path, choice);
          this.focusNext(item.id);
        }
      };
      actions.append(
        button(h('span', { class: 'button-label' }, icon('diff'), 'Open diff'), () => choose('open-diff'), {
          class: 'button secondary', 'data-choice': 'open-diff', title: `Compare your ${file.path} with the version the ${item.direction} would restore`,
        }),
      );
      if (file.canRestore) {
        actions.append(
          button(item.direction === 'undo' ? 'Restore' : 'Redo anyway', () => choose('restore'), {
            class: 'button secondary resolve', 'data-choice': 'restore', title: `Replace your ${file.path} (your version is kept in the checkpoint, so redo brings it back)`,
          }),
        );
      }
      actions.append(button('Keep mine', () => choose('keep-mine'), { class: 'button secondary resolve', 'data-choice': 'keep-mine', title: `Leave ${file.path} as it is` }));
      const row = h(
        'li',
        { class: 'conflict-file', 'data-path': file.path },
        h('div', { class: 'conflict-head' }, h('a', { href: '#', class: 'link file', 'data-path': file.path }, file.path), h('span', { class: 'conflict-reason' }, file.reason)),
        actions,
        outcome,
      );
      rows.set(file.path, { row, actions, outcome, file: { ...file } });
      list.appendChild(row);
    }
    const count = item.files.length === 1 ? '1 file was changed' : `${item.files.length} files were changed`;
    const what = item.direction === 'undo' ? 'Undo' : 'Redo';
    const block = h(
      'div',
      { class: 'conflicts undo-conflicts', 'data-id': item.id, role: 'group', 'aria-labelledby': titleId },
      h('div', { class: 'conflicts-title', id: titleId }, icon('warning'), h('span', {}, `${count} since — ${what} left ${item.files.length === 1 ? 'it' : 'them'} alone`)),
      h('p', { class: 'conflicts-hint' }, 'Nothing was overwritten. Choose for each file; the others are done.'),
      list,
    );
    for (const file of item.files) if (file.resolution) this.resolved(item.id, file.path, file.resolution);
    this.actions.announce(`${count} since. Choose Restore or Keep mine for each.`);
    if (!this.actions.isTyping()) queueMicrotask(() => this.focusNext(item.id));
    return block;
  }

  resolved(id: string, path: string, resolution: UndoConflictResolution): void {
    const row = this.blocks.get(id)?.get(path);
    if (!row) return;
    row.file.resolution = resolution;
    row.row.classList.add('resolved');
    for (const resolve of row.actions.querySelectorAll('.resolve')) resolve.remove();
    row.outcome.hidden = false;
    row.outcome.replaceChildren(icon('check'), h('span', {}, RESOLUTION_TEXT[resolution]));
  }

  clear(): void {
    this.blocks.clear();
  }

  private focusNext(id: string): void {
    const rows = this.blocks.get(id);
    const next = rows && [...rows.values()].find((r) => !r.file.resolution);
    next?.actions.querySelector<HTMLButtonElement>('.resolve')?.focus();
  }
}
