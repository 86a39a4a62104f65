// Tab in one frame, in Chromium: the speculated turns the host previews are rendered off-screen, and
// Tab reveals them in its own key event, before any host reply; then applied, conflicts, or withdrawn.
import * as assert from 'node:assert/strict';
import type { SpeculationPreview, TranscriptItem } from '../../src/shared/protocol';
import { settle, useChatPages, type ChatPage } from './harness';

const SUGGESTION = { id: 's1', text: 'add a test for farewell' };
const NEXT = { id: 's2', text: 'run the tests' };
const ANSWER = 'I added `test/greet.test.mjs`, which checks that greet and farewell work.';
const READY = { state: 'ready', toolCalls: 2, filesWritten: ['test/greet.test.mjs'], suggestionId: 's1' } as const;

/** The turns of the finished run, with the ids the host gives a preview (stable per run). */
const ITEMS: TranscriptItem[] = [
  { kind: 'user', id: 'v3.0', text: SUGGESTION.text, speculated: true },
  { kind: 'assistant', id: 'v3.1', text: 'I will add a test next to the source.', speculated: true },
  {
    kind: 'toolGroup',
    id: 'v3.2',
    done: true,
    speculated: true,
    calls: [
      { callId: 'c1', tool: 'read_file', summary: 'src/greet.ts', status: 'ok', result: 'export function greet() {}' },
      { callId: 'c2', tool: 'write_file', summary: 'test/greet.test.mjs', status: 'ok', result: 'Wrote test/greet.test.mjs' },
    ],
  },
  { kind: 'assistant', id: 'v3.3', text: ANSWER, speculated: true },
];

function preview(patch: Partial<SpeculationPreview> = {}): SpeculationPreview {
  return { seq: 7, suggestionId: 's1', final: true, from: 0, items: ITEMS, next: NEXT, ...patch };
}

