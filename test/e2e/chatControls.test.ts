// The chat's controls in the real workbench, driven like a user: what an answer cost, `@` context from
// VS Code's file search, the model picker over the endpoint's list, Edit & resend, and the history
// behind the view's title-bar button (New Chat keeps the old chat).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import type { ScriptedServer } from '../fixtures/scriptedServer';
import { CHAT_INPUT, sendMessage, useChatWorkbench, waitFor, waitIdle, type Workbench } from './workbench';

/** The transcript on screen (not the speculated turns kept hidden until Tab). */
const SHOWN = '.transcript > .transcript-items';
const SENT = `${SHOWN} > .turn.request`;

describe('chat controls in the workbench', function () {
  this.timeout(120_000);
  const suite = useChatWorkbench('default');
  let workbench: Workbench;
  let model: ScriptedServer;
  let chat: FrameLocator;
  before(() => {
    ({ workbench, model, chat } = suite.get());
  });

  it('shows what each answer cost under it and the chat\'s total in the header', async () => {
    await sendMessage(chat, 'list the files');
    await chat.locator('.assistant-text', { hasText: 'Here is what the workspace holds' }).waitFor();
    await waitIdle(chat);
    const line = chat.locator(`${SHOWN} > .turn.response .usage-line`).last();
    await line.waitFor();
    assert.match(await line.innerText(), /^[\d.]+k? in( \([\d.]+k? cached\))? · \d+ out$/);
    assert.match(await chat.locator('.chat-usage').innerText(), /^This chat: [\d.]+k? in/);
    await workbench.screenshot('chat-usage-line');
  });

  it('@ lists the workspace\'s files from VS Code\'s file search; the picked file goes with the message', async () => {
    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.pressSequentially('explain @gree');
    const item = chat.locator('.mention-list .mention-file', { hasText: 'greet.ts' });
    await item.waitFor();
    assert.equal(await item.locator('.mention-detail').innerText(), 'src');
    assert.ok((await chat.locator('.mention-list .mention-label').allInnerTexts()).includes('@selection') === false, '"gree" does not start @selection');
    await workbench.screenshot('chat-at-context');
    await input.press('Enter');
    await chat.locator('.input-chips .chip', { hasText: 'greet.ts' }).waitFor();
    await input.pressSequentially('this file');
    const before = model.chatRequests.length;
    await input.press('Enter');
    await chat.locator(`${SENT} .chip`, { hasText: 'greet.ts' }).waitFor();
    await waitIdle(chat);
    const sent = model.chatRequests.slice(before).find((r) => JSON.stringify(r.body).includes('<attached_context>'));
    assert.ok(sent, 'the model got the attached context');
    assert.match(JSON.stringify(sent.body), /<file path=\\"src\/greet.ts\\">\\nexport function greet/);
    assert.equal(await chat.locator(`${SENT} .user-text`).last().innerText(), 'explain this file', 'the transcript shows the words, the chip the file');
  });

  it('the model picker lists the endpoint\'s models and switching the model changes the setting', async () => {
    await chat.locator('.model-button.model-main').click();
    await chat.locator('.model-option', { hasText: 'scripted-fast' }).waitFor();
    assert.deepEqual(await chat.locator('.model-option').allInnerTexts(), ['scripted-demo', 'scripted-fast', 'scripted-model'], 'the model in use, then GET /models of the endpoint, sorted');
    assert.equal(await chat.locator('.model-option.selected').innerText(), 'scripted-demo');
    await workbench.screenshot('chat-model-picker');
    await chat.locator('.model-option', { hasText: 'scripted-fast' }).click();
    await chat.locator('.model-button.model-main .model-name', { hasText: 'scripted-fast' }).waitFor();
    const before = model.chatRequests.length;
    await sendMessage(chat, 'list the files');
    // The main turn's request ends with the typed message (forks end with their own prompt); wait
    // for it rather than for the busy state, which may not have begun when idle is first checked.
    const isMainTurn = (r: (typeof model.chatRequests)[number]): boolean => {
      const messages = (r.body as { messages?: Array<{ role?: string; content?: unknown }> } | undefined)?.messages ?? [];
      const last = messages[messages.length - 1];
      return last?.role === 'user' && JSON.stringify(last.content ?? '').includes('list the files');
    };
    await waitFor(() => model.chatRequests.slice(before).some(isMainTurn), 'the main turn\'s request');
    await waitIdle(chat);
    const main = model.chatRequests.slice(before).find(isMainTurn);
    assert.equal(main?.body?.model, 'scripted-fast', 'the next turn uses the picked model');
    // Back to the suite's model for the tests after this one.
    await chat.locator('.model-button.model-main').click();
    await chat.locator('.model-filter').fill('scripted-demo');
    await chat.locator('.model-filter').press('Enter');
    await chat.locator('.model-button.model-main .model-name', { hasText: 'scripted-demo' }).waitFor();
  });

  it('Edit & resend replaces the chat from the edited message on', async () => {
    const message = chat.locator(SENT, { hasText: 'explain this file' });
    await message.hover();
    await message.locator('.message-action.edit').click();
    const box = message.locator('textarea.message-edit-input');
    await box.fill('explain README.md');
    await box.press('Enter');
    await chat.locator(`${SENT} .user-text`, { hasText: 'explain README.md' }).waitFor();
    await waitIdle(chat);
    const texts = await chat.locator(`${SENT} .user-text`).allInnerTexts();
    assert.deepEqual(texts, ['list the files', 'explain README.md'], 'the edited message and everything after it were replaced');
    assert.equal(await chat.locator(`${SENT} .chip`, { hasText: 'greet.ts' }).count(), 1, 'the edited message keeps its attachment');
  });

  it('Edit & resend of a message whose turn changed a file offers to restore the file first', async () => {
    const file = join(workbench.workspace, 'src/greet.ts');
    const original = readFileSync(file, 'utf8');
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    const allow = chat.locator('.approval button[data-decision="allow"]');
    await allow.waitFor();
    await allow.click();
    await waitIdle(chat);
    assert.match(readFileSync(file, 'utf8'), /export function farewell/);
    const message = chat.locator(SENT, { hasText: 'read src/greet.ts and add a farewell' });
    await message.hover();
    await message.locator('.message-action.edit').click();
    await message.locator('textarea.message-edit-input').fill('explain README.md once more');
    assert.match(await message.locator('.message-editor-hint').innerText(), /The file change made after it stays|file change made after it stay/);
    await workbench.screenshot('chat-edit-offers-restore');
    await message.locator('button.restore-and-send').click();
    await chat.locator(`${SENT} .user-text`, { hasText: 'explain README.md once more' }).waitFor();
    await waitIdle(chat);
    assert.equal(readFileSync(file, 'utf8'), original, 'the file is back as it was before the edited message');
    assert.equal(await chat.locator(SENT, { hasText: 'add a farewell' }).count(), 0);
  });

  it('New Chat keeps the old chat: the title bar\'s History lists it, and opening it brings it back', async () => {
    await workbench.page.locator('.part.sidebar a.action-label[aria-label*="New Chat"]:visible').first().click();
    await chat.locator('.welcome').waitFor();
    await sendMessage(chat, 'explain README.md');
    await waitIdle(chat);
    await workbench.page.locator('.part.sidebar a.action-label[aria-label*="Chat History"]:visible').first().click();
    const rows = chat.locator('.history .history-entry');
    await rows.nth(1).waitFor();
    assert.deepEqual((await chat.locator('.history-title-text').allInnerTexts()).slice(0, 2), ['explain README.md', 'list the files']);
    await workbench.screenshot('chat-history');
    await chat.locator('.history-search').fill('workspace holds');
    // The search is debounced: the other chat leaves the list once its answer is in.
    await chat.locator('.history-entry', { hasText: 'explain README.md' }).waitFor({ state: 'detached' });
    await chat.locator('.history-entry', { hasText: 'list the files' }).waitFor();
    await chat.locator('.history-entry .history-open', { hasText: 'list the files' }).click();
    await chat.locator(`${SENT} .user-text`, { hasText: 'list the files' }).waitFor();
    assert.equal(await chat.locator('.chat-title').innerText(), 'list the files');
    assert.equal(await chat.locator(`${SENT} .chip`, { hasText: 'greet.ts' }).count(), 1, 'the chat comes back as it was, chips and all');
  });
});
