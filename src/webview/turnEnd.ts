// The line that ends each turn and each accept: what it changed ("Changed src/a.ts", "Speculated 2
// tool calls · 1.3 s saved") with Undo / Redo and Changes, and Restore to here on every earlier line.
import type { CheckpointView, TranscriptItem, WebviewToHost } from '../shared/protocol';
import { button, h, srOnly } from './dom';
import { icon } from './icons';

type TurnEndItem = Extract<TranscriptItem, { kind: 'turnEnd' }>;

export interface TurnEndActions {
  post(message: WebviewToHost): void;
  announce(text: string): void;
}

interface Line {
  element: HTMLElement;
  item: TurnEndItem;
}

function fileList(checkpoint: CheckpointView): string {
  return checkpoint.files.map((f) => `${f.path} (${f.change})`).join(', ');
}

export class TurnEndLines {
  /** In transcript order; lines removed with the transcript (a truncate) drop out when found disconnected. */
  private lines: Line[] = [];

  constructor(private readonly actions: TurnEndActions) {}

  /** Builds the line for `item`; the transcript places it. */
  render(item: TurnEndItem): HTMLElement {
    const element = h('div', { class: 'notice turn-end', 'data-id': item.id, role: 'note' });
    const line: Line = { element, item: structuredClone(item) };
    this.lines.push(line);
    this.fill(line);
    // Once the transcript has placed it: the line before it is an earlier one now.
    queueMicrotask(() => this.markEarlier());
    return element;
  }

  /** An undo or redo changed a checkpoint: every line showing it follows. */
  update(checkpoint: CheckpointView): void {
    for (const line of this.live()) {
      if (line.item.checkpoint?.checkpointId !== checkpoint.checkpointId) continue;
      const wasUndone = line.item.checkpoint.state === 'undone';
      line.item.checkpoint = structuredClone(checkpoint);
      this.fill(line);
      if (wasUndone !== (checkpoint.state === 'undone')) this.actions.announce(checkpoint.state === 'undone' ? 'Changes undone.' : 'Changes redone.');
    }
  }

  clear(): void {
    this.lines = [];
  }

  /** Lines still on screen (a truncated or reset transcript drops the others). */
  private live(): Line[] {
    this.lines = this.lines.filter((line) => line.element.isConnected);
    return this.lines;
  }

  /** Only lines before the newest one offer Restore to here: the newest is "here" already. */
  private markEarlier(): void {
    const lines = this.live();
    lines.forEach((line, index) => line.element.classList.toggle('earlier', index < lines.length - 1));
  }

  private fill(line: Line): void {
    const { item, element } = line;
    const checkpoint = item.checkpoint;
    const undone = checkpoint?.state === 'undone';
    element.classList.toggle('empty', item.text === '' && !checkpoint);
    element.classList.toggle('undone', undone);
    element.classList.toggle('speculated', item.speculated === true);
    const parts: (Node | string)[] = [];
    if (item.text !== '') {
      parts.push(icon(item.speculated ? 'bolt' : 'check'));
      parts.push(h('span', { class: 'turn-end-text', ...(checkpoint ? { title: fileList(checkpoint) } : {}) }, item.text));
    }
    if (undone) parts.push(h('span', { class: 'turn-end-state' }, '· undone'));
    const actions = h('span', { class: 'turn-end-actions' });
    if (checkpoint) {
      const what = checkpoint.files.length === 1 ? checkpoint.files[0].path : `${checkpoint.files.length} files`;
      actions.append(
        undone
          ? button(h('span', { class: 'button-label' }, icon('redo'), 'Redo'), () => this.act(checkpoint.checkpointId, 'redo'), {
              class: 'link-button', 'data-action': 'redo', 'aria-label': `Redo the changes to ${what}`, title: `Put the changes to ${what} back`,
            })
          : button(h('span', { class: 'button-label' }, icon('undo'), 'Undo'), () => this.act(checkpoint.checkpointId, 'undo'), {
              class: 'link-button', 'data-action': 'undo', 'aria-label': `Undo the changes to ${what}`, title: `Restore ${what} as before this step`,
            }),
        button(h('span', { class: 'button-label' }, icon('diff'), 'Changes'), () => this.act(checkpoint.checkpointId, 'changes'), {
          class: 'link-button', 'data-action': 'changes', 'aria-label': `Show the changes to ${what}`, title: `Compare ${what} before and after this step`,
        }),
      );
    }
    actions.append(
      button(h('span', { class: 'button-label' }, icon('history'), 'Restore to here'), () => this.actions.post({ type: 'restoreTo', turnEndId: item.id }), {
        class: 'link-button restore', 'data-action': 'restore', 'aria-label': 'Restore the files to how they were at this point', title: 'Undo the changes made after this point',
      }),
    );
    element.replaceChildren(...parts, actions, srOnly(undone ? ' (undone)' : ''));
  }

  private act(checkpointId: string, action: 'undo' | 'redo' | 'changes'): void {
    this.actions.post({ type: 'checkpointAction', checkpointId, action });
  }
}
