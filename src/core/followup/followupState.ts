// The visible suggestion's life: shown after a short delay, accepted once per key press, dismissed
// or cleared, each end reported with how long it was on screen. No UI and no timers of its own.

export const SUGGESTION_DELAY_MS = 300;
export const ACCEPT_DEBOUNCE_MS = 100;

export type TimerHandle = unknown;

/** Time, injected so tests can move it by hand. */
export interface FollowupClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: FollowupClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export type AcceptMethod = 'tab' | 'enter' | 'right';

export interface SuggestionOutcomeEvent {
  /** accepted: taken by a key; ignored: the user typed over it or dismissed it; cleared: withdrawn by the app. */
  outcome: 'accepted' | 'ignored' | 'cleared';
  method?: AcceptMethod;
  text: string;
  /** How long the suggestion was on screen. */
  visibleMs: number;
}

export interface FollowupCallbacks {
  onVisible?(text: string): void;
  onHidden?(): void;
  onOutcome?(event: SuggestionOutcomeEvent): void;
  /** A callback above threw; the controller has already recovered. */
  onCallbackError?(error: unknown): void;
}

export interface SetOptions {
  /** Show at once, skipping the delay: for the pipelined suggestion right after an accept. */
  immediate?: boolean;
}

export class FollowupController {
  private pending: { text: string; timer: TimerHandle } | null = null;
  private visible: { text: string; since: number } | null = null;
  private acceptLockedUntil = Number.NEGATIVE_INFINITY;
  /** Held while accept runs its callbacks, so an accept from inside a callback is ignored. */
  private accepting = false;
  private disposed = false;

  constructor(
    private readonly clock: FollowupClock,
    private readonly callbacks: FollowupCallbacks = {},
  ) {}

  /** The suggestion on screen now, or null. */
  get visibleText(): string | null {
    return this.visible?.text ?? null;
  }

  /** The suggestion waiting out its delay, or null. */
  get pendingText(): string | null {
    return this.pending?.text ?? null;
  }

  /**
   * Offers a new suggestion. It replaces whatever is shown or waiting; it becomes visible after
   * SUGGESTION_DELAY_MS unless a newer one arrives first. An empty text just clears.
   */
  set(text: string, options: SetOptions = {}): void {
    if (this.disposed) return;
    this.cancelPending();
    if (this.visible?.text === text) return; // the same words again: keep them, no flicker
    this.hide('cleared');
    if (text.trim() === '') return;
    if (options.immediate) {
      this.show(text);
      return;
    }
    const timer = this.clock.setTimeout(() => {
      if (this.pending?.timer !== timer) return;
      this.pending = null;
      this.show(text);
    }, SUGGESTION_DELAY_MS);
    this.pending = { text, timer };
  }

  /**
   * Takes the visible suggestion. Returns its text, or null when nothing is visible or the key
   * was pressed again within ACCEPT_DEBOUNCE_MS of the last accept (a double press must not also
   * take the next suggestion that appeared in between).
   */
  accept(method: AcceptMethod): string | null {
    if (this.disposed || this.accepting || this.visible === null) return null;
    const now = this.clock.now();
    if (now < this.acceptLockedUntil) return null;
    this.acceptLockedUntil = now + ACCEPT_DEBOUNCE_MS;
    const { text } = this.visible;
    this.accepting = true;
    try {
      this.hide('accepted', method);
    } finally {
      this.accepting = false;
    }
    return text;
  }

  /** The user typed over the suggestion or pressed Escape. Returns whether one was visible. */
  dismiss(): boolean {
    if (this.disposed) return false;
    this.cancelPending();
    return this.hide('ignored');
  }

  /** Withdraws the suggestion (new turn, new chat), shown or waiting; takes effect at once. */
  clear(): void {
    if (this.disposed) return;
    this.cancelPending();
    this.hide('cleared');
  }

  /** Stops everything: timers cancelled, no callback is ever called again. */
  cleanup(): void {
    this.cancelPending();
    this.visible = null;
    this.disposed = true;
  }

  private show(text: string): void {
    this.visible = { text, since: this.clock.now() };
    this.call(() => this.callbacks.onVisible?.(text));
  }

  private hide(outcome: SuggestionOutcomeEvent['outcome'], method?: AcceptMethod): boolean {
    const shown = this.visible;
    if (shown === null) return false;
    this.visible = null;
    const event: SuggestionOutcomeEvent = { outcome, text: shown.text, visibleMs: Math.max(0, this.clock.now() - shown.since) };
    if (method !== undefined) event.method = method;
    this.call(() => this.callbacks.onHidden?.());
    this.call(() => this.callbacks.onOutcome?.(event));
    return true;
  }

  private cancelPending(): void {
    if (this.pending === null) return;
    this.clock.clearTimeout(this.pending.timer);
    this.pending = null;
  }

  /** Runs a callback so that its exception can neither escape into a timer nor corrupt our state. */
  private call(fn: () => void): void {
    if (this.disposed) return;
    try {
      fn();
    } catch (error) {
      try {
        this.callbacks.onCallbackError?.(error);
      } catch {
        // the error reporter failed too; nothing sensible is left to do with it
      }
    }
  }
}
