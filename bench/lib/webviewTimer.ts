// Timestamps taken inside the chat webview's own page: the keydown (capture phase), the host
// messages as they arrive, and the moment the awaited text is on screen (MutationObserver; a copy
// rendered off-screen, hidden, does not count until it is revealed).
import type { FrameLocator } from 'playwright-core';

export interface WebviewTiming {
  /** Wall-clock ms (performance.timeOrigin + event.timeStamp) of the measured keydown: when the browser got the key. */
  keyAt: number | null;
  /** When the page's capture listener saw that keydown (keyAt plus input routing). */
  keyHandledAt: number | null;
  /** The user message with the prompt is in the DOM. */
  userAt: number | null;
  /** An assistant text holding the final answer's last words is in the DOM and visible. */
  finalAt: number | null;
  /** The next animation frame after finalAt (the frame that paints it). */
  frameAt: number | null;
  /** Host messages that arrived after the keydown, in order (the event's own timeStamp: dispatch, not handling). */
  messages: { type: string; at: number }[];
}

interface TimerArgs {
  key: string;
  prompt: string;
  marker: string;
  types: string[];
}

interface TimerGlobal {
  __speculateBench?: { state: WebviewTiming; dispose(): void };
}

/** Installs a fresh timer in the webview (replacing the previous one). */
export async function installWebviewTimer(chat: FrameLocator, args: TimerArgs): Promise<void> {
  await chat.locator('#app').evaluate((_app, a: TimerArgs) => {
    const w = window as unknown as TimerGlobal;
    w.__speculateBench?.dispose();
    const now = () => performance.timeOrigin + performance.now();
    const state: WebviewTiming = { keyAt: null, keyHandledAt: null, userAt: null, finalAt: null, frameAt: null, messages: [] };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== a.key || state.keyAt !== null) return;
      state.keyHandledAt = now();
      state.keyAt = performance.timeOrigin + event.timeStamp;
    };
    // The page's own listener may run first and render before this one runs, so the arrival is
    // the event's timeStamp (set when the message was dispatched), not the time seen here.
    const onMessage = (event: MessageEvent) => {
      const data = event.data as { type?: unknown } | null;
      if (state.keyAt !== null && data && typeof data.type === 'string' && a.types.includes(data.type)) {
        state.messages.push({ type: data.type, at: performance.timeOrigin + event.timeStamp });
      }
    };
    const shown = (selector: string, matches: (text: string) => boolean) =>
      Array.from(document.querySelectorAll<HTMLElement>(selector)).some((el) => matches(el.textContent ?? '') && el.checkVisibility());
    const check = () => {
      if (state.keyAt === null) return;
      if (state.userAt === null && shown('.user-text', (text) => text === a.prompt)) state.userAt = now();
      if (state.finalAt === null && shown('.assistant-text', (text) => text.includes(a.marker))) {
        state.finalAt = now();
        requestAnimationFrame(() => {
          state.frameAt = now();
        });
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
    document.addEventListener('keydown', onKey, true);
    window.addEventListener('message', onMessage, true);
    w.__speculateBench = {
      state,
      dispose() {
        observer.disconnect();
        document.removeEventListener('keydown', onKey, true);
        window.removeEventListener('message', onMessage, true);
      },
    };
  }, args);
}

/**
 * Makes the next Tab take today's path: the webview forgets its off-screen copy of the run (the
 * host's own "no preview" message), so the keydown asks the host to accept and render instead.
 */
export async function forgetSpeculationPreview(chat: FrameLocator): Promise<void> {
  await chat.locator('#app').evaluate(
    () =>
      new Promise<void>((resolve) => {
        window.postMessage({ type: 'speculationPreview', preview: null }, '*');
        // Handled in order: once this second message arrives, the first one was applied.
        const done = (event: MessageEvent) => {
          if (event.data !== '__speculate_bench_forgot') return;
          window.removeEventListener('message', done);
          resolve();
        };
        window.addEventListener('message', done);
        window.postMessage('__speculate_bench_forgot', '*');
      }),
  );
}

export async function readWebviewTiming(chat: FrameLocator): Promise<WebviewTiming> {
  return chat.locator('#app').evaluate(() => {
    const bench = (window as unknown as TimerGlobal).__speculateBench;
    if (!bench) throw new Error('no webview timer installed');
    return bench.state;
  });
}

/** Polls the webview until the final answer and the frame after it were recorded. */
export async function waitForRendered(chat: FrameLocator, timeoutMs: number): Promise<WebviewTiming> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const timing = await readWebviewTiming(chat);
    if (timing.finalAt !== null && timing.frameAt !== null) return timing;
    if (Date.now() > deadline) throw new Error(`the final answer was not rendered within ${timeoutMs} ms (${JSON.stringify(timing)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
