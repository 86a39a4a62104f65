// The chat input: an auto-growing textarea with the suggestion as ghost text laid exactly where
// typed text would be (a mirror behind the transparent textarea), Tab to accept, → to edit.
import type { AcceptGesture, ChatSettings, DismissReason, ModelInfo, Suggestion, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';

export interface ComposerActions {
  post(message: WebviewToHost): void;
  announce(text: string): void;
  /** The draft changed (for setState). */
  draftChanged(text: string): void;
  /**
   * Accepts by revealing the suggestion's finished result, already rendered: returns the suggestion
   * to show next, or null when there is nothing to reveal (the host is then asked to accept).
   */
  revealAccepted?(suggestion: Suggestion, method: AcceptGesture): { next: Suggestion | null } | null;
  /** Ids of the context chips that go with the next message (mentions.ts). */
  attachments?(): string[];
  /** A message was sent (its chips went with it). */
  submitted?(): void;
}

const PLACEHOLDER = 'Ask Speculate about your code';
/** The input never grows beyond this share of the view; it scrolls instead. */
const MAX_HEIGHT_SHARE = 0.45;
const MIN_MAX_HEIGHT = 120;
/**
 * A second accept this soon after the last is a double press: the host ignores it (the session's
 * ACCEPT_DEBOUNCE_MS), so the webview must not take the next suggestion off the screen for it either.
 */
const ACCEPT_REPEAT_MS = 100;

export class Composer {
  readonly element: HTMLElement;
  readonly textarea: HTMLTextAreaElement;
  private readonly ghost: HTMLElement;
  private readonly ghostText: HTMLElement;
  private readonly hint: HTMLElement;
  private readonly suggestionDescription: HTMLElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly modelLabel: HTMLElement;
  private readonly demoBadge: HTMLElement;
  private suggestion: Suggestion | null = null;
  private busy = false;
  private settings: ChatSettings = { enterAcceptsSuggestion: false };
  /** The accept key's label in the hint: Tab, or Ctrl+Enter while Tab moves focus. */
  private readonly acceptKey = h('kbd', {}, 'Tab');
  private hadText = false;
  private lastAcceptAt = Number.NEGATIVE_INFINITY;

  constructor(
    statusLine: HTMLElement,
    private readonly actions: ComposerActions,
  ) {
    this.textarea = h('textarea', {
      class: 'input',
      rows: '1',
      placeholder: PLACEHOLDER,
      'aria-label': 'Message Speculate',
      'aria-describedby': 'suggestion-description input-help',
      spellcheck: 'true',
    });
    this.ghostText = h('span', { class: 'ghost-text' });
    this.ghost = h('div', { class: 'ghost', 'aria-hidden': 'true', hidden: true }, this.ghostText);
    this.suggestionDescription = h('span', { id: 'suggestion-description', class: 'sr-only' });

    const acceptHint = button(h('span', {}, this.acceptKey, ' to accept'), () => this.accept('click'), {
      class: 'hint-accept',
      tabindex: '-1',
      title: 'Accept the suggestion (Tab)',
    });
    this.hint = h(
      'div',
      { class: 'suggestion-hint', hidden: true, 'aria-hidden': 'true' },
      acceptHint,
      h('span', { class: 'hint-sep' }, '·'),
      h('span', { class: 'hint-edit' }, h('kbd', {}, '→'), ' to edit'),
    );

    this.sendButton = button(icon('send'), () => this.onSendButton(), { class: 'icon-button send', 'aria-label': 'Send (Enter)', title: 'Send (Enter)' });
    const newChat = button(icon('add'), () => this.actions.post({ type: 'newChat' }), {
      class: 'icon-button new-chat',
      'aria-label': 'New chat',
      title: 'New chat',
    });
    this.modelLabel = h('span', { class: 'model-label' });
    this.demoBadge = h('span', {
      class: 'badge demo',
      hidden: true,
      title: 'Answers come from the built-in demo model. Set an endpoint and API key in the Speculate settings to use your own.',
    }, 'demo model');

    const field = h('div', { class: 'input-field' }, this.ghost, this.textarea);
    const toolbar = h(
      'div',
      { class: 'input-toolbar' },
      this.hint,
      h('div', { class: 'model', title: 'Model' }, this.modelLabel, this.demoBadge),
      h('div', { class: 'toolbar-actions' }, newChat, this.sendButton),
    );
    this.element = h(
      'footer',
      { class: 'composer' },
      statusLine,
      h('div', { class: 'input-box' }, field, toolbar),
      this.suggestionDescription,
      h('span', { id: 'input-help', class: 'sr-only' }, 'Enter sends, Shift+Enter adds a new line.'),
    );

    this.textarea.addEventListener('keydown', (event) => this.onKeyDown(event));
    this.textarea.addEventListener('beforeinput', (event) => this.onBeforeInput(event));
    this.textarea.addEventListener('paste', () => this.dismiss('paste'));
    this.textarea.addEventListener('compositionstart', () => this.dismiss('typed'));
    this.textarea.addEventListener('input', () => this.onInput());
    window.addEventListener('resize', () => this.resize());
    this.updateSendButton();
  }

  get value(): string {
    return this.textarea.value;
  }

  get currentSuggestion(): Suggestion | null {
    return this.suggestion;
  }

  /** true when the user has something typed (approvals and conflicts then leave the focus alone). */
  hasDraft(): boolean {
    return this.textarea.value.trim() !== '';
  }

  focus(): void {
    this.textarea.focus();
  }

  setDraft(text: string): void {
    this.textarea.value = text;
    this.hadText = text !== '';
    this.resize();
    this.updateSendButton();
  }

  setModel(model: ModelInfo): void {
    this.modelLabel.textContent = model.label;
    this.demoBadge.hidden = !model.demo;
  }

  setSettings(settings: ChatSettings): void {
    this.settings = settings;
    this.acceptKey.textContent = this.acceptKeyLabel();
    this.describeSuggestion();
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.updateSendButton();
  }

  /** Shows (or with null, removes) the ghost text. A suggestion never covers typed text. */
  setSuggestion(suggestion: Suggestion | null): void {
    if (suggestion && this.textarea.value !== '') {
      // The user typed before the suggestion arrived: it is already out of date.
      this.actions.post({ type: 'suggestionDismissed', suggestionId: suggestion.id, why: 'typed' });
      suggestion = null;
    }
    const changed = this.suggestion?.id !== suggestion?.id || this.suggestion?.text !== suggestion?.text;
    this.suggestion = suggestion;
    this.ghostText.textContent = suggestion?.text ?? '';
    this.ghost.hidden = suggestion === null;
    this.hint.hidden = suggestion === null;
    this.element.classList.toggle('has-suggestion', suggestion !== null);
    this.textarea.placeholder = suggestion ? '' : PLACEHOLDER;
    this.describeSuggestion();
    this.resize();
    this.updateSendButton();
    // The suggestion's text is said once, when it appears; its status lines follow it.
    if (suggestion && changed) this.actions.announce(`Suggestion: ${suggestion.text}. ${this.acceptKeyLabel()} to accept.`);
  }

  /**
   * The key that accepts: Tab, unless VS Code's "Tab Moves Focus" (Ctrl+M) is on, when Tab must
   * move the focus as everywhere else; Ctrl+Enter (⌘Enter) accepts in either case.
   */
  acceptKeyLabel(): string {
    if (!this.settings.tabMovesFocus) return 'Tab';
    return /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘Enter' : 'Ctrl+Enter';
  }

  private describeSuggestion(): void {
    const suggestion = this.suggestion;
    this.suggestionDescription.textContent = suggestion
      ? `Suggested prompt: ${suggestion.text}. Press ${this.acceptKeyLabel()} to accept, Right Arrow to edit it, Escape to dismiss.`
      : '';
  }

  private accept(method: AcceptGesture): void {
    const suggestion = this.suggestion;
    if (!suggestion) return;
    const now = performance.now();
    if (now - this.lastAcceptAt < ACCEPT_REPEAT_MS) return;
    this.lastAcceptAt = now;
    const revealed = this.actions.revealAccepted?.(suggestion, method) ?? null;
    if (!revealed) this.actions.post({ type: 'acceptSuggestion', suggestionId: suggestion.id, method });
    this.setSuggestion(revealed?.next ?? null);
    this.textarea.focus();
  }

  private dismiss(why: DismissReason): void {
    const suggestion = this.suggestion;
    if (!suggestion) return;
    this.actions.post({ type: 'suggestionDismissed', suggestionId: suggestion.id, why });
    this.setSuggestion(null);
  }

  /** Right-arrow: the suggestion becomes ordinary, editable text; nothing is sent. */
  private fillFromSuggestion(): void {
    const suggestion = this.suggestion;
    if (!suggestion) return;
    this.dismiss('edit');
    this.textarea.value = suggestion.text;
    const end = suggestion.text.length;
    this.textarea.setSelectionRange(end, end);
    this.onInput();
  }

  private onKeyDown(event: KeyboardEvent): void {
    if (event.isComposing) return;
    const plain = !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey;
    const suggestion = this.suggestion;

    const acceptChord = event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.shiftKey && !event.altKey && this.textarea.value === '';
    if (suggestion && ((event.key === 'Tab' && plain && !this.settings.tabMovesFocus) || acceptChord)) {
      event.preventDefault();
      event.stopPropagation();
      // 'tab' is the accept key, whichever key that is now.
      this.accept('tab');
      return;
    }
    if (event.key === 'ArrowRight' && plain && suggestion && this.textarea.value === '') {
      event.preventDefault();
      event.stopPropagation();
      this.fillFromSuggestion();
      return;
    }
    if (event.key === 'Escape' && suggestion) {
      event.preventDefault();
      event.stopPropagation();
      this.dismiss('escape');
      return;
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.altKey) {
      event.preventDefault();
      const text = this.textarea.value;
      if (text.trim() === '') {
        if (suggestion && this.settings.enterAcceptsSuggestion) this.accept('enter');
        return;
      }
      if (!this.busy) this.submit(text);
    }
  }

  private onBeforeInput(event: InputEvent): void {
    if (!this.suggestion) return;
    if (event.inputType === 'insertFromPaste' || event.inputType === 'insertFromDrop') this.dismiss('paste');
    else if (event.inputType.startsWith('insert')) this.dismiss('typed');
  }

  private onInput(): void {
    const value = this.textarea.value;
    if (value !== '' && this.suggestion) this.dismiss('typed');
    const hasText = value !== '';
    if (hasText !== this.hadText) {
      this.hadText = hasText;
      this.actions.post({ type: 'typing', hasText });
    }
    this.resize();
    this.updateSendButton();
    this.actions.draftChanged(value);
  }

  private onSendButton(): void {
    if (this.busy) {
      this.actions.post({ type: 'stopTurn' });
      return;
    }
    const text = this.textarea.value;
    if (text.trim() !== '') this.submit(text);
    this.textarea.focus();
  }

  /** A submit implies the input is empty again; no separate `typing` message follows. */
  private submit(text: string): void {
    const attachments = this.actions.attachments?.() ?? [];
    this.actions.post(attachments.length > 0 ? { type: 'submit', text, attachments } : { type: 'submit', text });
    this.actions.submitted?.();
    this.textarea.value = '';
    this.hadText = false;
    this.resize();
    this.updateSendButton();
    this.actions.draftChanged('');
  }

  private updateSendButton(): void {
    const button = this.sendButton;
    const canSend = this.textarea.value.trim() !== '';
    button.replaceChildren(this.busy ? icon('stop') : icon('send'));
    button.classList.toggle('stop', this.busy);
    const label = this.busy ? 'Stop' : 'Send (Enter)';
    button.setAttribute('aria-label', label);
    button.title = label;
    button.disabled = !this.busy && !canSend;
  }

  /** Grows the textarea to its text (or to the ghost text, which must fit and wrap the same). */
  resize(): void {
    const ta = this.textarea;
    const max = Math.max(MIN_MAX_HEIGHT, Math.floor(window.innerHeight * MAX_HEIGHT_SHARE));
    ta.style.height = 'auto';
    const ghostHeight = this.ghost.hidden ? 0 : this.ghost.scrollHeight;
    const wanted = Math.max(ta.scrollHeight, ghostHeight);
    ta.style.height = `${Math.min(wanted, max)}px`;
    ta.style.overflowY = wanted > max ? 'auto' : 'hidden';
  }
}

