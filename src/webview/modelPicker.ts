// The model picker in the chat header: the main model and the fast model (suggestions and
// speculation), each a button that lists the endpoint's models; picking one changes the setting.
import type { ModelInfo, ModelRole, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';

export interface ModelPickerActions {
  post(message: WebviewToHost): void;
  announce(text: string): void;
}

const ROLE_TEXT: Record<ModelRole, { label: string; title: string }> = {
  main: { label: 'Model', title: 'The model that answers your messages' },
  fast: { label: 'Fast', title: 'The fast model, for suggestions and speculation (empty: the main model)' },
};

export class ModelPicker {
  readonly element: HTMLElement;
  private readonly buttons: Record<ModelRole, HTMLButtonElement>;
  private readonly menu: HTMLElement;
  private readonly filter: HTMLInputElement;
  private readonly options: HTMLElement;
  private openRole: ModelRole | null = null;
  private model: ModelInfo = { label: '', demo: false };
  private models: string[] = [];
  private current = '';

  constructor(private readonly actions: ModelPickerActions) {
    const pick = (role: ModelRole) =>
      button(h('span', { class: 'model-button-text' }), () => this.toggle(role), {
        class: `model-button model-${role}`,
        'aria-haspopup': 'listbox',
        'aria-expanded': 'false',
        title: ROLE_TEXT[role].title,
      });
    this.buttons = { main: pick('main'), fast: pick('fast') };
    this.filter = h('input', { type: 'text', class: 'field model-filter', placeholder: 'Filter or type a model name', 'aria-label': 'Filter models' });
    this.options = h('ul', { class: 'model-options', role: 'listbox', 'aria-label': 'Models' });
    this.menu = h('div', { class: 'model-menu', hidden: true }, this.filter, this.options);
    this.element = h('div', { class: 'model-picker' }, this.buttons.main, this.buttons.fast, this.menu);
    this.filter.addEventListener('input', () => this.render());
    this.filter.addEventListener('keydown', (event) => this.onKey(event));
    this.menu.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        this.close(true);
      }
    });
    document.addEventListener('mousedown', (event) => {
      if (this.openRole && !this.element.contains(event.target as Node)) this.close(false);
    });
    this.setModel(this.model);
  }

  setModel(model: ModelInfo): void {
    this.model = model;
    this.setText('main', model.label || 'no model');
    this.setText('fast', model.fast ? model.fast : 'same as main');
  }

  private setText(role: ModelRole, value: string): void {
    const text = this.buttons[role].querySelector('.model-button-text')!;
    // The main model's name alone says enough; the fast one is marked (both are named for screen readers).
    const mark = role === 'fast' ? [h('span', { class: 'model-role' }, icon('bolt'))] : [];
    text.replaceChildren(...mark, h('span', { class: 'model-name' }, value), icon('dropdown'));
    this.buttons[role].setAttribute('aria-label', `${ROLE_TEXT[role].label} model: ${value}. Change it.`);
  }

  private toggle(role: ModelRole): void {
    if (this.openRole === role) this.close(true);
    else this.open(role);
  }

  /** Opens the list for `role` and asks the host for the endpoint's models. */
  open(role: ModelRole): void {
    this.openRole = role;
    this.buttons.main.setAttribute('aria-expanded', String(role === 'main'));
    this.buttons.fast.setAttribute('aria-expanded', String(role === 'fast'));
    this.menu.hidden = false;
    this.menu.dataset.role = role;
    this.models = [];
    this.current = role === 'main' ? this.model.label : (this.model.fast ?? '');
    this.filter.value = '';
    this.options.replaceChildren(h('li', { class: 'model-loading' }, 'Loading the endpoint’s models…'));
    this.actions.post({ type: 'listModels', role });
    this.filter.focus();
  }

  close(focusButton: boolean): void {
    const role = this.openRole;
    if (!role) return;
    this.openRole = null;
    this.menu.hidden = true;
    this.buttons.main.setAttribute('aria-expanded', 'false');
    this.buttons.fast.setAttribute('aria-expanded', 'false');
    if (focusButton) this.buttons[role].focus();
  }

  /** The host's list for the open picker. */
  showModels(role: ModelRole, models: string[], current: string, error?: string): void {
    if (role !== this.openRole) return;
    this.models = models;
    this.current = current;
    this.render(error);
  }

  private choices(): { value: string; label: string }[] {
    const q = this.filter.value.trim().toLowerCase();
    // The model in use is offered even when the endpoint does not list it (a deployment name, the demo).
    const known = this.current && !this.models.includes(this.current) ? [this.current, ...this.models] : this.models;
    const list = known.filter((m) => m.toLowerCase().includes(q)).map((m) => ({ value: m, label: m }));
    if (this.openRole === 'fast' && (q === '' || 'same as main'.includes(q))) list.unshift({ value: '', label: 'Same as the main model' });
    const typed = this.filter.value.trim();
    if (typed !== '' && !known.includes(typed)) list.push({ value: typed, label: `Use “${typed}”` });
    return list;
  }

  private render(error?: string): void {
    const items = this.choices().map((choice, index) => {
      const selected = choice.value === this.current;
      const option = h(
        'li',
        { class: `model-option${selected ? ' selected' : ''}`, role: 'option', 'aria-selected': String(selected), 'data-value': choice.value, id: `model-option-${index}` },
        selected ? icon('check') : h('span', { class: 'model-option-spacer' }),
        h('span', {}, choice.label),
      );
      option.addEventListener('mousedown', (event) => event.preventDefault());
      option.addEventListener('click', () => this.choose(choice.value));
      return option;
    });
    const note = error ? h('li', { class: 'model-error', role: 'note' }, error) : items.length === 0 ? h('li', { class: 'model-loading' }, 'No model matches.') : null;
    this.options.replaceChildren(...(note ? [note] : []), ...items);
    this.activate(Math.max(0, items.findIndex((item) => item.classList.contains('selected'))));
  }

  private activate(index: number): void {
    const options = [...this.options.querySelectorAll<HTMLElement>('.model-option')];
    options.forEach((option, i) => option.classList.toggle('active', i === index));
    const active = options[index];
    if (active) {
      this.filter.setAttribute('aria-activedescendant', active.id);
      active.scrollIntoView({ block: 'nearest' });
    }
  }

  private onKey(event: KeyboardEvent): void {
    const options = [...this.options.querySelectorAll<HTMLElement>('.model-option')];
    const index = options.findIndex((o) => o.classList.contains('active'));
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (options.length > 0) this.activate((index + (event.key === 'ArrowDown' ? 1 : -1) + options.length) % options.length);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      const active = options[index];
      if (active) this.choose(active.dataset.value ?? '');
    }
  }

  private choose(value: string): void {
    const role = this.openRole;
    if (!role) return;
    this.close(true);
    if (value === this.current) return;
    this.actions.post({ type: 'selectModel', role, model: value });
    this.actions.announce(role === 'main' ? `Model set to ${value}` : value ? `Fast model set to ${value}` : 'Suggestions and speculation use the main model');
  }
}
