// The chat webview in Chromium, the user in control: the history view (open, search, rename,
// delete), the model pickers, Edit & resend, Regenerate, Copy, the usage lines, and the transcript
// following a sent message with "Jump to latest" while an answer streams below a scrolled-up view.
import * as assert from 'node:assert/strict';
import type { HistoryEntry, TranscriptItem } from '../../src/shared/protocol';
import { settle, useChatPages, type ChatPage } from './harness';

const INPUT = 'textarea[aria-label="Message Speculate"]';
const NOW = Date.now();
const ENTRIES: HistoryEntry[] = [
  { id: 'chat-b-1', title: 'add a farewell', updatedAt: NOW - 60_000, workspace: 'demo', model: 'gpt-test', current: true },
  { id: 'chat-a-1', title: 'fix the greeting', updatedAt: NOW - 3 * 86_400_000, workspace: 'demo', model: 'gpt-test', current: false },
];

/** A long chat: enough to scroll. */
function longTranscript(turns: number): TranscriptItem[] {
  return Array.from({ length: turns }, (_, i): TranscriptItem[] => [
    { kind: 'user', id: `u${i}`, text: `question ${i}` },
    { kind: 'assistant', id: `a${i}`, text: `Answer ${i}.\n\n${'A line of the answer.\n\n'.repeat(6)}` },
  ]).flat();
}

