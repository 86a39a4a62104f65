// First contact as a user without an endpoint: the walkthrough's Set Up Endpoint picks a preset,
// checks the endpoint (a dead address is said and can be changed), stores the key for that
// endpoint only, picks the models, and the next message goes there with the key.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { artifactsDir, CHAT_INPUT, eventually, openWorkbench, quickInput, quickInputBox, refusedUrl, runPaletteCommand, sendMessage, waitForQuickInput, waitIdle, screenshotFailures, type Workbench } from './workbench';

const KEY = 'sk-walkthrough-canary-77f2';

function userSettings(workbench: Workbench): Record<string, unknown> {
  return JSON.parse(readFileSync(workbench.userSettingsFile, 'utf8')) as Record<string, unknown>;
}

describe('the walkthrough sets up an endpoint', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench;

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}), models: ['scripted-demo', 'scripted-fast'] });
    await model.start();
    workbench = await openWorkbench();
  });
  screenshotFailures(() => workbench);
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  it('from the walkthrough: preset, URL, check, key, models; then the chat talks to that endpoint with that key', async () => {
    const { page } = workbench;
    await runPaletteCommand(page, 'Welcome: Open Walkthrough...');
    await quickInputBox(page).fill('Get started with Speculate');
    await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'Get started with Speculate' }).first().click();
    const walkthrough = page.locator('.gettingStartedContainer');
    await walkthrough.locator('.getting-started-step', { hasText: 'Connect your model' }).waitFor();
    await walkthrough.getByRole('button', { name: 'Set Up Endpoint' }).first().click();

    await waitForQuickInput(page, /which provider/);
    await workbench.screenshot('walkthrough-provider-presets');
    // The picker alone, for the README (media/readme/4-setup.png is taken from it).
    await quickInput(page).screenshot({ path: join(artifactsDir, 'walkthrough-provider-picker.png') });
    // The list is virtual (only rows in view exist): filter to each preset in turn.
    for (const label of ['OpenAI', 'Azure OpenAI', 'OpenRouter', 'DashScope', 'Ollama', 'LM Studio', 'vLLM', 'llama.cpp server', 'Another OpenAI-compatible endpoint']) {
      await quickInputBox(page).fill(label);
      await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor();
    }
    await quickInputBox(page).fill('vLLM');
    await quickInputBox(page).press('Enter');

    // First a URL where nothing answers: the check says so and offers to change it.
    await waitForQuickInput(page, /vLLM base URL/);
    assert.equal(await quickInputBox(page).inputValue(), 'http://localhost:8000/v1', 'the preset fills the URL');
    const dead = await refusedUrl();
    await quickInputBox(page).fill(dead);
    await quickInputBox(page).press('Enter');
    await waitForQuickInput(page, new RegExp(`API key for ${new URL(dead).origin.replace(/[.]/g, '\\.')}`));
    await quickInputBox(page).press('Enter');
    await waitForQuickInput(page, /did not answer as expected/);
    // What went wrong, in the picker's prompt line.
    assert.match((await quickInputBox(page).getAttribute('placeholder')) ?? '', new RegExp(`Cannot reach the model endpoint at ${dead.replace(/[.]/g, '\\.')} \\(ECONNREFUSED\\)`));
    await workbench.screenshot('walkthrough-endpoint-refused');
    await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'Change the URL or key' }).click();

    await waitForQuickInput(page, /vLLM base URL/);
    await quickInputBox(page).fill(model.baseUrl);
    await quickInputBox(page).press('Enter');
    const origin = new URL(model.baseUrl).origin;
    await waitForQuickInput(page, new RegExp(`API key for ${origin.replace(/[.]/g, '\\.')}`));
    assert.equal(await quickInputBox(page).getAttribute('type'), 'password');
    await quickInputBox(page).fill(KEY);
    await quickInputBox(page).press('Enter');

    // The check listed the models with the key, before anything was saved.
    await waitForQuickInput(page, /chat model/);
    const listing = model.requests.find((r) => r.method === 'GET' && r.path === '/v1/models');
    assert.equal(listing?.headers.authorization, `Bearer ${KEY}`);
    await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'scripted-fast' }).waitFor();
    await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'scripted-demo' }).click();
    await waitForQuickInput(page, /fast model/);
    await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'Same as the chat model' }).click();
    await page.locator('.notifications-toasts', { hasText: `using vLLM at ${model.baseUrl} with model scripted-demo` }).waitFor();

    const settings = userSettings(workbench);
    assert.equal(settings['speculate.baseUrl'], model.baseUrl);
    assert.equal(settings['speculate.model'], 'scripted-demo');
    assert.ok(!JSON.stringify(settings).includes(KEY), 'the key is not in the settings file');

    // The chat opened with its input focused, and the message goes to the endpoint with the key.
    const chat = workbench.chat();
    await chat.locator(CHAT_INPUT).waitFor();
    assert.ok(await chat.locator(CHAT_INPUT).evaluate((el) => el === document.activeElement), 'the chat input has the focus');
    const before = model.chatRequests.length;
    await sendMessage(chat, 'list the files');
    await eventually(() => model.chatRequests.length > before, 'the chat request');
    await waitIdle(chat);
    const sent = model.chatRequests[before];
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    assert.equal(sent.body?.model, 'scripted-demo');

    // The walkthrough's first step is checked off.
    await runPaletteCommand(page, 'Welcome: Open Walkthrough...');
    await quickInputBox(page).fill('Get started with Speculate');
    await quickInput(page).locator('.quick-input-list .monaco-list-row', { hasText: 'Get started with Speculate' }).first().click();
    await walkthrough.locator('.getting-started-step[data-step-id$="endpoint"][aria-checked="true"]').waitFor();
    await workbench.screenshot('walkthrough-endpoint-done');
  });
});
