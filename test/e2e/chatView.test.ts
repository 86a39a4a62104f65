// The chat view in the real workbench: the activity-bar entry opens it and its webview renders.
import * as assert from 'node:assert/strict';
import { openChatView, openWorkbench, type Workbench } from './workbench';

describe('chat view in the workbench', function () {
  let workbench: Workbench;
  before(async function () {
    this.timeout(120_000);
    workbench = await openWorkbench();
  });
  after(async () => workbench?.close());

  it('opens from the activity bar and renders the chat webview', async () => {
    const chat = await openChatView(workbench);
    const text = await chat.locator('#app').innerText();
    assert.ok(text.length > 0, 'the webview shows content');
    await workbench.screenshot('workbench-speculate-view');
  });
});
