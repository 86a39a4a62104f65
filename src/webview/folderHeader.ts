// The folder row of the chat header, shown only when the window has several folders: it names the
// folder the chat works on, and a click lets the host ask for another. It sits above the title
// and the model pickers of ChatHeader.
import type { FolderView, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';

export class FolderHeader {
  readonly element: HTMLElement;
  private readonly label: HTMLElement;
  private readonly picker: HTMLButtonElement;

  constructor(post: (message: WebviewToHost) => void) {
    this.label = h('span', { class: 'folder-name' });
    this.picker = button(h('span', {}, h('span', { class: 'folder-caption' }, 'Folder'), this.label, icon('chevron', 'folder-chevron')), () => post({ type: 'pickFolder' }), {
      class: 'folder-picker',
    });
    this.element = h('div', { class: 'chat-folder', hidden: true }, this.picker);
  }

  update(folder: FolderView | undefined): void {
    const shown = folder !== undefined && folder.others > 0;
    this.element.hidden = !shown;
    if (!folder) return;
    this.label.textContent = folder.name;
    this.picker.title = `The chat works on ${folder.path}. Click to choose another open folder.`;
    this.picker.setAttribute('aria-label', `Folder the chat works on: ${folder.name}. Choose another folder`);
  }
}
