// "Run the tests" after an edit, run ahead in the sandbox in the real workbench: ghost text → Ready
// → Tab shows the test output at once (the tool card says it ran ahead in the sandbox and what it
// changed) and applies the file the test run wrote. Nothing of it reached the workspace before Tab.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { CHAT_INPUT, openChatView, openWorkbench, sendMessage, type Workbench } from './workbench';

/** The demo project, with a test run that also writes its TAP report next to the tests (as many runners write reports). */
function withReportingTests(workspace: string): void {
  const manifest = JSON.parse(readFileSync(join(workspace, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  manifest.scripts.test = 'node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=tap --test-reporter-destination=test-results.tap';
  writeFileSync(join(workspace, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

describe('running the tests ahead in the sandbox, in the workbench', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench;
  let chat: FrameLocator;

  before(async function () {
    this.timeout(180_000);
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    workbench = await openWorkbench({
      settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'speculate.approvalMode': 'auto-edit', 'workbench.startupEditor': 'none' },
      prepareWorkspace: withReportingTests,
    });
    chat = await openChatView(workbench);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await workbench?.screenshot(`failed-sandbox-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`);
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  const tab = async () => {
    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.press('Tab');
  };

  it('after the edit and its test, "run the tests" runs ahead and gets ready without touching the workspace', async () => {
    // Suggestions start after the second answered turn.
    await sendMessage(chat, 'list the files');
    await chat.locator('.assistant-text', { hasText: 'Here is what the workspace holds' }).waitFor();
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    await chat.locator('.assistant-text', { hasText: 'now exports' }).waitFor();
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'add a test for farewell' }).waitFor();
    await chat.locator('.spec-status[data-state="ready"]').waitFor();
    await tab();
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'run the tests' }).waitFor();
    const ready = chat.locator('.spec-status[data-state="ready"]');
    await ready.waitFor({ timeout: 60_000 });
    await workbench.screenshot('sandbox-run-the-tests-ready');
    assert.equal(existsSync(join(workbench.workspace, 'test-results.tap')), false, 'the report exists only in the overlay before Tab');
  });

  it('Tab shows the test output, says it ran in the sandbox and what it changed, and applies the report', async () => {
    await tab();
    await chat.locator('.user-text', { hasText: 'run the tests' }).waitFor();
    const card = chat.locator('.tool-call', { hasText: 'run_shell_command' }).last();
    await card.waitFor();
    const note = card.locator('.tool-sandbox');
    await note.waitFor();
    assert.match((await note.textContent()) ?? '', /^Ran ahead in the sandbox · changed test-results\.tap$/);
    assert.match((await card.textContent()) ?? '', /Exit code: 0[\s\S]*pass 1/);
    await chat.locator('.assistant-text', { hasText: 'The tests ran' }).waitFor();
    // The answer is on screen first; the files change right after (the Tab-reveal order).
    const report = join(workbench.workspace, 'test-results.tap');
    for (let i = 0; i < 200 && !existsSync(report); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    await workbench.screenshot('sandbox-run-the-tests-accepted');
    assert.match(readFileSync(report, 'utf8'), /^TAP version 13/m);
    assert.match(readFileSync(join(workbench.workspace, 'test-results.tap'), 'utf8'), /ok 1 - src\/greet\.ts exports greet and farewell/);
  });
});
