// Review before Tab: the files the speculation on screen would change, with +/− line counts; each
// opens as a diff, and each can be left out of the accept (Tab then applies the rest).
import type { SpeculationFiles, SpeculationStatusView, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';

export interface SpeculationFilesActions {
  post(message: WebviewToHost): void;
  announce(text: string): void;
}

const SHOWN_STATES = new Set<SpeculationStatusView['state']>(['running', 'ready', 'boundary']);

export class SpeculationFileList {
  readonly element: HTMLElement;
  private files: SpeculationFiles | null = null;
  private state: SpeculationStatusView['state'] = 'idle';
  private open = true;

  constructor(private readonly actions: SpeculationFilesActions) {
    this.element = h('div', { class: 'spec-files', hidden: true });
  }

  /** The files of the current run (null: none). */
  set(files: SpeculationFiles | null): void {
    this.files = files ? structuredClone(files) : null;
    this.render();
  }

  /** The status line's state: the list shows only while there is a run to accept. */
  follow(status: SpeculationStatusView): void {
    this.state = status.state;
    this.render();
  }

  private render(): void {
    const files = this.files;
    const visible = files !== null && files.files.length > 0 && SHOWN_STATES.has(this.state);
    this.element.hidden = !visible;
    if (!visible || !files) {
      this.element.replaceChildren();
      return;
    }
    const included = files.files.filter((f) => !f.excluded);
    const added = included.reduce((n, f) => n + f.added, 0);
    const removed = included.reduce((n, f) => n + f.removed, 0);
    const list = h('ul', { class: 'spec-file-list', 'aria-label': 'Files the speculation changes' });
    for (const file of files.files) {
      const id = `spec-file-${files.files.indexOf(file)}`;
      const box = h('input', { type: 'checkbox', id, class: 'spec-file-include', ...(file.excluded ? {} : { checked: true }), 'aria-label': `Apply ${file.path} on Tab` });
      box.addEventListener('change', () => {
        this.actions.post({ type: 'excludeFile', runId: files.runId, path: file.path, excluded: !box.checked });
        this.actions.announce(box.checked ? `${file.path} will be applied.` : `${file.path} is left out; Tab applies the rest.`);
      });
      const counts = file.binary
        ? h('span', { class: 'spec-file-counts' }, 'binary')
        : h('span', { class: 'spec-file-counts', 'aria-label': `${file.added} lines added, ${file.removed} removed` }, h('span', { class: 'added' }, `+${file.added}`), ' ', h('span', { class: 'removed' }, `−${file.removed}`));
      list.appendChild(
        h(
          'li',
          { class: `spec-file change-${file.change}${file.excluded ? ' excluded' : ''}`, 'data-path': file.path },
          box,
          h('label', { for: id, class: 'spec-file-path', title: `${file.path} (${file.change})` }, file.path),
          h('span', { class: 'spec-file-change' }, file.change === 'created' ? 'new' : file.change === 'deleted' ? 'deleted' : ''),
          counts,
          file.hunks ? h('span', { class: 'spec-file-hunks', title: `${file.hunks.kept} of ${file.hunks.total} changes kept` }, `${file.hunks.kept} of ${file.hunks.total} changes kept`) : null,
          button(icon('diff'), () => this.actions.post({ type: 'previewChanges', path: file.path }), {
            class: 'icon-button small spec-file-diff',
            'aria-label': `Open the diff of ${file.path}`,
            title: `Open the diff of ${file.path}`,
          }),
        ),
      );
    }
    const left = files.files.length - included.length;
    const summary = h(
      'summary',
      { class: 'spec-files-summary' },
      icon('chevron', 'fold-chevron'),
      h('span', {}, `${files.files.length === 1 ? '1 file' : `${files.files.length} files`}`),
      h('span', { class: 'spec-file-counts' }, h('span', { class: 'added' }, `+${added}`), ' ', h('span', { class: 'removed' }, `−${removed}`)),
      left > 0 ? h('span', { class: 'spec-files-left' }, `· ${left} left out`) : null,
    );
    const fold = h('details', { class: 'spec-files-fold' }, summary, list);
    fold.open = this.open;
    fold.addEventListener('toggle', () => (this.open = fold.open));
    this.element.replaceChildren(fold);
  }
}