describe('chat webview: history, models and message controls', function () {
  this.timeout(30_000);
  const pages = useChatPages();
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  it('the title bar\'s History opens the list; search asks the host; a click opens a chat', async () => {
    await chat.init({ title: 'add a farewell' });
    const { page } = chat;
    assert.equal(await page.locator('.chat-title').innerText(), 'add a farewell');
    await chat.clearPosted();
    await chat.send({ type: 'showHistory' });
    assert.deepEqual(await chat.waitForPosted('historyQuery'), { type: 'historyQuery', query: '' });
    await chat.send({ type: 'history', query: '', entries: ENTRIES });
    const view = page.locator('.history');
    assert.equal(await view.isVisible(), true);
    assert.deepEqual(await view.locator('.history-title-text').allInnerTexts(), ['add a farewell', 'fix the greeting']);
    assert.match(await view.locator('.history-meta').first().innerText(), /^Today \d{1,2}:\d\d.* · demo · gpt-test$/);
    assert.equal(await view.locator('.history-entry.current').getAttribute('data-id'), 'chat-b-1');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('history-search')), true, 'the search box has the focus');

    await chat.clearPosted();
    await page.locator('.history-search').fill('greet');
    assert.deepEqual(await chat.waitForPosted('historyQuery'), { type: 'historyQuery', query: 'greet' });
    await chat.send({ type: 'history', query: '', entries: ENTRIES });
    assert.equal(await view.locator('.history-entry').count(), 2, 'a late answer to an older query is ignored');
    await chat.send({ type: 'history', query: 'greet', entries: [ENTRIES[1]!] });
    assert.deepEqual(await view.locator('.history-title-text').allInnerTexts(), ['fix the greeting']);
    await chat.send({ type: 'history', query: 'greet', entries: [] });
    assert.match(await view.locator('.history-empty').innerText(), /No chat mentions “greet”/);
    await chat.send({ type: 'history', query: 'greet', entries: [ENTRIES[1]!] });

    await chat.clearPosted();
    await view.locator('.history-open').first().click();
    assert.deepEqual(await chat.waitForPosted('historyOpen'), { type: 'historyOpen', id: 'chat-a-1' });
    assert.equal(await view.isVisible(), false, 'the history closes');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Message Speculate');
  });

  it('renames in place (Enter saves, Escape keeps the title) and deletes after a second click', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'showHistory' });
    await chat.send({ type: 'history', query: '', entries: ENTRIES });
    const row = page.locator('.history-entry[data-id="chat-a-1"]');
    await row.hover();
    await row.locator('.history-rename-button').click();
    const box = row.locator('input.history-rename');
    assert.equal(await box.inputValue(), 'fix the greeting');
    await box.fill('Greeting bug');
    await chat.clearPosted();
    await box.press('Enter');
    assert.deepEqual(await chat.waitForPosted('historyRename'), { type: 'historyRename', id: 'chat-a-1', title: 'Greeting bug' });
    await row.locator('.history-rename-button').click();
    await row.locator('input.history-rename').fill('never saved');
    await chat.clearPosted();
    await row.locator('input.history-rename').press('Escape');
    assert.equal((await chat.posted()).some((m) => m.type === 'historyRename'), false);
    assert.equal(await page.locator('.history').isVisible(), true, 'Escape in the title box leaves the history open');

    await row.hover();
    await row.locator('.history-delete').click();
    assert.equal((await chat.posted()).some((m) => m.type === 'historyDelete'), false, 'one click only asks');
    await row.locator('.history-confirm-delete').click();
    assert.deepEqual(await chat.waitForPosted('historyDelete'), { type: 'historyDelete', id: 'chat-a-1' });
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('.history').isVisible(), false);
  });

  it('the model pickers list the endpoint\'s models with the current one checked, and a pick changes it', async () => {
    await chat.init({ model: { label: 'qwen3-coder-plus', demo: false, fast: '' } });
    const { page } = chat;
    assert.deepEqual(await page.locator('.model-button .model-name').allInnerTexts(), ['qwen3-coder-plus', 'same as main']);
    await chat.clearPosted();
    await page.locator('.model-button.model-main').click();
    assert.deepEqual(await chat.waitForPosted('listModels'), { type: 'listModels', role: 'main' });
    assert.match(await page.locator('.model-menu').innerText(), /Loading/);
    await chat.send({ type: 'models', role: 'main', models: ['qwen3-coder-plus', 'qwen3-max', 'qwen-turbo'], current: 'qwen3-coder-plus' });
    assert.equal(await page.locator('.model-option.selected').innerText(), 'qwen3-coder-plus');
    await page.locator('.model-filter').fill('max');
    assert.deepEqual(await page.locator('.model-option').allInnerTexts(), ['qwen3-max', 'Use “max”']);
    await chat.clearPosted();
    await page.locator('.model-filter').press('Enter');
    assert.deepEqual(await chat.waitForPosted('selectModel'), { type: 'selectModel', role: 'main', model: 'qwen3-max' });
    assert.equal(await page.locator('.model-menu').isVisible(), false);

    await page.locator('.model-button.model-fast').click();
    await chat.send({ type: 'models', role: 'fast', models: ['qwen-turbo'], current: '' });
    assert.deepEqual(await page.locator('.model-option').allInnerTexts(), ['Same as the main model', 'qwen-turbo']);
    await chat.clearPosted();
    await page.locator('.model-option', { hasText: 'qwen-turbo' }).click();
    assert.deepEqual(await chat.waitForPosted('selectModel'), { type: 'selectModel', role: 'fast', model: 'qwen-turbo' });
    await chat.send({ type: 'config', model: { label: 'qwen3-max', demo: false, fast: 'qwen-turbo' }, settings: { enterAcceptsSuggestion: false } });
    assert.deepEqual(await page.locator('.model-button .model-name').allInnerTexts(), ['qwen3-max', 'qwen-turbo']);

    // A model the endpoint does not list (a deployment name) is still offered, checked.
    await page.locator('.model-button.model-main').click();
    await chat.send({ type: 'models', role: 'main', models: ['qwen-turbo'], current: 'my-deployment' });
    assert.deepEqual(await page.locator('.model-option').allInnerTexts(), ['my-deployment', 'qwen-turbo']);
    assert.equal(await page.locator('.model-option.selected').innerText(), 'my-deployment');
    await page.keyboard.press('Escape');

    // No endpoint: the list says why instead of staying empty; the toolbar's model opens it too.
    await page.locator('.input-toolbar .model').click();
    await chat.send({ type: 'models', role: 'main', models: [], current: '', error: 'No endpoint is configured.' });
    assert.match(await page.locator('.model-error').innerText(), /No endpoint is configured/);
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('.model-menu').isVisible(), false);
  });

  it('Edit & resend opens the message for editing; Enter sends it, Escape leaves it as it was', async () => {
    await chat.init({ transcript: [{ kind: 'user', id: 'u1', text: 'explain greet' }, { kind: 'assistant', id: 'a1', text: 'It greets.' }] });
    const { page } = chat;
    const message = page.locator('.turn.request[data-id="u1"]');
    await message.hover();
    await message.locator('.message-action.edit').click();
    const box = message.locator('textarea.message-edit-input');
    assert.equal(await box.inputValue(), 'explain greet');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('message-edit-input')), true);
    await box.press('Escape');
    assert.equal(await message.locator('.message-editor').count(), 0);
    assert.equal(await message.locator('.user-text').innerText(), 'explain greet');

    await message.hover();
    await message.locator('.message-action.edit').click();
    await box.fill('explain greet in one line');
    await chat.clearPosted();
    await box.press('Enter');
    assert.deepEqual(await chat.waitForPosted('editMessage'), { type: 'editMessage', id: 'u1', text: 'explain greet in one line' });
    // The host replaces the chat from there: everything after the item before it goes.
    await chat.send({ type: 'truncate' });
    await chat.send({ type: 'userMessage', id: 'u2', text: 'explain greet in one line' });
    await chat.send({ type: 'assistantStart', id: 'a2' });
    await chat.send({ type: 'assistantDelta', id: 'a2', text: 'It returns a greeting.' });
    await chat.send({ type: 'assistantEnd', id: 'a2' });
    assert.deepEqual(await page.locator('.user-text').allInnerTexts(), ['explain greet in one line']);
    assert.deepEqual(await page.locator('.assistant-text').allInnerTexts(), ['It returns a greeting.']);
  });

  it('Regenerate is offered on the last answer only and not while a turn runs; Copy copies a whole answer', async () => {
    await chat.init({
      transcript: [
        { kind: 'user', id: 'u1', text: 'first' },
        { kind: 'assistant', id: 'a1', text: 'One.' },
        { kind: 'user', id: 'u2', text: 'second' },
        { kind: 'assistant', id: 'a2', text: 'Let me look.' },
        { kind: 'toolGroup', id: 'g1', done: true, calls: [{ callId: 'c1', tool: 'read_file', summary: 'a.ts', status: 'ok', result: 'x' }] },
        { kind: 'assistant', id: 'a3', text: 'It is **fine**.' },
        { kind: 'usage', id: 'us1', text: '1.2k in (1k cached) · 40 out · $0.0042', detail: 'gpt-test: 1200 input tokens' },
      ],
    });
    const { page } = chat;
    const responses = page.locator('.turn.response');
    assert.equal(await responses.nth(0).locator('.message-action.regenerate').isVisible(), false);
    const last = responses.nth(1);
    assert.equal(await last.locator('.message-action.regenerate').isVisible(), true);
    assert.equal(await last.locator('.usage-line').innerText(), '1.2k in (1k cached) · 40 out · $0.0042', 'the usage sits under its answer');
    assert.equal(await last.locator('.usage-line').getAttribute('title'), 'gpt-test: 1200 input tokens');
    await chat.clearPosted();
    await last.locator('.message-action.copy').click();
    assert.deepEqual(await chat.waitForPosted('copyText'), { type: 'copyText', text: 'Let me look.\n\nIt is **fine**.' });
    await chat.clearPosted();
    await last.locator('.message-action.regenerate').click();
    assert.deepEqual(await chat.waitForPosted('regenerate'), { type: 'regenerate' });
    await chat.send({ type: 'truncate', afterId: 'u2' });
    assert.equal(await page.locator('.turn.response').count(), 1);
    await chat.send({ type: 'turnState', busy: true });
    await chat.send({ type: 'assistantStart', id: 'a4' });
    await chat.send({ type: 'assistantDelta', id: 'a4', text: 'Another look.' });
    await settle(page);
    const newest = page.locator('.turn.response').last();
    assert.equal(await newest.locator('.message-action.regenerate').isVisible(), false, 'not while the turn runs');
    assert.equal(await page.locator('.turn.request .message-action.edit').first().isVisible(), false);
    await chat.send({ type: 'assistantEnd', id: 'a4' });
    await chat.send({ type: 'turnState', busy: false });
    assert.equal(await newest.locator('.message-action.regenerate').isVisible(), true);
    await chat.clearPosted();
    await page.locator('.turn.request[data-id="u1"] .message-action.copy').click({ force: true });
    assert.deepEqual(await chat.waitForPosted('copyText'), { type: 'copyText', text: 'first' });
  });

  it('shows what the chat spent in the header, and clears it with a new chat', async () => {
    await chat.init({ usage: { text: 'This chat: 22k in (9k cached) · 800 out · background 12k in (59% of the tokens)', detail: 'This chat: …' } });
    const { page } = chat;
    assert.match(await page.locator('.chat-usage').innerText(), /^This chat: 22k in \(9k cached\) · 800 out · background/);
    await chat.send({ type: 'chatUsage', usage: { text: 'This chat: 23k in · 900 out', detail: '' } });
    assert.equal(await page.locator('.chat-usage').innerText(), 'This chat: 23k in · 900 out');
    await chat.send({ type: 'clear' });
    assert.equal(await page.locator('.chat-usage').isVisible(), false);
    assert.equal(await page.locator('.chat-title').innerText(), 'New chat');
  });

  it('a sent message comes into view wherever the user had scrolled, and "Jump to latest" appears while streaming below', async () => {
    await chat.init({ transcript: longTranscript(12) });
    const { page } = chat;
    const scroller = page.locator('.transcript');
    const atEnd = () => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight < 32);
    await scroller.evaluate((el) => (el.scrollTop = 0));
    await settle(page);
    assert.equal(await atEnd(), false);
    const input = page.locator(INPUT);
    await input.fill('one more question');
    await input.press('Enter');
    await chat.send({ type: 'userMessage', id: 'u-new', text: 'one more question' });
    await chat.send({ type: 'turnState', busy: true });
    await settle(page);
    assert.equal(await atEnd(), true, 'the sent message is in view');
    assert.equal(await page.locator('.jump-latest').isVisible(), false);

    // The user scrolls up to read while the answer streams: the view stays, the button offers the way back.
    await scroller.evaluate((el) => (el.scrollTop = 0));
    await chat.send({ type: 'assistantStart', id: 'a-new' });
    for (let i = 0; i < 5; i++) await chat.send({ type: 'assistantDelta', id: 'a-new', text: `More of the answer ${i}.\n\n` });
    await settle(page);
    assert.equal(await scroller.evaluate((el) => el.scrollTop), 0, 'the reader is not pulled down');
    const jump = page.locator('.jump-latest');
    assert.equal(await jump.isVisible(), true);
    await jump.click();
    await settle(page);
    assert.equal(await atEnd(), true);
    assert.equal(await jump.isVisible(), false);
    await chat.send({ type: 'assistantDelta', id: 'a-new', text: 'And the end.' });
    await chat.send({ type: 'assistantEnd', id: 'a-new' });
    await chat.send({ type: 'turnState', busy: false });
    await settle(page);
    assert.equal(await atEnd(), true, 'following again after the jump');
    await scroller.evaluate((el) => (el.scrollTop = 0));
    await settle(page);
    assert.equal(await jump.isVisible(), false, 'no jump button when nothing streams');
  });
});