describe('chat webview: Tab reveals the speculated result', function () {
  this.timeout(20_000);
  const pages = useChatPages();
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  /** A chat with the suggestion shown, its run ready and its preview sent. */
  async function readyChat(patch: Partial<SpeculationPreview> = {}): Promise<void> {
    await chat.init({
      transcript: [{ kind: 'user', id: 'u0', text: 'read src/greet.ts' }, { kind: 'assistant', id: 'a0', text: 'It exports greet.' }],
      suggestion: SUGGESTION,
      speculation: { ...READY, filesWritten: [...READY.filesWritten] },
    });
    await chat.send({ type: 'speculationPreview', preview: preview(patch) });
    await chat.clearPosted();
  }

  /** What is visible on screen (a hidden, off-screen copy does not count). */
  const visibleTexts = (selector: string): Promise<string[]> =>
    chat.page.evaluate(
      (s) => [...document.querySelectorAll<HTMLElement>(s)].filter((el) => el.checkVisibility()).map((el) => el.textContent ?? ''),
      selector,
    );

  /**
   * Presses Tab and records, from a listener on the input that runs right after the page's own
   * handler in the same key event, what was on screen then and how many host messages had arrived.
   */
  async function pressTabAndLook(): Promise<{ answerShown: boolean; userShown: boolean; markShown: boolean; hostMessages: number }> {
    await chat.page.evaluate(() => {
      const w = window as unknown as { __look?: unknown; __hostMessages: number };
      w.__hostMessages = 0;
      window.addEventListener('message', () => w.__hostMessages++, true);
      const visible = (selector: string, text: string) =>
        [...document.querySelectorAll<HTMLElement>(selector)].some((el) => el.checkVisibility() && (el.textContent ?? '').includes(text));
      document.querySelector('textarea')!.addEventListener(
        'keydown',
        () => {
          w.__look = {
            answerShown: visible('.assistant-text', 'which checks that greet and farewell work'),
            userShown: visible('.user-text', 'add a test for farewell'),
            markShown: visible('.apply-mark', 'applying…'),
            hostMessages: w.__hostMessages,
          };
        },
        { once: true },
      );
    });
    await chat.page.keyboard.press('Tab');
    return chat.page.evaluate(() => (window as unknown as { __look: never }).__look);
  }

  it('renders the preview off-screen: nothing of it is visible, announced or focusable before Tab', async () => {
    await readyChat();
    const { page } = chat;
    assert.deepEqual(await visibleTexts('.user-text'), ['read src/greet.ts']);
    assert.deepEqual(await visibleTexts('.assistant-text'), ['It exports greet.']);
    const stage = await page.evaluate(() => {
      const el = document.querySelector<HTMLElement>('.transcript-offscreen')!;
      return { inTranscript: el.closest('.transcript') !== null, hidden: el.hidden, ariaHidden: el.getAttribute('aria-hidden'), answers: el.querySelectorAll('.assistant-text').length };
    });
    assert.deepEqual(stage, { inTranscript: true, hidden: true, ariaHidden: 'true', answers: 2 }, 'rendered into the transcript, hidden');
    await settle(page);
    assert.doesNotMatch((await page.locator('#announcer').textContent()) ?? '', /farewell work/, 'the hidden answer is not announced');
  });

  it('reveals the result on Tab in the key event itself, without a host reply, and keeps the focus in the input', async () => {
    await readyChat();
    const { page } = chat;
    const look = await pressTabAndLook();
    assert.deepEqual(look, { answerShown: true, userShown: true, markShown: true, hostMessages: 0 });
    assert.deepEqual(await chat.posted(), [{ type: 'acceptRevealed', suggestionId: 's1', seq: 7, method: 'tab' }], 'the host is told which version is on screen, nothing else');
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA');
    // The pipelined suggestion came with the preview: it is there in the same frame.
    assert.equal(await page.locator('.ghost-text').innerText(), NEXT.text);
    assert.equal(await page.locator('.spec-status').isVisible(), false, 'the finished run’s status line went with it');
    // Same elements as when the host appends the turns: marked speculated, tool calls with results.
    assert.deepEqual(await visibleTexts('.user-text'), ['read src/greet.ts', SUGGESTION.text]);
    assert.equal(await page.locator('.turn.request[aria-label="You (accepted suggestion)"]').count(), 1);
    assert.deepEqual(await visibleTexts('.tool-group .tool-name'), ['read_file', 'write_file']);
    assert.equal(await page.locator('.transcript-offscreen .turn').count(), 0, 'moved, not copied');
    // The live region says the result (and the next suggestion), as when the turns arrive from the host.
    await page.waitForFunction(() => /which checks that greet and farewell work\..*Suggestion: run the tests/.test(document.getElementById('announcer')?.textContent ?? ''));
  });

  it('marks the revealed block "applying…" until the host answers, and keeps the sentence when the notice follows at once', async () => {
    await readyChat();
    const { page } = chat;
    // Tab, and the host's answer a moment later (as fast as it comes in the workbench).
    const markWhileApplying = await page.evaluate(() => {
      const input = document.querySelector('textarea')!;
      input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Tab', bubbles: true, cancelable: true }));
      const text = document.querySelector('.turn.response .turn-header .apply-mark')?.textContent;
      window.postMessage({ type: 'revealAnswer', seq: 7, outcome: 'applied', notApplied: [] }, '*');
      window.postMessage({ type: 'notice', id: 'n1', text: 'Speculated 2 tool calls · 3.1 s saved' }, '*');
      window.postMessage({ type: 'suggestion', id: 's2', text: 'run the tests' }, '*');
      return text;
    });
    assert.equal(markWhileApplying, 'applying…');
    await settle(page);
    const mark = page.locator('.apply-mark');
    assert.equal(await mark.count(), 0, 'applied: the mark goes');
    assert.equal(await page.locator('.badge.speculated').count(), 2, 'still marked speculated');
    assert.deepEqual(await visibleTexts('.notice'), ['Speculated 2 tool calls · 3.1 s saved']);
    assert.equal(await page.locator('.ghost-text').innerText(), NEXT.text);
    // The notice said right after does not swap the result out of the live region.
    await page.waitForFunction(() => {
      const said = document.getElementById('announcer')?.textContent ?? '';
      return said.includes('farewell work') && said.includes('Speculated 2 tool calls');
    });
    // Answers for another version, or a second time, change nothing.
    await chat.send({ type: 'revealAnswer', seq: 7, outcome: 'withdrawn', notApplied: [] });
    assert.deepEqual(await visibleTexts('.user-text'), ['read src/greet.ts', SUGGESTION.text]);
  });

  it('shows what was not applied when the apply finds conflicts, with the conflict choices, then what the user kept', async () => {
    await readyChat();
    const { page } = chat;
    await page.keyboard.press('Tab');
    await chat.send({ type: 'revealAnswer', seq: 7, outcome: 'conflicts', notApplied: ['test/greet.test.mjs'] });
    await chat.send({ type: 'conflicts', id: 'k1', files: [{ path: 'test/greet.test.mjs', reason: 'changed in the editor since Speculate copied it' }] });
    const mark = page.locator('.apply-mark');
    assert.equal(await mark.innerText(), 'test/greet.test.mjs not applied yet');
    assert.equal(await mark.getAttribute('data-state'), 'waiting');
    // The conflict choices sit in the revealed response, under the turns they are about.
    assert.equal(await page.locator('.turn.response .conflicts .conflict-file[data-path="test/greet.test.mjs"]').count(), 1);
    const lastResponse = page.locator('.transcript-items > .turn.response').last();
    assert.equal(await lastResponse.locator('.conflicts').count(), 1);
    // The next suggestion waits until every file is settled (the host shows it then).
    assert.equal(await page.locator('.ghost').isVisible(), false);

    await chat.clearPosted();
    await page.locator('.conflict-actions button', { hasText: 'Keep mine' }).click();
    assert.deepEqual(await chat.posted(), [{ type: 'conflictChoice', conflictId: 'k1', path: 'test/greet.test.mjs', choice: 'keep-mine' }]);
    const kept = 'Wrote test/greet.test.mjs\n(Note: not applied — the user kept their own version of test/greet.test.mjs.)';
    await chat.send({ type: 'toolCallUpdate', groupId: 'v3.2', call: { callId: 'c2', tool: 'write_file', summary: 'test/greet.test.mjs', status: 'ok', result: kept } });
    await chat.send({ type: 'revealAnswer', seq: 7, outcome: 'applied', notApplied: ['test/greet.test.mjs'] });
    assert.equal(await mark.innerText(), 'test/greet.test.mjs not applied');
    assert.equal(await mark.getAttribute('data-state'), 'not-applied');
    assert.match(await page.locator('.tool-call[data-call-id="c2"] .tool-result').innerText(), /Note: not applied — the user kept their own version/);
  });

  it('takes the block down when the host refuses a stale preview, and shows what the host appends instead', async () => {
    await readyChat();
    const { page } = chat;
    await page.keyboard.press('Tab');
    await chat.send({ type: 'revealAnswer', seq: 7, outcome: 'withdrawn', notApplied: [] });
    assert.deepEqual(await visibleTexts('.user-text'), ['read src/greet.ts'], 'nothing of the stale version stays');
    assert.equal(await page.locator('.apply-mark').count(), 0);
    assert.equal(await page.locator('.ghost').isVisible(), false, 'its next suggestion goes with it');
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA');
    // Today's path: the host applies the newer version and sends it.
    const newer: TranscriptItem[] = [
      { kind: 'user', id: 'p1', text: SUGGESTION.text, speculated: true },
      { kind: 'assistant', id: 'p2', text: 'Newer: the test also covers empty names.', speculated: true },
    ];
    await chat.send({ type: 'appendItems', items: newer });
    await chat.send({ type: 'notice', id: 'n1', text: 'Speculated 1 tool call · 2.0 s saved' });
    assert.deepEqual(await visibleTexts('.user-text'), ['read src/greet.ts', SUGGESTION.text]);
    assert.deepEqual(await visibleTexts('.assistant-text'), ['It exports greet.', 'Newer: the test also covers empty names.']);
  });

  it('asks the host the usual way when the run is still in flight (it is promoted) or there is no preview', async () => {
    await readyChat({ final: false, next: null });
    const { page } = chat;
    await page.keyboard.press('Tab');
    assert.deepEqual(await chat.posted(), [{ type: 'acceptSuggestion', suggestionId: 's1', method: 'tab' }]);
    assert.deepEqual(await visibleTexts('.user-text'), ['read src/greet.ts'], 'nothing revealed: the promoted run streams in');

    await chat.send({ type: 'suggestion', id: 's5', text: 'commit the change' });
    await chat.send({ type: 'speculationPreview', preview: preview({ suggestionId: 's4' }) });
    await chat.clearPosted();
    await page.waitForTimeout(120);
    await page.keyboard.press('Tab');
    assert.deepEqual(await chat.posted(), [{ type: 'acceptSuggestion', suggestionId: 's5', method: 'tab' }], 'a preview of another suggestion is not revealed');
  });

  it('keeps the off-screen copy current, rendering only the items that changed', async () => {
    await chat.init({ suggestion: SUGGESTION, speculation: { state: 'running', toolCalls: 0, filesWritten: [], suggestionId: 's1' } });
    const { page } = chat;
    await chat.send({ type: 'speculationPreview', preview: preview({ seq: 1, final: false, items: ITEMS.slice(0, 2), next: null }) });
    await page.evaluate(() => ((document.querySelector('.transcript-offscreen .user-text') as HTMLElement & { __first?: boolean }).__first = true));
    await chat.send({ type: 'speculationPreview', preview: preview({ seq: 2, final: false, from: 2, items: ITEMS.slice(2, 3), next: null }) });
    const kept = await page.evaluate(() => (document.querySelector('.transcript-offscreen .user-text') as HTMLElement & { __first?: boolean }).__first === true);
    assert.equal(kept, true, 'the unchanged items keep their elements');
    assert.equal(await page.locator('.transcript-offscreen .tool-call').count(), 2);
    await chat.send({ type: 'speculationPreview', preview: preview({ seq: 3, from: 3, items: ITEMS.slice(3) }) });
    assert.equal(await page.locator('.transcript-offscreen .assistant-text').count(), 2);
    // A changed earlier item is rendered again, without a duplicate.
    const changed: TranscriptItem = { kind: 'assistant', id: 'v3.1', text: 'I will add a test beside the source.', speculated: true };
    await chat.send({ type: 'speculationPreview', preview: preview({ seq: 4, from: 1, items: [changed, ...ITEMS.slice(2)] }) });
    assert.deepEqual(
      await page.evaluate(() => [...document.querySelectorAll('.transcript-offscreen .assistant-text')].map((el) => el.textContent)),
      ['I will add a test beside the source.', ANSWER.replace(/`/g, '')],
    );
    await chat.clearPosted();
    await page.keyboard.press('Tab');
    assert.deepEqual(await chat.posted(), [{ type: 'acceptRevealed', suggestionId: 's1', seq: 4, method: 'tab' }]);
    assert.deepEqual(await visibleTexts('.user-text'), [SUGGESTION.text]);
  });

  it('drops a copy it cannot bring up to date (a version it never got the start of), so Tab asks the host', async () => {
    await readyChat({ seq: 9, from: 2, items: ITEMS.slice(2) });
    await chat.page.keyboard.press('Tab');
    assert.deepEqual(await chat.posted(), [{ type: 'acceptSuggestion', suggestionId: 's1', method: 'tab' }]);
  });

  it('reveals a preview that came with init after a reload; a new chat clears the copy', async () => {
    await chat.init({ suggestion: SUGGESTION, speculation: { ...READY, filesWritten: [] }, preview: preview({ seq: 11 }) });
    const { page } = chat;
    await chat.clearPosted();
    await page.keyboard.press('Tab');
    assert.deepEqual(await chat.posted(), [{ type: 'acceptRevealed', suggestionId: 's1', seq: 11, method: 'tab' }]);
    await chat.send({ type: 'clear' });
    assert.equal(await page.locator('.turn').count(), 0);
    await chat.send({ type: 'suggestion', ...SUGGESTION });
    await chat.clearPosted();
    await page.waitForTimeout(120);
    await page.keyboard.press('Tab');
    assert.deepEqual(await chat.posted(), [{ type: 'acceptSuggestion', suggestionId: 's1', method: 'tab' }], 'nothing left to reveal');
  });

  it('does not take the next suggestion on a double press of Tab', async () => {
    await readyChat();
    const { page } = chat;
    // Two presses in a row (as a bouncing key sends them), the second one still handled by the input.
    const secondPrevented = await page.evaluate(() => {
      const input = document.querySelector('textarea')!;
      const press = () => {
        const event = new KeyboardEvent('keydown', { key: 'Tab', bubbles: true, cancelable: true });
        input.dispatchEvent(event);
        return event.defaultPrevented;
      };
      press();
      return press();
    });
    assert.deepEqual((await chat.posted()).map((m) => m.type), ['acceptRevealed']);
    assert.equal(await page.locator('.ghost-text').innerText(), NEXT.text, 'the next suggestion stays');
    assert.equal(secondPrevented, true, 'and the second Tab did not move the focus either');
  });
});
