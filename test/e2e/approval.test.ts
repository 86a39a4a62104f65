// The main chat in default mode, in the real workbench: an edit asks first, inline, and runs only
// once the user allows it; speculation stops before edits in this mode and says so.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { openChatView, openWorkbench, sendMessage, type Workbench } from './workbench';


describe('approvals in the workbench (default mode)', function () {
  this.timeout(120_000);
  let workbench: Workbench;
  let model: ScriptedServer;
  let chat: FrameLocator;

  before(async function () {
    this.timeout(180_000);
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    workbench = await openWorkbench({
      settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'speculate.approvalMode': 'default', 'workbench.startupEditor': 'none' },
    });
    chat = await openChatView(workbench);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && workbench) await workbench.screenshot(`failed-approval-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`);
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  it('asks before an edit, inline and keyboard-reachable, and edits the file once allowed', async () => {
    await sendMessage(chat, 'list the files');
    await chat.locator('.assistant-text', { hasText: 'Here is what the workspace holds' }).waitFor();
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    const allow = chat.locator('.approval-actions button[data-decision="allow"]');
    await allow.waitFor();
    const file = join(workbench.workspace, 'src/greet.ts');
    assert.doesNotMatch(readFileSync(file, 'utf8'), /farewell/, 'nothing is written while the approval waits');
    await workbench.screenshot('chat-approval');
    // Focus moves to the approval, so the keyboard alone answers it.
    await allow.press('Enter');
    await chat.locator('.assistant-text', { hasText: 'now exports' }).waitFor();
    assert.match(readFileSync(file, 'utf8'), /export function farewell/);
  });

  it('speculation stops before the first edit in default mode and says so', async () => {
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'add a test for farewell' }).waitFor();
    const status = chat.locator('.spec-status[data-state="boundary"]');
    await status.waitFor();
    assert.match(await status.innerText(), /write_file/);
  });
});
