// The chat header: the chat's title, the model pickers (main and fast) and what the chat has spent
// so far, with the background work's share ("background 31% of the tokens").
import type { ModelInfo, UsageLine } from '../shared/protocol';
import { h } from './dom';
import { ModelPicker, type ModelPickerActions } from './modelPicker';

export class ChatHeader {
  readonly element: HTMLElement;
  readonly models: ModelPicker;
  private readonly title: HTMLElement;
  private readonly usage: HTMLElement;

  constructor(actions: ModelPickerActions) {
    this.models = new ModelPicker(actions);
    this.title = h('h1', { class: 'chat-title' });
    this.usage = h('div', { class: 'chat-usage', hidden: true, role: 'status', 'aria-live': 'off' });
    this.element = h('header', { class: 'chat-header' }, h('div', { class: 'chat-header-row' }, this.title, this.models.element), this.usage);
    this.setTitle('');
  }

  setTitle(title: string): void {
    this.title.textContent = title || 'New chat';
    this.title.title = title || 'A new chat: its first message names it';
  }

  setModel(model: ModelInfo): void {
    this.models.setModel(model);
  }

  setUsage(usage: UsageLine | null | undefined): void {
    this.usage.hidden = !usage;
    this.usage.textContent = usage?.text ?? '';
    this.usage.title = usage?.detail ?? '';
  }
}
