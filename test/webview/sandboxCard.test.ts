// A shell command that ran ahead in the sandbox: its tool card says so and links each path it
// changed to its diff (the host opens it through the speculation: file system).
import * as assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium, openChat, startHarness, type ChatPage, type Harness } from './harness';

describe('chat webview: sandboxed tool cards', function () {
  this.timeout(20_000);
  let browser: Browser;
  let harness: Harness;
  let chat: ChatPage;

  before(async () => {
    [browser, harness] = await Promise.all([launchChromium(), startHarness()]);
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
  });
  beforeEach(async () => {
    chat = await openChat(browser, harness);
  });
  afterEach(async () => {
    const errors = chat.pageErrors.slice();
    await chat.page.close();
    assert.deepEqual(errors, [], 'no errors in the page');
  });

  it('says the command ran ahead in the sandbox and links each changed path to its diff', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'toolGroupStart', id: 'g1', speculated: true, calls: [{ callId: 'c1', tool: 'run_shell_command', summary: 'npm run format', status: 'running' }] });
    await chat.send({ type: 'toolCallUpdate', groupId: 'g1', call: { callId: 'c1', tool: 'run_shell_command', summary: 'npm run format', status: 'ok', result: 'Exit code: 0', sandbox: { writable: true, changed: ['src/a.ts', 'src/b.ts'] } } });
    const card = page.locator('.tool-call[data-call-id="c1"]');
    assert.match((await card.locator('.tool-sandbox').textContent()) ?? '', /^Ran ahead in the sandbox · changed src\/a\.ts, src\/b\.ts$/);
    await chat.clearPosted();
    await card.locator('.tool-sandbox-file[data-path="src/b.ts"]').focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.waitForPosted('previewChanges'), { type: 'previewChanges', path: 'src/b.ts' });
  });

  it('a sandboxed run that changed nothing, and a read-only one, say so', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({
      type: 'toolGroupStart',
      id: 'g2',
      calls: [
        { callId: 'c2', tool: 'run_shell_command', summary: 'npm test', status: 'ok', sandbox: { writable: true, changed: [] } },
        { callId: 'c3', tool: 'run_shell_command', summary: 'ls', status: 'ok', sandbox: { writable: false, changed: [] } },
      ],
    });
    assert.equal(await page.locator('.tool-call[data-call-id="c2"] .tool-sandbox').textContent(), 'Ran ahead in the sandbox · changed no file');
    assert.equal(await page.locator('.tool-call[data-call-id="c3"] .tool-sandbox').textContent(), 'Ran in the sandbox (workspace read-only, no network)');
  });

  it('a malformed sandbox field is refused by the protocol guard, not rendered', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'toolGroupStart', id: 'g3', calls: [{ callId: 'c4', tool: 'run_shell_command', summary: 'x', status: 'ok', sandbox: { writable: 'yes', changed: [1] } }] } as never);
    assert.equal(await page.locator('.tool-group[data-id="g3"]').count(), 0);
  });
});
