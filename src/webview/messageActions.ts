// The small controls on transcript messages: context chips on a user message, Edit & resend and
// Copy on it, Copy and Regenerate on an answer; and the inline editor Edit opens.
import type { AttachmentView, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon, type IconName } from './icons';

const CHIP_ICON: Record<AttachmentView['kind'], IconName> = { file: 'file', selection: 'selection', problems: 'warning' };

/** One chip: a link to the attached file (the host opens it, at the selection's first line). */
export function attachmentChip(attachment: AttachmentView, remove?: () => void): HTMLElement {
  const link = h(
    'a',
    { href: '#', class: 'link file chip-label', 'data-path': attachment.path, 'data-line': attachment.line !== undefined ? String(attachment.line) : undefined, title: attachment.path },
    icon(CHIP_ICON[attachment.kind]),
    h('span', {}, attachment.label),
  );
  const chip = h('span', { class: `chip chip-${attachment.kind}`, 'data-attachment-id': attachment.id }, link);
  if (remove) chip.appendChild(button(icon('close'), remove, { class: 'chip-remove', 'aria-label': `Remove ${attachment.label}`, title: 'Remove' }));
  return chip;
}

export function attachmentChips(attachments: readonly AttachmentView[] | undefined): HTMLElement | null {
  if (!attachments || attachments.length === 0) return null;
  return h('div', { class: 'chips', 'aria-label': 'Attached context' }, ...attachments.map((a) => attachmentChip(a)));
}

function actionButton(iconName: IconName, label: string, onClick: () => void, extraClass: string): HTMLButtonElement {
  return button(icon(iconName), onClick, { class: `icon-button message-action ${extraClass}`, 'aria-label': label, title: label });
}

/** Copy, with a moment of "Copied" feedback on the button. */
function copyButton(text: () => string, post: (message: WebviewToHost) => void, label: string): HTMLButtonElement {
  const copy = actionButton('copy', label, () => {
    post({ type: 'copyText', text: text() });
    copy.classList.add('copied');
    copy.replaceChildren(icon('check'));
    window.setTimeout(() => {
      copy.classList.remove('copied');
      copy.replaceChildren(icon('copy'));
    }, 1500);
  }, 'copy');
  return copy;
}

/** Whether file changes that can be undone came after the message (a later line with Undo). */
function laterFileChanges(article: HTMLElement): number {
  let count = 0;
  for (let next = article.nextElementSibling; next; next = next.nextElementSibling) {
    if (next.matches('.turn-end') && next.querySelector('[data-action="undo"]')) count++;
  }
  return count;
}

/**
 * Edit & resend: the message turns into a text box with its words; Enter (or Send) replaces the
 * chat from this message on, Escape (or Cancel) leaves everything as it was. When files changed
 * after the message, they stay unless the user picks "Restore files and send" (Restore to here).
 */
function openEditor(article: HTMLElement, id: string, text: string, post: (message: WebviewToHost) => void): void {
  const shown = article.querySelector<HTMLElement>('.user-text');
  if (!shown || article.querySelector('.message-editor')) return;
  const box = h('textarea', { class: 'field message-edit-input', rows: '3', 'aria-label': 'Edit your message' });
  box.value = text;
  const changes = laterFileChanges(article);
  const close = (): void => {
    editor.remove();
    shown.hidden = false;
    article.classList.remove('editing');
    article.querySelector<HTMLButtonElement>('.message-action.edit')?.focus();
  };
  const send = (restoreFiles: boolean): void => {
    const edited = box.value.trim();
    if (edited === '') return;
    post(changes > 0 ? { type: 'editMessage', id, text: edited, restoreFiles } : { type: 'editMessage', id, text: edited });
    close();
  };
  const hint = changes === 0
    ? 'Replaces the chat from here on.'
    : `Replaces the chat from here on. ${changes === 1 ? 'The file change' : `The ${changes} file changes`} made after it stay unless you restore them.`;
  const editor = h(
    'div',
    { class: 'message-editor' },
    box,
    h(
      'div',
      { class: 'message-editor-actions' },
      h('span', { class: 'message-editor-hint' }, hint),
      button('Cancel', close, { class: 'button secondary' }),
      changes > 0 ? button('Restore files and send', () => send(true), { class: 'button secondary restore-and-send', title: 'Undo the file changes made after this message, then send' }) : null,
      button('Send', () => send(false), { class: 'button primary' }),
    ),
  );
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close();
    } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send(false);
    }
  });
  shown.hidden = true;
  article.classList.add('editing');
  shown.after(editor);
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

export function userMessageActions(article: HTMLElement, id: string, text: string, post: (message: WebviewToHost) => void): HTMLElement {
  return h(
    'div',
    { class: 'message-actions', role: 'toolbar', 'aria-label': 'Message actions' },
    actionButton('edit', 'Edit and resend', () => openEditor(article, id, text, post), 'edit'),
    copyButton(() => text, post, 'Copy message'),
  );
}

export function responseActions(markdown: () => string, post: (message: WebviewToHost) => void): HTMLElement {
  return h(
    'div',
    { class: 'message-actions', role: 'toolbar', 'aria-label': 'Answer actions' },
    copyButton(markdown, post, 'Copy answer'),
    actionButton('retry', 'Regenerate the answer', () => post({ type: 'regenerate' }), 'regenerate'),
  );
}
