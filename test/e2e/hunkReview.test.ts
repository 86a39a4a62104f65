// Review hunk by hunk in the real workbench, from the keyboard: a speculation changes src/greet.ts
// in three places; one change is dropped in its diff (Alt+N), the file list says "2 of 3 changes
// kept", Tab writes only the other two and the chat says which was left out; then one change of that
// accept is undone alone from its Changes review.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { demoReply, isSuggestionPrompt } from '../fixtures/scripted/demoScript';
import { ScriptedServer, type ChatRequestBody, type ScriptedReply } from '../fixtures/scriptedServer';
import { CHAT_INPUT, openChatView, openWorkbench, quickInputBox, runPaletteCommand, sendMessage, waitFor, waitIdle, type Workbench } from './workbench';

const TIDIED = [
  '// Greetings for the demo.',
  'export function greet(name: string): string {',
  '  return `Hi, ${name}!`;',
  '}',
  '',
  'export function farewell(name: string): string {',
  '  return `Goodbye, ${name}!`;',
  '}',
  '',
].join('\n');

function textOf(message: Record<string, unknown>): string {
  return typeof message.content === 'string' ? message.content : '';
}

/** The demo model, plus one task: "tidy greet.ts" rewrites src/greet.ts with three separate changes. */
function hunkScript(body: ChatRequestBody): ScriptedReply {
  const messages = (body.messages ?? []) as Record<string, unknown>[];
  const userAt = messages.map((m) => m.role).lastIndexOf('user');
  const last = userAt >= 0 ? textOf(messages[userAt]) : '';
  if (isSuggestionPrompt(last)) {
    const previous = messages.slice(0, userAt).filter((m) => m.role === 'user').map(textOf).pop() ?? '';
    if (previous === 'start the hunk demo') return { text: 'tidy greet.ts', latencyMs: 50, tokensPerSecond: 200 };
  }
  if (last === 'start the hunk demo') return { text: 'Ready when you are.', latencyMs: 50, tokensPerSecond: 200 };
  if (last === 'tidy greet.ts') {
    const ran = messages.slice(userAt + 1).some((m) => m.role === 'tool');
    if (ran) return { text: 'Tidied src/greet.ts.', latencyMs: 50, tokensPerSecond: 200 };
    return { text: 'Tidying it.', toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/greet.ts', content: TIDIED } }], latencyMs: 50, tokensPerSecond: 200 };
  }
  return demoReply(body);
}

describe('review hunk by hunk in the workbench', function () {
  this.timeout(120_000);
  let model: ScriptedServer;
  let workbench: Workbench;
  let chat: FrameLocator;
  let greet: string;
  before(async function () {
    this.timeout(180_000);
    model = new ScriptedServer({ script: (request) => hunkScript(request.body ?? {}) });
    await model.start();
    workbench = await openWorkbench({
      settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'speculate.approvalMode': 'auto-edit', 'workbench.startupEditor': 'none' },
    });
    chat = await openChatView(workbench);
    greet = join(workbench.workspace, 'src/greet.ts');
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await workbench?.screenshot(`failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });

  it('drops one of three changes in the speculation diff: Tab writes only the others, and the chat says so', async () => {
    const original = readFileSync(greet, 'utf8');
    await sendMessage(chat, 'hello');
    await sendMessage(chat, 'start the hunk demo');
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'tidy greet.ts' }).waitFor();
    await chat.locator('.spec-status[data-state="ready"]').waitFor();
    const row = chat.locator('.spec-files .spec-file[data-path="src/greet.ts"]');
    await row.waitFor();
    await row.locator('.spec-file-diff').click();

    // The speculation diff: Keep / Drop above each of the three changes of the speculated side.
    const page = workbench.page;
    const modified = page.locator('.monaco-diff-editor .editor.modified');
    await modified.first().waitFor();
    const drops = modified.locator('.codelens-decoration a', { hasText: 'Drop' });
    await drops.nth(2).waitFor({ timeout: 30_000 });
    assert.equal(await drops.count(), 3);
    assert.equal(await modified.locator('.codelens-decoration a', { hasText: 'Keep' }).count(), 3);
    await workbench.screenshot('hunk-review');

    // From the keyboard: the cursor on the last change of the speculated side, Alt+N drops it.
    await modified.locator('.view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Alt+n');
    await row.filter({ hasText: '2 of 3 changes kept' }).waitFor();
    await workbench.screenshot('hunk-dropped');
    await page.locator('.notifications-toasts', { hasText: 'dropped lines' }).first().waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.monaco-diff-editor .editor.modified .codelens-decoration a').length === 4, undefined, { timeout: 15_000 });
    assert.equal(readFileSync(greet, 'utf8'), original, 'nothing is written before Tab');

    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.press('Tab');
    const line = chat.locator('.turn-end', { hasText: /left out 1 of 3 changes in src\/greet\.ts \(lines 5–8 \(\+4\)\)/ }).last();
    await line.waitFor();
    const written = readFileSync(greet, 'utf8');
    assert.match(written, /^\/\/ Greetings for the demo\.\n/);
    assert.match(written, /Hi, \$\{name\}/);
    assert.doesNotMatch(written, /farewell/, 'the dropped change is not written');
  });

  it('undoes one change of the accept alone from its Changes review', async () => {
    await waitIdle(chat);
    const line = chat.locator('.turn-end', { hasText: /left out 1 of 3 changes/ }).last();
    await line.locator('[data-action="changes"]').click();
    const page = workbench.page;
    await page.locator('.tabs-container .tab', { hasText: 'Changes: tidy greet.ts' }).waitFor();
    // Each change of the review has its own Undo lens (two kept changes, two lenses).
    const undoLenses = page.locator('.codelens-decoration a', { hasText: 'Undo this change' });
    await undoLenses.nth(1).waitFor();
    assert.equal(await undoLenses.count(), 2);
    await workbench.screenshot('hunk-undo-review');
    // From the keyboard: the palette's command lists the changes to pick from.
    await runPaletteCommand(page, 'Speculate: Undo One Change of This Turn');
    const box = quickInputBox(page);
    await box.waitFor();
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'src/greet.ts: line 1' }).waitFor();
    await box.fill('line 1');
    await box.press('Enter');
    await waitFor(() => !readFileSync(greet, 'utf8').includes('Greetings'), 'the first change to be undone');
    const now = readFileSync(greet, 'utf8');
    assert.match(now, /Hi, \$\{name\}/, 'the other change stays');
    assert.equal(now, 'export function greet(name: string): string {\n  return `Hi, ${name}!`;\n}\n');
    // The undo of one change is a step of its own in the chat, with its own Undo.
    await chat.locator('.turn-end', { hasText: 'Changed src/greet.ts' }).last().locator('[data-action="undo"]').waitFor();
  });
});
