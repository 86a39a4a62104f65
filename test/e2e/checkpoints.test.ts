// Checkpoints in the real workbench, driven like a user: a live edit and an accepted speculation
// each end with Undo and Changes; Undo puts the file on disk back and the open editor shows it;
// Changes opens the turn's multi-file diff; a file left out before Tab is not written; Undo Last
// Change from the palette; an edit waiting for approval shows its diff with the focus kept in the chat.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { CHAT_INPUT, runPaletteCommand, sendMessage, useChatWorkbench, waitIdle, waitFor, type Workbench } from './workbench';

/** Quick Open (F1, then a file name instead of a command) and Enter. */
async function openInEditor(page: Page, name: string): Promise<void> {
  const box = page.locator('.quick-input-widget .quick-input-box input');
  await page.keyboard.press('F1');
  await box.waitFor();
  await box.fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
  await box.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor();
}

/** The text of the active editor, as the workbench renders it. */
async function activeEditorText(page: Page): Promise<string> {
  return page.locator('.editor-group-container.active .monaco-editor .view-lines').first().innerText();
}

const lineOf = (chat: FrameLocator, text: string | RegExp) => chat.locator('.turn-end', { hasText: text }).last();

describe('checkpoints in the workbench (auto-edit)', function () {
  this.timeout(120_000);
  const suite = useChatWorkbench('auto-edit');
  let workbench: Workbench;
  let chat: FrameLocator;
  let greet: string;
  let original: string;
  before(() => {
    ({ workbench, chat } = suite.get());
    greet = join(workbench.workspace, 'src/greet.ts');
    original = readFileSync(greet, 'utf8');
  });

  it('a live edit ends with Undo and Changes; Undo puts the file back and the open editor shows it', async () => {
    await openInEditor(workbench.page, 'greet.ts');
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    await chat.locator('.assistant-text', { hasText: 'now exports' }).waitFor();
    assert.match(readFileSync(greet, 'utf8'), /export function farewell/);
    const line = lineOf(chat, 'Changed src/greet.ts');
    await line.waitFor();
    await workbench.page.waitForFunction(() => document.querySelector('.editor-group-container.active .view-lines')?.textContent?.includes('farewell'));

    await line.locator('[data-action="undo"]').click();
    await line.locator('[data-action="redo"]').waitFor();
    assert.equal(readFileSync(greet, 'utf8'), original, 'the file on disk is back byte for byte');
    await workbench.page.waitForFunction(() => !document.querySelector('.editor-group-container.active .view-lines')?.textContent?.includes('farewell'), undefined, { timeout: 15_000 });
    assert.doesNotMatch(await activeEditorText(workbench.page), /farewell/);
    await workbench.screenshot('checkpoint-undone');

    await line.locator('[data-action="redo"]').click();
    await line.locator('[data-action="undo"]').waitFor();
    assert.match(readFileSync(greet, 'utf8'), /export function farewell/, 'redo brings the edit back');
    await line.locator('[data-action="undo"]').click();
    await line.locator('[data-action="redo"]').waitFor();
    assert.equal(readFileSync(greet, 'utf8'), original);
  });

  it('lists the speculation files with +/− before Tab; a file left out is not written and the chat says so', async () => {
    // An undo drops the suggestion predicted before it; the task runs again for a new one.
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'add a test for farewell' }).waitFor();
    await chat.locator('.spec-status[data-state="ready"]').waitFor();
    const row = chat.locator('.spec-files .spec-file[data-path="test/greet.test.mjs"]');
    await row.waitFor();
    assert.match(await row.innerText(), /test\/greet\.test\.mjs\s*new\s*\+\d+ −0/);
    await workbench.screenshot('speculation-files');
    await row.locator('input[type="checkbox"]').uncheck();
    await chat.locator('.spec-files-left', { hasText: '1 left out' }).waitFor();
    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.press('Tab');
    await lineOf(chat, /Speculated 1 tool call .* left out test\/greet\.test\.mjs/).waitFor();
    assert.equal(existsSync(join(workbench.workspace, 'test/greet.test.mjs')), false);
  });

  it('Tab on a speculation ends with Undo and Changes: Changes opens its diff, Undo removes the file and its folder', async () => {
    // Dismiss whatever was predicted next, then undo the live edit so the same task can run again.
    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.pressSequentially('x');
    await input.fill('');
    await lineOf(chat, 'Changed src/greet.ts').locator('[data-action="undo"]').click();
    await waitFor(() => readFileSync(greet, 'utf8') === original, 'the live edit to be undone');
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'add a test for farewell' }).waitFor();
    await chat.locator('.spec-status[data-state="ready"]').waitFor();
    await input.click();
    await input.press('Tab');
    const line = lineOf(chat, /Speculated 1 tool call · [\d.]+ s saved/);
    await line.locator('[data-action="undo"]').waitFor();
    const created = join(workbench.workspace, 'test/greet.test.mjs');
    assert.ok(existsSync(created));

    await line.locator('[data-action="changes"]').click();
    await workbench.page.locator('.tabs-container .tab', { hasText: 'Changes: add a test for farewell' }).waitFor();
    await workbench.page.locator('.multiDiffEditor, .multi-diff-editor, .monaco-diff-editor').first().waitFor();
    await workbench.screenshot('checkpoint-changes');

    await line.locator('[data-action="undo"]').click();
    await line.locator('[data-action="redo"]').waitFor();
    assert.equal(existsSync(created), false, 'the created file is gone');
    assert.equal(existsSync(join(workbench.workspace, 'test')), false, 'and the folder it needed');
  });

  it('Speculate: Undo Last Change takes back the newest change', async () => {
    await waitIdle(chat);
    assert.match(readFileSync(greet, 'utf8'), /export function farewell/);
    await runPaletteCommand(workbench.page, 'Speculate: Undo Last Change');
    await waitFor(() => readFileSync(greet, 'utf8') === original, 'the newest change (the live edit) to be undone');
    await lineOf(chat, 'Changed src/greet.ts').locator('[data-action="redo"]').waitFor();
  });
});

describe('edit approvals show their diff (default mode)', function () {
  this.timeout(120_000);
  const suite = useChatWorkbench('default');
  let workbench: Workbench;
  let chat: FrameLocator;
  before(() => {
    ({ workbench, chat } = suite.get());
  });

  it('opens a diff of exactly what the edit would write, keeps the focus on Allow, and closes it once answered', async () => {
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    const allow = chat.locator('.approval-actions button[data-decision="allow"]');
    await allow.waitFor();
    const tab = workbench.page.locator('.tabs-container .tab', { hasText: 'proposed by edit' });
    await tab.waitFor();
    await workbench.page.locator('.monaco-diff-editor .modified .view-lines', { hasText: 'Goodbye' }).first().waitFor();
    assert.doesNotMatch(readFileSync(join(workbench.workspace, 'src/greet.ts'), 'utf8'), /farewell/, 'nothing is written while the approval waits');
    assert.equal(await allow.evaluate((el) => el === document.activeElement), true, 'the focus stays on Allow in the chat');
    await workbench.screenshot('approval-diff');
    await allow.press('Enter');
    await chat.locator('.assistant-text', { hasText: 'now exports' }).waitFor();
    await tab.waitFor({ state: 'detached' });
  });
});
