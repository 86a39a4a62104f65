// The chat by keyboard in the real workbench: Ctrl+Alt+S focuses the chat input from anywhere;
// Ctrl+M (VS Code's "Tab Moves Focus") makes Tab leave the input instead of accepting, and
// Ctrl+Enter accepts; the live region says the suggestion's text once, then its state.
import * as assert from 'node:assert/strict';
import type { FrameLocator, Page } from 'playwright-core';
import { CHAT_INPUT, sendMessage, useChatWorkbench, waitIdle, type Workbench } from './workbench';

const inputFocused = (chat: FrameLocator) => chat.locator(CHAT_INPUT).evaluate((el) => el === document.activeElement && document.hasFocus());

async function until(check: () => Promise<boolean>, what: string, page: Page): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(100);
  }
}

describe('the chat by keyboard in the workbench', function () {
  this.timeout(120_000);
  const suite = useChatWorkbench('auto-edit');
  let workbench: Workbench;
  let chat: FrameLocator;
  before(() => {
    ({ workbench, chat } = suite.get());
  });

  it('Ctrl+Alt+S focuses the chat input from the explorer', async () => {
    const { page } = workbench;
    await page.locator('.activitybar [aria-label^="Explorer"]').first().click();
    await page.locator('.explorer-folders-view').waitFor();
    await page.keyboard.press('Control+Alt+S');
    await until(() => inputFocused(chat), 'the chat input to have the focus', page);
  });

  it('says the suggestion once, then its state; with Ctrl+M on, Tab leaves the input and Ctrl+Enter accepts', async () => {
    const { page } = workbench;
    await sendMessage(chat, 'read src/greet.ts');
    await waitIdle(chat);
    const ghost = chat.locator('.ghost-text');
    await ghost.waitFor();
    const suggestion = await ghost.innerText();
    await chat.locator('.spec-status[data-state="ready"]').waitFor({ timeout: 60_000 });
    const lines = await chat.locator('#announcer > div').allInnerTexts();
    const said = lines.filter((line) => line.includes(suggestion));
    assert.deepEqual(said, [`Suggestion: ${suggestion}. Tab to accept.`], 'the suggestion is said once');
    assert.match(lines[lines.length - 1] ?? '', /^Suggestion ready.*Tab to apply\.$/, 'then its state');
    await workbench.screenshot('keyboard-suggestion-ready');

    await chat.locator(CHAT_INPUT).focus();
    await page.keyboard.press('Control+M');
    await page.locator('.statusbar', { hasText: 'Tab Moves Focus' }).waitFor();
    await chat.locator('.hint-accept kbd', { hasText: 'Ctrl+Enter' }).waitFor();
    assert.match(await chat.locator('.spec-status .status-primary').innerText(), /Ctrl\+Enter to apply/);
    await workbench.screenshot('keyboard-tab-moves-focus');
    await page.keyboard.press('Tab');
    await until(async () => !(await chat.locator(CHAT_INPUT).evaluate((el) => el === document.activeElement)), 'Tab to move the focus', page);
    assert.equal(await ghost.innerText(), suggestion, 'Tab did not accept');

    await chat.locator(CHAT_INPUT).focus();
    await page.keyboard.press('Control+Enter');
    await chat.locator('.user-text', { hasText: suggestion }).waitFor();
    await waitIdle(chat);

    // Ctrl+M again: Tab accepts as before.
    await chat.locator(CHAT_INPUT).focus();
    await page.keyboard.press('Control+M');
    await chat.locator('.hint-accept kbd', { hasText: /^Tab$/ }).waitFor({ state: 'attached' });
    assert.equal(await page.locator('.statusbar', { hasText: 'Tab Moves Focus' }).count(), 0);
  });
});
