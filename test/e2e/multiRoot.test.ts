// A window with two folders: the chat header names the folder the chat works on and lets the user
// pick the other; a suggestion run ahead in the second folder is previewed through speculation:
// URIs that name that folder and applied there alone by Tab; from the first folder, `read
// ../beta/src/greet.ts` reads the second folder's file.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { CHAT_INPUT, openChatView, openWorkbench, quickInput, sendMessage, waitForQuickInput, waitIdle, screenshotFailures, type Workbench } from './workbench';

describe('a multi-root window', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench;
  let chat: FrameLocator;
  let alpha: string;
  let beta: string;
  const greet = (folder: string) => readFileSync(join(folder, 'src/greet.ts'), 'utf8');

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    workbench = await openWorkbench({
      multiRoot: ['alpha', 'beta'],
      settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'speculate.approvalMode': 'auto-edit' },
    });
    [alpha, beta] = workbench.folders as [string, string];
    chat = await openChatView(workbench);
  });
  screenshotFailures(() => workbench);
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  /** Picks `name` with the header's folder button. */
  async function pickFolder(name: string): Promise<void> {
    await chat.locator('.folder-picker').click();
    await waitForQuickInput(workbench.page, /which folder should the chat work on/);
    await quickInput(workbench.page).locator('.quick-input-list .monaco-list-row', { hasText: name }).first().click();
    await chat.locator('.folder-picker .folder-name', { hasText: new RegExp(`^${name}$`) }).waitFor();
  }

  it('names the folder the chat works on in its header, and the user can pick the other', async () => {
    // The folder leads the chat header, above the title and the model pickers.
    await chat.locator('.chat-header .chat-folder .folder-picker').waitFor();
    assert.equal(await chat.locator('.folder-picker .folder-name').innerText(), 'alpha');
    assert.match((await chat.locator('.folder-picker').getAttribute('title')) ?? '', /alpha/);
    await pickFolder('beta');
    await workbench.screenshot('multi-root-header-beta');
  });

  it('in the second folder: the run ahead is previewed as that folder\u2019s speculation: files, and Tab applies it there alone', async () => {
    await sendMessage(chat, 'read src/greet.ts');
    await waitIdle(chat);
    await chat.locator('.ghost-text', { hasText: 'farewell' }).waitFor();
    const ready = chat.locator('.spec-status[data-state="ready"]');
    await ready.waitFor({ timeout: 60_000 });
    await ready.locator('.preview').click();
    const { page } = workbench;
    const tab = page.locator('.tabs-container .tab', { hasText: 'Speculation:' }).first();
    await tab.waitFor();
    // The diff's right side is speculation://<run>/beta/src/greet.ts: its breadcrumbs name the folder.
    const crumbs = page.locator('.breadcrumbs-control .monaco-breadcrumb-item');
    await crumbs.first().waitFor();
    assert.deepEqual((await crumbs.allInnerTexts()).map((t) => t.trim()).slice(0, 3), ['beta', 'src', 'greet.ts']);
    await workbench.screenshot('multi-root-preview-beta');
    assert.doesNotMatch(greet(beta), /farewell/, 'nothing applied before Tab');

    await chat.locator(CHAT_INPUT).focus();
    await page.keyboard.press('Tab');
    await chat.locator('.user-text', { hasText: 'farewell' }).waitFor();
    const deadline = Date.now() + 20_000;
    while (!/farewell/.test(greet(beta)) && Date.now() < deadline) await page.waitForTimeout(100);
    assert.match(greet(beta), /export function farewell/, 'applied in beta');
    assert.doesNotMatch(greet(alpha), /farewell/, 'alpha untouched');
    await waitIdle(chat);
  });

  it('from the first folder, read ../beta/src/greet.ts reads the second folder\u2019s file', async () => {
    await pickFolder('alpha');
    assert.equal(await chat.locator('.user-text').count(), 0, 'picking another folder for a begun chat starts a new one');
    await sendMessage(chat, 'read ../beta/src/greet.ts');
    const group = chat.locator('.tool-group', { hasText: '../beta/src/greet.ts' }).first();
    await group.waitFor();
    await waitIdle(chat);
    assert.equal(await group.locator('.status-error').count(), 0, 'the read worked');
    await chat.locator('.assistant-text', { hasText: 'farewell' }).first().waitFor();
    await workbench.screenshot('multi-root-read-other-folder');
  });
});
