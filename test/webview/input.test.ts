// The chat input in Chromium: submit, ghost-text suggestion (Tab, →, Enter, dismissals), the
// speculation status line, the busy state and the draft/scroll kept across a reload.
import * as assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TranscriptItem } from '../../src/shared/protocol';
import { repoRoot, settle, useChatPages, type ChatPage } from './harness';

const SUGGESTION = { id: 's1', text: 'add a regression test for input without a trailing newline' };

describe('chat webview: input', function () {
  this.timeout(20_000);
  const pages = useChatPages();
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  const focusedTag = (): Promise<string | undefined> => chat.page.evaluate(() => document.activeElement?.tagName);
  const postedOf = async (type: string): Promise<unknown[]> => (await chat.posted()).filter((m) => m.type === type);

  it('sends typed text on Enter, keeps Shift+Enter as a new line, and reports typing', async () => {
    await chat.init();
    const { page } = chat;
    const input = page.locator('textarea');
    assert.equal(await focusedTag(), 'TEXTAREA', 'the input has the focus on load');
    await chat.clearPosted();
    await page.keyboard.type('explain');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('the parser');
    assert.equal(await input.inputValue(), 'explain\nthe parser');
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.posted(), [
      { type: 'typing', hasText: true },
      { type: 'submit', text: 'explain\nthe parser' },
    ]);
    assert.equal(await input.inputValue(), '');

    await chat.clearPosted();
    await page.keyboard.press('Enter');
    await input.fill('   ');
    await page.keyboard.press('Enter');
    assert.deepEqual(await postedOf('submit'), [], 'blank input sends nothing');
    assert.equal(await page.locator('button.send').isDisabled(), true);
  });

  it('shows the suggestion as ghost text where typed text would start, with the hint and for screen readers', async () => {
    await chat.init({ suggestion: SUGGESTION });
    const { page } = chat;
    const ghost = page.locator('.ghost-text');
    assert.equal(await ghost.isVisible(), true);
    assert.equal(await ghost.innerText(), SUGGESTION.text);
    assert.equal(await page.locator('textarea').inputValue(), '', 'the suggestion is not text in the input');
    assert.equal(await page.locator('textarea').getAttribute('placeholder'), '');
    assert.match(await page.locator('.suggestion-hint').innerText(), /Tab\s+to accept\s+·\s+→\s+to edit/);

    const described = await page.evaluate(() => {
      const ids = document.querySelector('textarea')!.getAttribute('aria-describedby')!.split(' ');
      return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
    });
    assert.match(described, /Suggested prompt: add a regression test .* Press Tab to accept/);
    await page.waitForFunction(() => document.getElementById('announcer')?.textContent?.startsWith('Suggestion: add a regression'));

    // Lined up with the textarea's own text box: same font, same content box, wraps inside it.
    const geometry = await page.evaluate(() => {
      const ta = document.querySelector('textarea')!;
      const span = document.querySelector('.ghost-text')!;
      const ghost = document.querySelector('.ghost') as HTMLElement;
      const ts = getComputedStyle(ta);
      const gs = getComputedStyle(ghost);
      const taBox = ta.getBoundingClientRect();
      const firstLine = span.getClientRects()[0]!;
      const lastLine = [...span.getClientRects()].at(-1)!;
      return {
        fonts: [ts.fontFamily, ts.fontSize, ts.lineHeight, ts.letterSpacing, ts.whiteSpace, ts.overflowWrap],
        ghostFonts: [gs.fontFamily, gs.fontSize, gs.lineHeight, gs.letterSpacing, gs.whiteSpace, gs.overflowWrap],
        textLeft: taBox.left + parseFloat(ts.paddingLeft) + parseFloat(ts.borderLeftWidth),
        textTop: taBox.top + parseFloat(ts.paddingTop) + parseFloat(ts.borderTopWidth),
        ghostLeft: firstLine.left,
        ghostTop: firstLine.top,
        ghostRight: Math.max(...[...span.getClientRects()].map((r) => r.right)),
        textRight: taBox.right - parseFloat(ts.paddingRight),
        ghostBottom: lastLine.bottom,
        taBottom: taBox.bottom,
        lines: span.getClientRects().length,
      };
    });
    assert.deepEqual(geometry.ghostFonts, geometry.fonts);
    assert.ok(Math.abs(geometry.ghostLeft - geometry.textLeft) <= 1, `left ${geometry.ghostLeft} vs ${geometry.textLeft}`);
    assert.ok(Math.abs(geometry.ghostTop - geometry.textTop) <= 3, `top ${geometry.ghostTop} vs ${geometry.textTop}`);
    assert.ok(geometry.ghostRight <= geometry.textRight + 1, 'the ghost wraps inside the text box');

    // A suggestion longer than a line wraps and the input grows to show all of it.
    await chat.send({ type: 'suggestion', id: 's2', text: 'rename splitTokens to tokenize everywhere, update the callers in src and test, and run the whole test suite again' });
    const grown = await page.evaluate(() => {
      const span = document.querySelector('.ghost-text')!;
      return { lines: span.getClientRects().length, bottom: [...span.getClientRects()].at(-1)!.bottom, taBottom: document.querySelector('textarea')!.getBoundingClientRect().bottom };
    });
    assert.ok(grown.lines >= 2, 'the long suggestion wraps');
    assert.ok(grown.bottom <= grown.taBottom, 'the input is tall enough for the whole suggestion');
  });

  it('accepts with Tab, keeping the focus in the input; without a suggestion Tab moves on as usual', async () => {
    await chat.init({ suggestion: SUGGESTION });
    const { page } = chat;
    await chat.clearPosted();
    await page.keyboard.press('Tab');
    assert.deepEqual(await chat.posted(), [{ type: 'acceptSuggestion', suggestionId: 's1', method: 'tab' }]);
    assert.equal(await focusedTag(), 'TEXTAREA');
    assert.equal(await page.locator('.ghost').isVisible(), false);
    assert.equal(await page.locator('textarea').inputValue(), '');

    await page.keyboard.press('Tab');
    assert.notEqual(await focusedTag(), 'TEXTAREA', 'with no suggestion Tab leaves the input');
    assert.deepEqual(await postedOf('acceptSuggestion'), [{ type: 'acceptSuggestion', suggestionId: 's1', method: 'tab' }]);
  });

  it('accepts with a click on the hint too', async () => {
    await chat.init({ suggestion: SUGGESTION });
    await chat.clearPosted();
    await chat.page.locator('.hint-accept').click();
    assert.deepEqual(await chat.posted(), [{ type: 'acceptSuggestion', suggestionId: 's1', method: 'click' }]);
    assert.equal(await focusedTag(), 'TEXTAREA');
  });

  it('turns the suggestion into editable text on Right-arrow, without sending it', async () => {
    await chat.init({ suggestion: SUGGESTION });
    const { page } = chat;
    await chat.clearPosted();
    await page.keyboard.press('ArrowRight');
    const input = page.locator('textarea');
    assert.equal(await input.inputValue(), SUGGESTION.text);
    assert.equal(await input.evaluate((ta) => (ta as HTMLTextAreaElement).selectionStart), SUGGESTION.text.length, 'caret at the end');
    assert.equal(await page.locator('.ghost').isVisible(), false);
    assert.deepEqual(await chat.posted(), [
      { type: 'suggestionDismissed', suggestionId: 's1', why: 'edit' },
      { type: 'typing', hasText: true },
    ]);
    await page.keyboard.type(' first');
    await page.keyboard.press('Enter');
    assert.deepEqual((await postedOf('submit')).at(-1), { type: 'submit', text: `${SUGGESTION.text} first` });
  });

  it('does not accept on Enter in an empty input unless enterAcceptsSuggestion is on', async () => {
    await chat.init({ suggestion: SUGGESTION });
    const { page } = chat;
    await chat.clearPosted();
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.posted(), []);
    assert.equal(await page.locator('.ghost').isVisible(), true, 'the suggestion stays');

    await chat.send({ type: 'config', model: { label: 'm', demo: false }, settings: { enterAcceptsSuggestion: true } });
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.posted(), [{ type: 'acceptSuggestion', suggestionId: 's1', method: 'enter' }]);
  });

  it('dismisses the ghost text at once when the user types, pastes or presses Escape', async () => {
    await chat.init({ suggestion: SUGGESTION });
    const { page } = chat;
    await chat.clearPosted();
    await page.keyboard.type('w');
    assert.equal(await page.locator('.ghost').isVisible(), false);
    assert.equal(await page.locator('textarea').inputValue(), 'w');
    assert.deepEqual(await chat.posted(), [
      { type: 'suggestionDismissed', suggestionId: 's1', why: 'typed' },
      { type: 'typing', hasText: true },
    ]);

    await page.locator('textarea').fill('');
    await chat.send({ type: 'suggestion', id: 's2', text: 'run the tests' });
    await chat.clearPosted();
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('.ghost').isVisible(), false);
    assert.deepEqual(await chat.posted(), [{ type: 'suggestionDismissed', suggestionId: 's2', why: 'escape' }]);

    await chat.send({ type: 'suggestion', id: 's3', text: 'commit this' });
    await chat.clearPosted();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: pages.origin() });
    await page.evaluate(() => navigator.clipboard.writeText('pasted words'));
    await page.keyboard.press('Control+V');
    await page.waitForFunction(() => document.querySelector('textarea')!.value === 'pasted words');
    assert.equal(await page.locator('.ghost').isVisible(), false);
    assert.deepEqual((await chat.posted())[0], { type: 'suggestionDismissed', suggestionId: 's3', why: 'paste' });
    assert.equal((await postedOf('suggestionDismissed')).length, 1, 'dismissed once');
  });

  it('drops a suggestion that arrives after the user started typing', async () => {
    await chat.init();
    const { page } = chat;
    await page.keyboard.type('my own');
    await chat.clearPosted();
    await chat.send({ type: 'suggestion', id: 's9', text: 'something else' });
    assert.equal(await page.locator('.ghost').isVisible(), false);
    assert.deepEqual(await chat.posted(), [{ type: 'suggestionDismissed', suggestionId: 's9', why: 'typed' }]);
  });

  it('shows the speculation in a compact status line: running, ready, boundary, failed', async () => {
    await chat.init({ suggestion: SUGGESTION });
    const { page } = chat;
    const line = page.locator('.spec-status');
    assert.equal(await line.isVisible(), false, 'idle shows nothing');

    await chat.send({ type: 'speculation', status: { state: 'running', toolCalls: 3, filesWritten: [], suggestionId: 's1' } });
    assert.match(await line.innerText(), /Running ahead…\s+3 tool calls/);
    assert.equal(await line.locator('.icon-spinner').count(), 1);
    assert.equal(await line.locator('.preview').count(), 0, 'nothing to preview yet');

    await chat.send({ type: 'speculation', status: { state: 'ready', toolCalls: 4, filesWritten: ['test/parser.test.ts'], suggestionId: 's1' } });
    assert.match(await line.innerText(), /Ready — Tab to apply\s+· 4 tool calls/);
    assert.equal(await line.locator('.preview').getAttribute('aria-label'), 'Preview changes to 1 file');
    await page.waitForFunction(() => document.getElementById('announcer')?.lastElementChild?.textContent === 'Suggestion ready, 4 tool calls, 1 file changed. Tab to apply.');
    await chat.clearPosted();
    await line.locator('.preview').click();
    assert.deepEqual(await chat.waitForPosted('previewChanges'), { type: 'previewChanges' });
    await line.locator('.abort').click();
    assert.deepEqual(await chat.waitForPosted('abortSpeculation'), { type: 'abortSpeculation' });

    await chat.send({
      type: 'speculation',
      status: {
        state: 'boundary',
        toolCalls: 2,
        filesWritten: [],
        suggestionId: 's1',
        boundary: { type: 'shell', tool: 'run_shell_command', detail: '`npm install` changes files' },
      },
    });
    assert.match(await line.innerText(), /Stopped before run_shell_command: npm install changes files/);
    assert.equal(await line.locator('.status-text code').nth(1).innerText(), 'npm install', 'the host’s backticks become code');

    // The host's sentence in the user's words replaces the tool name and the classifier's reason.
    const said = 'Stopped before `npm test`: it may change files. Tab runs it with your approval.';
    await chat.send({
      type: 'speculation',
      status: { state: 'boundary', toolCalls: 0, filesWritten: [], suggestionId: 's1', boundary: { type: 'shell', tool: 'run_shell_command', detail: '`npm test` may change files (npm runs scripts)', text: said } },
    });
    assert.equal(await line.locator('.status-text').innerText(), 'Stopped before npm test: it may change files. Tab runs it with your approval.');
    assert.equal(await line.locator('.status-text code').innerText(), 'npm test');
    assert.equal(await line.locator('.status-note').count(), 0, 'the sentence says what Tab does');

    await chat.send({ type: 'speculation', status: { state: 'failed', toolCalls: 0, filesWritten: [], suggestionId: 's1', error: 'the answer was cut off at the output limit' } });
    assert.match(await line.innerText(), /Couldn’t run ahead: the answer was cut off at the output limit · Tab still sends it/);
    assert.equal(await line.locator('.abort').count(), 0);

    // A status for another suggestion is stale and not shown.
    await chat.send({ type: 'speculation', status: { state: 'ready', toolCalls: 1, filesWritten: [], suggestionId: 'old' } });
    assert.equal(await line.isVisible(), false);
    await chat.send({ type: 'speculation', status: { state: 'idle', toolCalls: 0, filesWritten: [] } });
    assert.equal(await line.isVisible(), false);
  });

  it('says quietly, without a suggestion, why running ahead does not work with this endpoint', async () => {
    await chat.init();
    const { page } = chat;
    const line = page.locator('.spec-status');
    await chat.send({ type: 'speculation', status: { state: 'failed', toolCalls: 0, filesWritten: [], error: "property 'chat_template_kwargs' is unsupported" } });
    assert.equal(await line.isVisible(), true, 'shown though no suggestion is on screen');
    assert.equal(await line.innerText(), "Couldn’t run ahead: property 'chat_template_kwargs' is unsupported");
    assert.equal(await line.locator('.status-text.quiet').count(), 1, 'quiet, not an error block');
    assert.equal(await page.locator('.error-block').count(), 0);
    await chat.send({ type: 'speculation', status: { state: 'idle', toolCalls: 0, filesWritten: [] } });
    assert.equal(await line.isVisible(), false);
  });

  it('turns Send into Stop while a turn runs and does not send meanwhile', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'turnState', busy: true });
    const button = page.locator('button.send');
    assert.equal(await button.getAttribute('aria-label'), 'Stop');
    await page.keyboard.type('queued thought');
    await page.keyboard.press('Enter');
    assert.deepEqual(await postedOf('submit'), []);
    assert.equal(await page.locator('textarea').inputValue(), 'queued thought', 'the draft is kept');
    await chat.clearPosted();
    await button.click();
    assert.deepEqual(await chat.posted(), [{ type: 'stopTurn' }]);
    await chat.send({ type: 'turnState', busy: false });
    assert.equal(await button.getAttribute('aria-label'), 'Send (Enter)');
    await page.locator('textarea').focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await postedOf('submit'), [{ type: 'submit', text: 'queued thought' }]);
  });

  it('keeps the draft and the scroll position across a reload (setState / getState)', async () => {
    const transcript: TranscriptItem[] = [];
    for (let i = 0; i < 30; i++) {
      transcript.push({ kind: 'user', id: `u${i}`, text: `question ${i}` }, { kind: 'assistant', id: `a${i}`, text: `answer ${i}\n\nwith a second paragraph` });
    }
    await chat.init({ transcript });
    const { page } = chat;
    await page.keyboard.type('half-written draft');
    await page.evaluate(() => {
      document.querySelector('.transcript')!.scrollTop = 400;
    });
    await page.waitForFunction(() => {
      const raw = sessionStorage.getItem('__vscodeState');
      return raw !== null && JSON.parse(raw).scrollTop === 400;
    });

    await page.reload();
    await page.waitForFunction(() => (window as unknown as { __posted: { type: string }[] }).__posted.some((m) => m.type === 'ready'));
    assert.equal(await page.locator('textarea').inputValue(), 'half-written draft', 'draft back before the host answers');
    await chat.init({ transcript, draft: 'an older draft the host kept' });
    await settle(page);
    assert.equal(await page.locator('textarea').inputValue(), 'half-written draft', 'the webview’s own draft wins');
    assert.equal(await page.evaluate(() => document.querySelector('.transcript')!.scrollTop), 400);
    assert.equal(await page.locator('.user-text').count(), 30);
  });

  it('looks like a finished chat with ghost text and a ready speculation (screenshot)', async () => {
    const { page } = chat;
    await page.setViewportSize({ width: 440, height: 760 });
    const longOutput = Array.from({ length: 48 }, (_, i) => `${String(i + 1).padStart(3)}  ${i === 17 ? 'export function splitTokens(src: string) {' : '// …'}`).join('\n');
    await chat.init({
      model: { label: 'qwen3-coder-plus', demo: false },
      transcript: [
        { kind: 'user', id: 'u1', text: 'Why does npm test fail on the parser tests?' },
        { kind: 'assistant', id: 'a1', text: 'Let me look at the parser and run its tests.' },
        {
          kind: 'toolGroup',
          id: 'g1',
          done: true,
          calls: [
            { callId: 'c1', tool: 'read_file', summary: 'src/parser.ts', status: 'ok', result: longOutput },
            { callId: 'c2', tool: 'run_shell_command', summary: 'npm test -- --grep parser', status: 'error', result: 'AssertionError: expected 3 tokens, got 2\n    at test/parser.test.ts:41' },
          ],
        },
        {
          kind: 'assistant',
          id: 'a2',
          text: 'The tokenizer drops the last token when the input has **no trailing newline**. In [src/parser.ts](src/parser.ts#L18) the loop stops one character early:\n\n```ts\nfor (let i = 0; i < src.length - 1; i++) {\n  // …\n}\n```\n\nIterate to `src.length` and flush the buffer after the loop.',
        },
        { kind: 'user', id: 'u2', text: 'fix the loop bound and rerun the tests', speculated: true },
        {
          kind: 'toolGroup',
          id: 'g2',
          done: true,
          speculated: true,
          calls: [
            { callId: 'c3', tool: 'edit', summary: 'src/parser.ts', status: 'ok', result: 'Edited src/parser.ts (1 replacement)' },
            { callId: 'c4', tool: 'run_shell_command', summary: 'npm test', status: 'ok', result: '42 passing (312ms)' },
          ],
        },
        { kind: 'assistant', id: 'a3', speculated: true, text: 'Fixed: the loop now runs to `src.length` and all **42 tests pass**.' },
        { kind: 'notice', id: 'n1', text: 'Speculated 2 tool calls · 4.2 s saved' },
      ],
      suggestion: SUGGESTION,
      speculation: { state: 'ready', toolCalls: 3, filesWritten: ['test/parser.test.ts'], suggestionId: 's1' },
    });
    await page.locator('textarea').focus();
    await settle(page);
    assert.equal(await page.locator('.ghost-text').isVisible(), true);
    assert.equal(await page.locator('.spec-status').isVisible(), true);
    const dir = join(repoRoot(), 'test', 'e2e', 'artifacts');
    mkdirSync(dir, { recursive: true });
    const png = await page.screenshot({ path: join(dir, 'webview-ghost-speculation.png') });
    assert.ok(png.length > 10_000, 'a real screenshot was written');
  });
});
