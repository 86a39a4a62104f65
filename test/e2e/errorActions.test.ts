// The fix on a button, in the real workbench: an endpoint that rejects the key shows its own words
// with Set API Key and Open User Settings under them (Retry last); an unknown model offers Select
// Model. Each button runs the command that exists for it.
import * as assert from 'node:assert/strict';
import type { FrameLocator, Page } from 'playwright-core';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { openChatView, openWorkbench, sendMessage, waitIdle, type Workbench } from './workbench';

const quickInput = (page: Page) => page.locator('.quick-input-widget');

describe('error blocks with the buttons that fix them', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench;
  let chat: FrameLocator;

  before(async () => {
    model = new ScriptedServer({ script: () => ({ status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } }) });
    await model.start();
    workbench = await openWorkbench({ settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'speculate.suggestions.enabled': false } });
    chat = await openChatView(workbench);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await workbench?.screenshot(`failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
    await workbench?.page.keyboard.press('Escape');
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  it('a rejected key: the server\'s words, Set API Key opens the key prompt, Open User Settings the settings', async () => {
    const { page } = workbench;
    await sendMessage(chat, 'list the files');
    const block = chat.locator('.error-block').last();
    await block.waitFor();
    await waitIdle(chat);
    assert.match(await block.innerText(), /rejected the API key \(HTTP 401: Incorrect API key provided\.\)/);
    assert.deepEqual(await block.locator('button').allInnerTexts(), ['Set API Key', 'Set Up Endpoint', 'Open User Settings', 'Retry']);

    await block.locator('button', { hasText: 'Set API Key' }).click();
    await quickInput(page).locator('.quick-input-title', { hasText: /which endpoint is the key for/ }).waitFor();
    await page.keyboard.press('Escape');

    await block.locator('button', { hasText: 'Open User Settings' }).click();
    // The user tab of the Settings editor, filtered to this extension.
    await page.locator('.settings-editor').waitFor();
    await page.locator('.settings-editor .search-container .view-lines', { hasText: '@ext:speculate.speculate' }).waitFor();
    await page.locator('.settings-editor .setting-item-contents', { hasText: 'Base Url' }).first().waitFor();
  });
});

describe('an unknown model in the workbench', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench;
  let chat: FrameLocator;

  before(async () => {
    model = new ScriptedServer({
      models: ['scripted-demo'],
      script: () => ({ status: 404, body: { error: { message: 'The model `no-such-model` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' } } }),
    });
    await model.start();
    workbench = await openWorkbench({ settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'no-such-model', 'speculate.suggestions.enabled': false } });
    chat = await openChatView(workbench);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await workbench?.screenshot(`failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  it('says which model is unknown, and Select Model opens the picker with what the endpoint offers', async () => {
    const { page } = workbench;
    await sendMessage(chat, 'list the files');
    const block = chat.locator('.error-block').last();
    await block.waitFor();
    await waitIdle(chat);
    assert.match(await block.innerText(), /The model `no-such-model` does not exist/);
    assert.ok((await block.locator('button').allInnerTexts()).includes('Select Model'));
    await block.locator('button', { hasText: 'Select Model' }).click();
    await quickInput(page).locator('.quick-input-title', { hasText: 'Speculate: Select Model' }).waitFor();
    await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'scripted-demo' }).first().waitFor();
    await page.keyboard.press('Escape');
  });
});
