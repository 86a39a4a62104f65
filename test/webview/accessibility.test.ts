// Keyboard and screen readers in the chat input: the live region says the suggestion's text once and
// then its state (nothing is swapped out), Tab leaves the input while VS Code's "Tab Moves Focus" is
// on (Ctrl+Enter accepts instead, and every hint names that key), and at the default sidebar width
// the status line never cuts "Tab to apply".
import * as assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, useChatPages, type ChatPage } from './harness';

const SUGGESTION = { id: 's1', text: 'add a farewell function to greet.ts' };
/** VS Code's default sidebar width. */
const SIDEBAR = { width: 300, height: 640 };

describe('chat webview: keyboard and screen readers', function () {
  this.timeout(30_000);
  const pages = useChatPages(SIDEBAR);
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  const liveLines = (): Promise<string[]> => chat.page.evaluate(() => [...document.getElementById('announcer')!.children].map((c) => c.textContent ?? ''));

  it('the live region says the suggestion once, then each state after it, without replacing it', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'suggestion', id: SUGGESTION.id, text: SUGGESTION.text });
    // The host sends the running status right after the suggestion, then ready.
    await chat.send({ type: 'speculation', status: { state: 'running', toolCalls: 0, filesWritten: [], suggestionId: 's1' } });
    await chat.send({ type: 'speculation', status: { state: 'running', toolCalls: 2, filesWritten: [], suggestionId: 's1' } });
    await chat.send({ type: 'speculation', status: { state: 'ready', toolCalls: 3, filesWritten: ['src/greet.ts'], suggestionId: 's1' } });
    assert.deepEqual(await liveLines(), [
      'Suggestion: add a farewell function to greet.ts. Tab to accept.',
      'Running the suggestion ahead.',
      'Suggestion ready, 3 tool calls, 1 file changed. Tab to apply.',
    ]);
    assert.equal(await page.locator('#announcer').getAttribute('aria-live'), 'polite');
    assert.equal(await page.locator('#announcer').getAttribute('aria-atomic'), 'false', 'each line is read on its own');

    // A boundary is said in the user's words.
    await chat.send({ type: 'suggestion', id: 's2', text: 'run the tests' });
    await chat.send({
      type: 'speculation',
      status: { state: 'boundary', toolCalls: 0, filesWritten: [], suggestionId: 's2', boundary: { type: 'shell', tool: 'run_shell_command', detail: '`npm test` may change files (npm runs scripts)', text: 'Stopped before `npm test`: it may change files. Tab runs it with your approval.' } },
    });
    const lines = await liveLines();
    assert.deepEqual(lines.slice(-2), ['Suggestion: run the tests. Tab to accept.', 'Stopped before npm test: it may change files. Tab runs it with your approval.']);
    assert.equal(lines.filter((l) => l.includes('run the tests')).length, 1, 'the suggestion text is said once');
  });

  it('with Tab Moves Focus on, Tab leaves the input and Ctrl+Enter accepts; the hints name Ctrl+Enter', async () => {
    await chat.init({ suggestion: SUGGESTION, settings: { enterAcceptsSuggestion: false, tabMovesFocus: true } });
    const { page } = chat;
    await chat.send({ type: 'speculation', status: { state: 'ready', toolCalls: 1, filesWritten: [], suggestionId: 's1' } });
    assert.equal(await page.locator('.hint-accept kbd').innerText(), 'Ctrl+Enter');
    assert.match(await page.locator('.spec-status .status-primary').innerText(), /Ready — Ctrl\+Enter to apply/);
    assert.match((await liveLines())[0] ?? '', /Ctrl\+Enter to accept/);
    assert.match(await page.evaluate(() => document.getElementById('suggestion-description')!.textContent ?? ''), /Press Ctrl\+Enter to accept/);

    await page.locator('textarea').focus();
    await chat.clearPosted();
    await page.keyboard.press('Tab');
    assert.notEqual(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA', 'Tab moved the focus on');
    assert.deepEqual((await chat.posted()).filter((m) => m.type === 'acceptSuggestion'), []);
    assert.equal(await page.locator('.ghost').isVisible(), true, 'the suggestion is still there');

    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA');
    await page.keyboard.press('Control+Enter');
    assert.deepEqual(await chat.waitForPosted('acceptSuggestion'), { type: 'acceptSuggestion', suggestionId: 's1', method: 'tab' });

    // Switched off again: Tab accepts as before.
    await chat.send({ type: 'config', model: { label: 'm', demo: false }, settings: { enterAcceptsSuggestion: false, tabMovesFocus: false } });
    await chat.send({ type: 'suggestion', id: 's3', text: 'run the tests' });
    assert.equal(await page.locator('.hint-accept kbd').innerText(), 'Tab');
    await chat.clearPosted();
    // A second accept within 100 ms is taken for a double press and ignored; a person is slower.
    await page.waitForTimeout(150);
    await page.keyboard.press('Tab');
    assert.deepEqual(await chat.waitForPosted('acceptSuggestion'), { type: 'acceptSuggestion', suggestionId: 's3', method: 'tab' });
  });

  it('Ctrl+Enter accepts with Tab Moves Focus off too', async () => {
    await chat.init({ suggestion: SUGGESTION });
    const { page } = chat;
    await page.locator('textarea').focus();
    await chat.clearPosted();
    await page.keyboard.press('Control+Enter');
    assert.deepEqual(await chat.waitForPosted('acceptSuggestion'), { type: 'acceptSuggestion', suggestionId: 's1', method: 'tab' });
  });

  it('at the default sidebar width "Tab to apply" is whole, with the counts and Preview changes', async () => {
    await chat.init({ suggestion: SUGGESTION });
    const { page } = chat;
    await chat.send({ type: 'speculation', status: { state: 'ready', toolCalls: 12, filesWritten: ['src/greet.ts', 'test/greet.test.ts'], suggestionId: 's1' } });
    const fit = await page.evaluate(() => {
      const line = document.querySelector('.spec-status')!.getBoundingClientRect();
      const primary = document.querySelector('.spec-status .status-primary') as HTMLElement;
      const box = primary.getBoundingClientRect();
      const preview = document.querySelector('.spec-status .preview')!.getBoundingClientRect();
      return { whole: primary.scrollWidth <= primary.clientWidth + 1, inside: box.left >= line.left && box.right <= line.right, previewInside: preview.right <= line.right + 0.5, text: primary.textContent };
    });
    assert.equal(fit.text, 'Ready — Tab to apply');
    assert.ok(fit.whole, '"Ready — Tab to apply" is not cut');
    assert.ok(fit.inside && fit.previewInside, 'everything stays inside the line (the buttons wrap)');
    mkdirSync(join(repoRoot(), 'test/e2e/artifacts'), { recursive: true });
    await page.locator('.composer').screenshot({ path: join(repoRoot(), 'test/e2e/artifacts/status-line-sidebar-width.png') });
  });
});
