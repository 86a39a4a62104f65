// The user's messages in the chat and where each sits in the conversation's history: what Edit &
// resend and Regenerate cut back to, and the chips an edited message carries over to its resent one.
import { attachmentLabel, type Attachment } from '../../core/context/attachments';
import type { AttachmentView } from '../../shared/protocol';
import type { TranscriptModel } from './transcriptModel';

export class UserItems {
  /** Which history message each user item stands for. */
  private historyIndex = new Map<string, number>();
  /** Chips of a message being edited, shown again on its resent version. */
  private edited: { historyIndex: number; attachments: AttachmentView[] } | undefined;

  constructor(private readonly model: TranscriptModel) {}

  /** The user sent a message (historyIndex -1: shown, but not in the history, so not editable). */
  shown(text: string, historyIndex: number, attachments: readonly Attachment[]): void {
    const id = this.model.nextId('u');
    const carried = this.edited?.historyIndex === historyIndex ? this.edited.attachments : [];
    this.edited = undefined;
    const views = attachments.length > 0 ? this.views(attachments) : carried;
    const extra = views.length > 0 ? { attachments: views } : {};
    this.model.items.push({ kind: 'user', id, text, ...extra });
    if (historyIndex >= 0) this.historyIndex.set(id, historyIndex);
    this.model.post({ type: 'userMessage', id, text, ...extra });
  }

  /** The item `id` stands for the history message `index` (items rebuilt from messages). */
  remember(id: string, index: number): void {
    this.historyIndex.set(id, index);
  }

  /** The history index of the user message behind transcript item `id`. */
  historyIndexOf(id: string): number | undefined {
    return this.historyIndex.get(id);
  }

  /** Edit & resend is about to replace the message `id`: its chips go onto the resent one. */
  prepareEdit(id: string): void {
    const historyIndex = this.historyIndex.get(id);
    const item = this.model.find('user', id);
    if (historyIndex === undefined || !item) return;
    this.edited = { historyIndex, attachments: item.attachments ?? [] };
  }

  /** Everything from the first user item at or past `length` in the history goes (Edit), or else the answer after the last one (Regenerate). */
  truncate(length: number): void {
    const items = this.model.items;
    this.model.closeOpen();
    let cut = items.findIndex((item) => item.kind === 'user' && (this.historyIndex.get(item.id) ?? -1) >= length);
    if (cut < 0) {
      let lastUser = items.length - 1;
      while (lastUser >= 0 && !(items[lastUser].kind === 'user' && (this.historyIndex.get(items[lastUser].id) ?? Infinity) < length)) lastUser--;
      cut = lastUser + 1;
    }
    const removed = items.splice(cut);
    for (const item of removed) this.historyIndex.delete(item.id);
    const afterId = cut > 0 ? items[cut - 1].id : undefined;
    this.model.post(afterId ? { type: 'truncate', afterId } : { type: 'truncate' });
  }

  /** [item id, history index] pairs, as stored with the chat's view. */
  entries(): [string, number][] {
    return [...this.historyIndex];
  }

  /** A new chat, or a stored one's pairs. */
  reset(entries: readonly [string, number][] = []): void {
    this.historyIndex = new Map(entries);
    this.edited = undefined;
  }

  private views(attachments: readonly Attachment[]): AttachmentView[] {
    return attachments.map((attachment) => ({
      id: this.model.nextId('att'),
      kind: attachment.kind,
      label: attachmentLabel(attachment),
      path: attachment.path,
      ...(attachment.kind === 'selection' ? { line: attachment.startLine } : {}),
    }));
  }
}
