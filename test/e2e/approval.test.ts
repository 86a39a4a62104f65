// The main chat in default mode, in the real workbench: an edit asks first, inline, and runs only
// once the user allows it; speculation stops before edits in this mode and says so.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { sendMessage, useChatWorkbench, type Workbench } from './workbench';


describe('approvals in the workbench (default mode)', function () {
  this.timeout(120_000);
  const suite = useChatWorkbench('default');
  let workbench: Workbench;
  let chat: FrameLocator;
  before(() => {
    ({ workbench, chat } = suite.get());
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
    // In the user's words: the step, why it needs them, what Tab does.
    assert.equal(await status.locator('.status-text').innerText(), 'Stopped before writing test/greet.test.mjs: edits ask first in default mode. Tab asks you for it.');
  });
});
