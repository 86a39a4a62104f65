// A chat survives Developer: Reload Window in the real workbench: the transcript comes back as it
// was, a speculation that was running is gone with its overlay, and a damaged store is kept aside
// with a notice on the next reload instead of breaking the chat.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { demoReply } from '../fixtures/scripted/demoScript';
import { overlayDirs, runPaletteCommand, sendMessage, useChatWorkbench, waitIdle, waitFor, type Workbench } from './workbench';


/** Until `file` has not changed for STILL_MS (past every debounced save of the chat). */
async function waitForStillStore(file: string): Promise<void> {
  const STILL_MS = 1500;
  const deadline = Date.now() + 30_000;
  const look = () => {
    const { mtimeMs, size } = statSync(file);
    return `${mtimeMs}:${size}`;
  };
  let seen = look();
  let stillSince = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = look();
    if (now !== seen) {
      seen = now;
      stillSince = Date.now();
    } else if (Date.now() - stillSince >= STILL_MS) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the chat store ${file} to be still`);
  }
}

/** Every file under `dir` whose path ends with `suffix`. */
function findFiles(dir: string, suffix: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    // The tree is live (a sandbox run's folder comes and goes while we walk): a folder gone is empty.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries.flatMap((entry) => {
    const full = join(dir, entry.name);
    return entry.isDirectory() ? findFiles(full, suffix) : full.endsWith(suffix) ? [full] : [];
  });
}

/** Developer: Reload Window, then the chat view again (it is reopened where it was). */
async function reloadWindow(workbench: Workbench): Promise<FrameLocator> {
  const loaded = workbench.page.waitForEvent('load', { timeout: 60_000 });
  await runPaletteCommand(workbench.page, 'Developer: Reload Window');
  await loaded;
  await workbench.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  const chat = workbench.chat();
  try {
    await chat.locator('#app').waitFor({ timeout: 15_000 });
  } catch {
    await workbench.page.locator('.activitybar [aria-label^="Speculate"]').first().click();
    await chat.locator('#app').waitFor({ timeout: 30_000 });
  }
  return chat;
}

describe('chat history across a window reload', function () {
  this.timeout(180_000);
  const suite = useChatWorkbench('auto-edit');

  it('restores the chat exactly after Developer: Reload Window, and a running speculation is gone with its overlay', async () => {
    const { workbench, model } = suite.get();
    let { chat } = suite.get();
    // The speculation of the suggestion takes its time, so it is still running at the reload.
    model.setScript((request) => {
      const body = request.body ?? {};
      const reply = demoReply(body);
      const last = body.messages?.[body.messages.length - 1];
      return typeof last?.content === 'string' && last.content === 'add a farewell function' ? { ...reply, latencyMs: 60_000 } : reply;
    });
    await sendMessage(chat, 'list the files');
    await chat.locator('.assistant-text', { hasText: 'Here is what the workspace holds' }).waitFor();
    await sendMessage(chat, 'read src/greet.ts');
    await chat.locator('.transcript > .transcript-items .assistant-text', { hasText: 'greet' }).last().waitFor();
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'add a farewell function' }).waitFor();
    await chat.locator('.spec-status[data-state="running"]').waitFor();
    await waitFor(() => overlayDirs(workbench).length > 0, 'the speculation overlay', 30_000);
    const running = overlayDirs(workbench);
    await waitIdle(chat);
    const before = await chat.locator('.transcript > .transcript-items').innerText();

    chat = await reloadWindow(workbench);
    await chat.locator('.transcript > .transcript-items .user-text', { hasText: 'read src/greet.ts' }).waitFor({ timeout: 30_000 });
    assert.equal(await chat.locator('.transcript > .transcript-items').innerText(), before, 'the transcript is exactly as it was');
    assert.equal(await chat.locator('.ghost:not([hidden])').count(), 0, 'no suggestion survives a reload');
    await waitFor(() => running.every((dir) => !overlayDirs(workbench).includes(dir)), `the running speculation's overlay (${running.join(', ')}) to be deleted`, 30_000);
    await workbench.screenshot('chat-history-restored-after-reload');

    // The chat goes on from the restored history.
    await sendMessage(chat, 'explain README.md');
    await chat.locator('.transcript > .transcript-items .user-text', { hasText: 'explain README.md' }).waitFor();
    await waitIdle(chat);
    const last = model.chatRequests.find((r) => JSON.stringify(r.body).includes('explain README.md'));
    assert.ok(last && JSON.stringify(last.body).includes('list the files'), 'the next request sends the restored history');
  });

  it('a damaged store is kept aside with a notice at the next reload, and the chat still works', async () => {
    const { workbench } = suite.get();
    await waitIdle(workbench.chat());
    const dataDir = dirname(workbench.tmpDir);
    const [index] = findFiles(dataDir, join('chats', 'index.json')).filter((f) => !f.includes('kept-aside'));
    assert.ok(index, 'the chat store is in the extension\'s storage');
    // The last turn's suggestion saves the chat too (its usage), debounced: wait until the store has
    // been still for a while, so neither that save nor the window's shutdown rewrites the index
    // after it is damaged below.
    await waitForStillStore(index);
    assert.ok(!index.includes(`${join('User', 'settings.json')}`));
    writeFileSync(index, '{ this is not json');
    const chat = await reloadWindow(workbench);
    await chat.locator('.notice', { hasText: /index was damaged .* kept aside/ }).waitFor({ timeout: 30_000 });
    const aside = findFiles(dataDir, 'index.json').filter((f) => f.includes('kept-aside'));
    assert.equal(aside.length, 1);
    assert.equal(readFileSync(aside[0], 'utf8'), '{ this is not json');
    // Rebuilt from the chat files: the restored chat is still there.
    await chat.locator('.transcript > .transcript-items .user-text', { hasText: 'read src/greet.ts' }).waitFor();
    await sendMessage(chat, 'list the files');
    await waitIdle(chat);
  });
});
