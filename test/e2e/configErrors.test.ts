// Every configuration error as a user meets it: no endpoint, no model, nothing listening at the URL,
// a key the server refuses. Each is a block in the chat with the buttons that fix it (Set Up
// Endpoint among them, opening the preset picker), and each is written to the Speculate log.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { eventually, namesOrEmpty, openChatView, openWorkbench, quickInput, refusedUrl, sendMessage, waitForQuickInput, waitIdle, screenshotFailures, type Workbench } from './workbench';

/** The Speculate output channel's log file, wherever the server keeps this session's logs. */
function speculateLog(dataDir: string): string {
  const found: string[] = [];
  const walk = (dir: string): void => {
    // A live tree: the sandbox probe's folder and the chat store's temps come and go while we walk.
    for (const name of namesOrEmpty(dir)) {
      const full = join(dir, name);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(full);
      else if (name === 'Speculate.log') found.push(full);
    }
  };
  if (existsSync(dataDir)) walk(dataDir);
  return found.map((file) => readFileSync(file, 'utf8')).join('\n');
}

/** Sends a message and returns the error block it ends with, once its buttons are there. */
async function errorAfter(chat: FrameLocator, text: string, message: RegExp, buttons: string[]) {
  await sendMessage(chat, text);
  const block = chat.locator('.error-block').last();
  await block.waitFor();
  await waitIdle(chat);
  assert.match(await block.innerText(), message);
  const labels = (await block.locator('button').allInnerTexts()).map((label) => label.trim()).filter((label) => label !== 'Retry');
  assert.deepEqual(labels, buttons);
  return block;
}

describe('configuration errors in the chat', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench | undefined;
  const logs: string[] = [];

  /** A workbench whose user settings are `settings` (one per case: the settings file is read at start). */
  async function open(settings: Record<string, unknown>): Promise<FrameLocator> {
    workbench = await openWorkbench({ settings: { 'speculate.suggestions.enabled': false, ...settings } });
    return openChatView(workbench);
  }

  before(async () => {
    model = new ScriptedServer({ script: () => ({ status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } }) });
    await model.start();
  });
  screenshotFailures(() => workbench);
  afterEach(async () => {
    if (workbench) {
      const dataDir = workbench.dataDir;
      // Said in the chat means written to the log: collected before the workbench goes.
      await new Promise((resolve) => setTimeout(resolve, 500));
      logs.push(speculateLog(dataDir));
      await workbench.close();
      workbench = undefined;
    }
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  it('no endpoint: Set Up Endpoint opens the preset picker', async () => {
    const chat = await open({});
    const block = await errorAfter(chat, 'hello', /No endpoint is configured/, ['Set Up Endpoint', 'Open User Settings']);
    await workbench!.screenshot('error-no-endpoint');
    await block.getByRole('button', { name: 'Set Up Endpoint' }).click();
    await waitForQuickInput(workbench!.page, /which provider/);
    await quickInput(workbench!.page).locator('.quick-input-list .monaco-list-row', { hasText: 'Ollama' }).first().waitFor();
  });

  it('no model: Select Model lists the endpoint\u2019s models', async () => {
    const chat = await open({ 'speculate.baseUrl': model.baseUrl });
    const block = await errorAfter(chat, 'hello', /No model is selected/, ['Select Model', 'Set Up Endpoint']);
    await block.getByRole('button', { name: 'Select Model' }).click();
    await waitForQuickInput(workbench!.page, /Select Model/);
  });

  it('connection refused: says where nothing answers, with Set Up Endpoint and Open User Settings', async () => {
    const dead = await refusedUrl();
    const chat = await open({ 'speculate.baseUrl': dead, 'speculate.model': 'gpt-x' });
    const block = await errorAfter(chat, 'hello', new RegExp(`Cannot reach the model endpoint at ${dead.replace(/[.]/g, '\\.')} \\(ECONNREFUSED\\)`), ['Set Up Endpoint', 'Open User Settings']);
    await workbench!.screenshot('error-connection-refused');
    await block.getByRole('button', { name: 'Open User Settings' }).click();
    await workbench!.page.locator('.settings-editor').waitFor();
  });

  it('401: Set API Key asks for the key of this endpoint', async () => {
    const chat = await open({ 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-model' });
    const block = await errorAfter(chat, 'hello', /rejected the API key \(HTTP 401: Incorrect API key provided\.\)/, ['Set API Key', 'Set Up Endpoint', 'Open User Settings']);
    await eventually(() => model.chatRequests.length > 0, 'the refused request');
    await block.getByRole('button', { name: 'Set API Key' }).click();
    await waitForQuickInput(workbench!.page, /which endpoint is the key for/);
  });

  it('every one of them was written to the Speculate log', () => {
    const all = logs.join('\n');
    for (const said of [/\[error\] No endpoint is configured/, /\[error\] No model is selected/, /\[error\] Cannot reach the model endpoint at http:\/\/127\.0\.0\.1:\d+\/v1 \(ECONNREFUSED\)/, /\[error\] .*rejected the API key \(HTTP 401/]) {
      assert.match(all, said);
    }
  });
});
