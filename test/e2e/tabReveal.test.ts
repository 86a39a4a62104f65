// Tab in one frame, in the real workbench: the speculated answer is on screen in Tab's own key event,
// before any message from the extension host arrives (instrumented in the webview), and the file on
// disk changes only afterwards, when the host has applied the overlay.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { CHAT_INPUT, sendMessage, useChatWorkbench, type Workbench } from './workbench';

interface TabLook {
  /** In the key event, right after the page's own handler: the answer visible on screen. */
  answerVisible: boolean;
  markText: string | null;
  /** Host messages that had arrived between the keydown and that moment. */
  hostMessagesBefore: number;
  keyAt: number;
  lookedAt: number;
  /** The host's answer to the Tab (its first revealAnswer), and when it came. */
  answer: { at: number } | null;
  /** Every host message type after the key, in order (for the failure message). */
  typesAfterKey: string[];
}

/** Watches the next Tab from inside the chat webview's page. */
async function watchNextTab(chat: FrameLocator, answer: string): Promise<void> {
  await chat.locator('#app').evaluate((_app, text: string) => {
    const state: TabLook = { answerVisible: false, markText: null, hostMessagesBefore: 0, keyAt: 0, lookedAt: 0, answer: null, typesAfterKey: [] };
    (window as unknown as { __tabLook: TabLook }).__tabLook = state;
    let keyDown = false;
    let messages = 0;
    window.addEventListener(
      'message',
      (event: MessageEvent) => {
        if (!keyDown) return;
        messages++;
        const type = (event.data as { type?: unknown } | null)?.type;
        state.typesAfterKey.push(typeof type === 'string' ? type : '?');
        // Status and review updates of the run may still be on their way when Tab is pressed; the
        // answer to the Tab is the revealAnswer.
        if (type === 'revealAnswer') state.answer ??= { at: performance.now() };
      },
      true,
    );
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Tab' && !keyDown) {
        keyDown = true;
        state.keyAt = performance.now();
      }
    }, true);
    // Registered after the page's own listener on the input: runs right after it, in the same event.
    document.querySelector('textarea')!.addEventListener(
      'keydown',
      (event) => {
        if (event.key !== 'Tab') return;
        state.lookedAt = performance.now();
        state.hostMessagesBefore = messages;
        state.answerVisible = [...document.querySelectorAll<HTMLElement>('.assistant-text')].some((el) => el.checkVisibility() && (el.textContent ?? '').includes(text));
        state.markText = document.querySelector('.apply-mark')?.textContent ?? null;
      },
      { once: true },
    );
  }, answer);
}

async function readLook(chat: FrameLocator): Promise<TabLook> {
  return chat.locator('#app').evaluate(() => (window as unknown as { __tabLook: TabLook }).__tabLook);
}

describe('Tab in one frame, in the workbench', function () {
  this.timeout(120_000);
  const suite = useChatWorkbench('auto-edit');
  let workbench: Workbench;
  let chat: FrameLocator;
  before(() => {
    ({ workbench, chat } = suite.get());
  });

  it('shows the speculated answer before any host message arrives, and the file on disk changes afterwards', async () => {
    // A suggestion comes after the second answered turn.
    await sendMessage(chat, 'list the files');
    await chat.locator('.assistant-text', { hasText: 'Here is what the workspace holds' }).waitFor();
    await sendMessage(chat, 'read src/greet.ts and add a farewell');
    await chat.locator('.assistant-text', { hasText: 'now exports' }).waitFor();
    await chat.locator('.ghost:not([hidden]) .ghost-text', { hasText: 'add a test for farewell' }).waitFor();
    await chat.locator('.spec-status[data-state="ready"]').waitFor();
    // The run's file list comes a moment after it is ready (the review is debounced); a user sees
    // it before pressing Tab, and its message must not be taken for the host's answer to the Tab.
    await chat.locator('.spec-files .spec-file[data-path="test/greet.test.mjs"]').waitFor({ state: 'attached' });
    const file = join(workbench.workspace, 'test/greet.test.mjs');
    assert.equal(existsSync(file), false, 'nothing written before Tab');

    await watchNextTab(chat, 'I added test/greet.test.mjs');
    const input = chat.locator(CHAT_INPUT);
    await input.click();
    await input.press('Tab');

    const look = await readLook(chat);
    assert.equal(look.answerVisible, true, 'the answer is on screen in the key event itself');
    assert.equal(look.hostMessagesBefore, 0, 'before any host message arrived');
    assert.equal(look.markText, 'applying…');
    // The host applies, then answers; the file changes only now.
    await chat.locator('.notice', { hasText: /Speculated 1 tool call · [\d.]+ s saved/ }).waitFor();
    const after = await readLook(chat);
    assert.ok(after.answer, `the host answered (messages after the key: ${after.typesAfterKey.join(', ')})`);
    assert.ok(after.answer.at > after.lookedAt, 'the host’s answer came after the answer was on screen');
    assert.match(readFileSync(file, 'utf8'), /farewell/, 'and the file on disk changed');
    assert.equal(await chat.locator('.apply-mark').count(), 0, 'applied: the mark is gone');
    assert.equal(await chat.locator('.user-text', { hasText: 'add a test for farewell' }).count(), 1, 'shown once');
    const ghost = chat.locator('.ghost:not([hidden]) .ghost-text');
    assert.equal(await ghost.innerText(), 'run the tests');
    assert.equal(await input.evaluate((el) => el === document.activeElement), true, 'the focus stayed in the input');
    await workbench.screenshot('tab-revealed');
  });
});
