// The empty chat in a short sidebar: its welcome is read from the top (title first), not cut off at
// the end as the scroll-to-latest rule for messages would; the first message then sits at the end.
import * as assert from 'node:assert/strict';
import { useChatPages, type ChatPage } from './harness';

/** VS Code's default sidebar width, in a window short enough that the welcome does not fit. */
const SHORT_SIDEBAR = { width: 300, height: 460 };

describe('chat webview: the welcome in a short view', function () {
  this.timeout(20_000);
  const pages = useChatPages(SHORT_SIDEBAR);
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  const scroll = (): Promise<{ top: number; overflow: number }> =>
    chat.page.locator('.transcript').evaluate((el) => ({ top: el.scrollTop, overflow: el.scrollHeight - el.clientHeight }));

  it('shows the welcome from its title, also after the demo note appears, and follows the first message to the end', async () => {
    await chat.init({ model: { label: 'speculate-demo', demo: true } });
    const { page } = chat;
    const before = await scroll();
    assert.ok(before.overflow > 0, `the welcome must overflow this view for the test to mean anything (overflow ${before.overflow})`);
    assert.equal(before.top, 0, 'the welcome starts at its top');
    assert.equal(await page.locator('.welcome-mark').isVisible(), true);
    const mark = await page.locator('.welcome-mark').boundingBox();
    const view = await page.locator('.transcript').boundingBox();
    assert.ok(mark && view && mark.y >= view.y, 'the welcome mark is not scrolled out of view');

    // A config message (the demo note shows or hides) and a resize keep it there.
    await chat.send({ type: 'config', model: { label: 'speculate-demo', demo: true }, settings: { enterAcceptsSuggestion: false } });
    await page.setViewportSize({ width: 300, height: 440 });
    await page.waitForTimeout(50);
    assert.equal((await scroll()).top, 0);

    // Once the chat has messages, the newest is at the end as before.
    await chat.send({ type: 'userMessage', id: 'u1', text: 'hello' });
    await chat.send({ type: 'assistantStart', id: 'a1' });
    await chat.send({ type: 'assistantDelta', id: 'a1', text: 'line\n\n'.repeat(40) });
    await chat.send({ type: 'assistantEnd', id: 'a1' });
    const after = await scroll();
    assert.ok(after.overflow > 0);
    assert.ok(after.overflow - after.top < 32, `the view is at the end (${after.top} of ${after.overflow})`);
  });
});
