// The product's flow in the real workbench, driven like a user: chat with the scripted model, see
// the suggestion as ghost text, watch it run ahead, preview it, press Tab, dismiss by typing, abort
// from the palette, and keep a file the user changed meanwhile.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { demoReply } from '../fixtures/scripted/demoScript';
import type { ScriptedServer } from '../fixtures/scriptedServer';
import { CHAT_INPUT, overlayDirs, runPaletteCommand, sendMessage, useChatWorkbench, waitFor, type Workbench } from './workbench';


describe('speculation flow in the workbench', function () {
  this.timeout(120_000);
  const suite = useChatWorkbench('auto-edit');
  let workbench: Workbench;
  let model: ScriptedServer;
  let chat: FrameLocator;
  before(() => {
    ({ workbench, model, chat } = suite.get());
  });

  it('answers a message with streamed text and a tool group', async () => {
    await sendMessage(chat, 'list the files');
    await chat.locator('.assistant-text', { hasText: 'Here is what the workspace holds' }).waitFor();
    assert.equal(await chat.locator('.tool-group .tool-name', { hasText: 'list_directory' }).count(), 1);
  });

  it('edits a file in the workspace through the edit tool', async () => {
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    await chat.locator('.assistant-text', { hasText: 'now exports' }).waitFor();
    assert.match(readFileSync(join(workbench.workspace, 'src/greet.ts'), 'utf8'), /export function farewell/);
  });

  it('shows the predicted next prompt as ghost text and runs it ahead until ready', async () => {
    const ghost = chat.locator('.ghost:not([hidden]) .ghost-text');
    await ghost.waitFor();
    assert.equal(await ghost.innerText(), 'add a test for farewell');
    await workbench.screenshot('chat-ghost-text');
    await chat.locator('.spec-status[data-state="ready"]').waitFor();
    // Nothing is written to the workspace before Tab: the new test file lives only in the overlay.
    assert.equal(existsSync(join(workbench.workspace, 'test/greet.test.mjs')), false);
    assert.equal(overlayDirs(workbench).length, 1);
    await workbench.screenshot('chat-speculation-ready');
  });

  it('previews the speculated change as a diff whose right side is the speculation: document', async () => {
    await chat.locator('.spec-status button', { hasText: /preview/i }).first().click();
    const tab = workbench.page.locator('.tabs-container .tab', { hasText: 'Speculation:' });
    await tab.first().waitFor();
    await workbench.page.locator('.monaco-diff-editor').first().waitFor();
    const modified = await workbench.page.evaluate(() =>
      Array.from(document.querySelectorAll('.tabs-container .tab')).map((el) => el.getAttribute('aria-label') ?? ''),
    );
    assert.ok(modified.some((label) => label.includes('Speculation: add a test for farewell')), modified.join(' | '));
    await workbench.screenshot('diff-preview');
  });

  it('Tab shows the finished result at once, applies it, and the next suggestion is already there', async () => {
    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.press('Tab');
    await chat.locator('.user-text', { hasText: 'add a test for farewell' }).waitFor();
    await chat.locator('.tool-group .tool-name', { hasText: 'write_file' }).waitFor();
    await chat.locator('.notice', { hasText: /Speculated 1 tool call · [\d.]+ s saved/ }).waitFor();
    assert.match(readFileSync(join(workbench.workspace, 'test/greet.test.mjs'), 'utf8'), /farewell/);
    const ghost = chat.locator('.ghost:not([hidden]) .ghost-text');
    await ghost.waitFor();
    assert.equal(await ghost.innerText(), 'run the tests');
    // Focus never left the input.
    assert.equal(await input.evaluate((el) => el === document.activeElement), true);
  });

  it('runs a shell command that is not read-only ahead in the sandbox ("run the tests") until ready', async () => {
    await chat.locator('.spec-status[data-state="ready"]').waitFor({ timeout: 60_000 });
    assert.equal(overlayDirs(workbench).length, 1);
    await workbench.screenshot('chat-speculation-sandbox-ready');
  });

  it('typing dismisses the suggestion and deletes its overlay', async () => {
    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.pressSequentially('x');
    await chat.locator('.ghost').waitFor({ state: 'hidden' });
    await waitFor(() => overlayDirs(workbench).length === 0, 'the overlay to be deleted');
    await input.fill('');
  });

  it('palette "Abort Speculation" cancels a running speculation and removes the ghost text', async () => {
    // A slow model keeps the next speculation running long enough to abort it.
    model.setScript((request) => {
      const body = request.body ?? {};
      const reply = demoReply(body);
      const last = body.messages?.[body.messages.length - 1];
      const isSpeculation = typeof last?.content === 'string' && last.content === 'add a farewell function';
      return isSpeculation ? { ...reply, latencyMs: 30_000 } : reply;
    });
    await sendMessage(chat, 'read src/greet.ts');
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'add a farewell function' }).waitFor();
    await chat.locator('.spec-status[data-state="running"]').waitFor();
    const speculationRequest = () =>
      model.chatRequests.find((r) => JSON.stringify(r.body).includes('"content":"add a farewell function"') && !r.closedEarly);
    await waitFor(() => speculationRequest() !== undefined, 'the speculation request to reach the model');
    const request = speculationRequest()!;
    await runPaletteCommand(workbench.page, 'Speculate: Abort Speculation');
    await chat.locator('.ghost').waitFor({ state: 'hidden' });
    await waitFor(() => overlayDirs(workbench).length === 0, 'the overlay to be deleted');
    await waitFor(() => request.closedEarly, 'the model request to be closed');
  });

  it('on accept, a file the user changed meanwhile is not overwritten: "Keep mine" keeps the edit', async () => {
    model.setScript((request) => demoReply(request.body ?? {}));
    await sendMessage(chat, 'read src/greet.ts');
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'add a farewell function' }).waitFor();
    await chat.locator('.spec-status[data-state="ready"]').waitFor();
    const [acceptedOverlay] = overlayDirs(workbench);
    const file = join(workbench.workspace, 'src/greet.ts');
    const mine = readFileSync(file, 'utf8') + '\n// my own edit\n';
    writeFileSync(file, mine);
    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.press('Tab');
    const keep = chat.locator('.conflict-actions button', { hasText: 'Keep mine' });
    await keep.first().waitFor();
    await workbench.screenshot('chat-conflict');
    await keep.first().click();
    await chat.locator('.notice', { hasText: 'kept your version of src/greet.ts' }).waitFor();
    assert.equal(readFileSync(file, 'utf8'), mine);
    // The accepted run's overlay is gone (the pipelined suggestion may already run in a new one).
    await waitFor(() => !overlayDirs(workbench).includes(acceptedOverlay), 'the accepted overlay to be deleted');
  });
});
