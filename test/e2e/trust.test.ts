// Keys and trust as a user meets them in the real workbench: "Set API Key" asks which endpoint the
// key is for (offering the current one) and the next message carries it there; "Clear API Key"
// removes it; a key for another endpoint stays with that endpoint until the user sets it up. A folder opened untrusted shows why the agent only reads, and its button leads to the
// workspace trust editor; trusting the folder there gives the user's settings back.
import * as assert from 'node:assert/strict';
import type { FrameLocator } from 'playwright-core';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { eventually, openChatView, openWorkbench, quickInput, quickInputBox, runPaletteCommand, sendMessage, waitForQuickInput, waitIdle, type Workbench } from './workbench';

const KEY = 'sk-canary-e2e-palette-4c1d';
const OTHER_KEY = 'sk-canary-e2e-other-endpoint-9b2e';

describe('API keys from the palette', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench;
  let chat: FrameLocator;
  let origin: string;

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    origin = new URL(model.baseUrl).origin;
    workbench = await openWorkbench({ settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'speculate.suggestions.enabled': false } });
    chat = await openChatView(workbench);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await workbench?.screenshot(`failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  it('Set API Key offers the current endpoint, and the key is sent there', async () => {
    const { page } = workbench;
    await runPaletteCommand(page, 'Speculate: Set API Key');
    await waitForQuickInput(page, /which endpoint is the key for/);
    const current = quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: origin }).first();
    await current.waitFor();
    assert.match(await current.innerText(), /speculate\.baseUrl/);
    assert.match(await quickInput(page).innerText(), /Another endpoint/);
    await quickInputBox(page).press('Enter');
    await waitForQuickInput(page, new RegExp(`API key for ${origin.replace(/[.]/g, '\\.')}`));
    assert.equal(await quickInputBox(page).getAttribute('type'), 'password');
    await quickInputBox(page).fill(KEY);
    await quickInputBox(page).press('Enter');
    await page.locator('.notifications-toasts', { hasText: `API key saved for ${origin}` }).waitFor();

    await sendMessage(chat, 'list the files');
    await eventually(() => model.chatRequests.length > 0, 'the request of the turn');
    await waitIdle(chat);
    assert.equal(model.chatRequests[model.chatRequests.length - 1].headers.authorization, `Bearer ${KEY}`);
  });

  it('Set API Key lists the endpoint that has a key, and Clear API Key removes it', async () => {
    const { page } = workbench;
    await runPaletteCommand(page, 'Speculate: Set API Key');
    await waitForQuickInput(page, /which endpoint is the key for/);
    assert.match(await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: origin }).first().innerText(), /has a key/);
    await page.keyboard.press('Escape');

    await runPaletteCommand(page, 'Speculate: Clear API Key');
    await waitForQuickInput(page, /Clear API Key/);
    // A row of a many-pick toggles on click; OK accepts what is checked.
    await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: origin }).first().click();
    await quickInput(page).locator('.quick-input-count', { hasText: '1 Selected' }).waitFor();
    await quickInput(page).getByRole('button', { name: 'OK' }).click();
    await page.locator('.notifications-toasts', { hasText: `removed the API key for ${origin}` }).waitFor();

    const before = model.chatRequests.length;
    await sendMessage(chat, 'list the files');
    await eventually(() => model.chatRequests.length > before, 'the request of the turn');
    await waitIdle(chat);
    assert.equal(model.chatRequests[model.chatRequests.length - 1].headers.authorization, undefined, 'no key is sent once it is cleared');
  });

  it('a key set for another endpoint is not sent to the current one; setting that endpoint up keeps the key, and the chat sends it there', async () => {
    const { page } = workbench;
    const other = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}), models: ['scripted-demo', 'scripted-fast'] });
    await other.start();
    try {
      const otherOrigin = new URL(other.baseUrl).origin;
      assert.notEqual(otherOrigin, origin);
      await runPaletteCommand(page, 'Speculate: Set API Key');
      await waitForQuickInput(page, /which endpoint is the key for/);
      await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'Another endpoint' }).first().click();
      await waitForQuickInput(page, /endpoint URL/);
      await quickInputBox(page).fill('not a url');
      await quickInput(page).locator('.quick-input-message', { hasText: 'Enter an http(s) URL' }).waitFor();
      await quickInputBox(page).fill(other.baseUrl);
      await quickInputBox(page).press('Enter');
      await waitForQuickInput(page, new RegExp(`API key for ${otherOrigin.replace(/[.]/g, '\\.')}`));
      await quickInputBox(page).fill(OTHER_KEY);
      await quickInputBox(page).press('Enter');
      await page.locator('.notifications-toasts', { hasText: `API key saved for ${otherOrigin}` }).waitFor();
      assert.match(await page.locator('.notifications-toasts').innerText(), /not used until you switch/);

      const before = model.chatRequests.length;
      await sendMessage(chat, 'list the files');
      await eventually(() => model.chatRequests.length > before, 'the request of the turn');
      await waitIdle(chat);
      assert.equal(model.chatRequests[model.chatRequests.length - 1].headers.authorization, undefined, 'the current endpoint does not get the other endpoint\'s key');

      // The user then sets up that endpoint: the key stored for it is offered to keep, and used.
      await runPaletteCommand(page, 'Speculate: Set Up Endpoint');
      await waitForQuickInput(page, /which provider/);
      await quickInputBox(page).fill('Another OpenAI-compatible endpoint');
      await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'Another OpenAI-compatible endpoint' }).first().waitFor();
      await quickInputBox(page).press('Enter');
      await waitForQuickInput(page, /base URL/);
      await quickInputBox(page).fill(other.baseUrl);
      await quickInputBox(page).press('Enter');
      await waitForQuickInput(page, new RegExp(`API key for ${otherOrigin.replace(/[.]/g, '\\.')}`));
      assert.match(await quickInput(page).innerText(), /Leave it empty to keep the key stored for it/);
      await quickInputBox(page).press('Enter');
      await waitForQuickInput(page, /chat model/);
      await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'scripted-demo' }).click();
      await waitForQuickInput(page, /fast model/);
      await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'Same as the chat model' }).click();
      await page.locator('.notifications-toasts', { hasText: `at ${other.baseUrl} with model scripted-demo` }).waitFor();
      const listing = other.requests.find((r) => r.method === 'GET' && r.path === '/v1/models');
      assert.equal(listing?.headers.authorization, `Bearer ${OTHER_KEY}`, 'the check used the stored key');
      const sentBefore = model.chatRequests.length;
      await sendMessage(chat, 'list the files');
      await eventually(() => other.chatRequests.length > 0, 'the request at the other endpoint');
      await waitIdle(chat);
      assert.equal(other.chatRequests[other.chatRequests.length - 1].headers.authorization, `Bearer ${OTHER_KEY}`);
      assert.equal(model.chatRequests.length, sentBefore, 'nothing more went to the first endpoint');
    } finally {
      await other.close();
    }
  });
});

describe('an untrusted folder in the workbench', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench;

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    workbench = await openWorkbench({
      workspaceTrust: true,
      settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'speculate.approvalMode': 'auto-edit' },
    });
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await workbench?.screenshot(`failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  it('says why the agent only reads, and its button opens the trust editor; trusting gives the settings back', async () => {
    const chat = await openChatView(workbench);
    const notice = chat.locator('.notice-block.warning', { hasText: 'Restricted Mode' });
    await notice.waitFor();
    assert.match(await notice.innerText(), /plan mode/);
    await workbench.screenshot('chat-restricted-mode');
    await notice.getByRole('button', { name: 'Manage Workspace Trust' }).click();
    const { page } = workbench;
    const trustEditor = page.locator('.workspace-trust-editor');
    await trustEditor.waitFor();
    await trustEditor.getByRole('button', { name: /^Trust/ }).first().click();
    await chat.locator('.notice', { hasText: 'This folder is trusted now: approval mode auto-edit, speculation on.' }).waitFor();
  });
});
