// exit_plan_mode's approval as a plan card (the plan rendered, Approve and switch to auto-edit /
// Keep planning), and a sub-agent's steps folded inside the agent tool's card.
import * as assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium, openChat, startHarness, type ChatPage, type Harness } from './harness';

describe('chat webview: plan card and sub-agent steps', function () {
  this.timeout(20_000);
  let browser: Browser;
  let harness: Harness;
  let chat: ChatPage;

  before(async () => {
    [browser, harness] = await Promise.all([launchChromium(), startHarness()]);
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
  });
  beforeEach(async () => {
    chat = await openChat(browser, harness);
  });
  afterEach(async () => {
    const errors = chat.pageErrors.slice();
    await chat.page.close();
    assert.deepEqual(errors, [], 'no errors in the page');
  });

  const PLAN = '## Plan\n\n1. Fix the typo in `src/greet.ts`.\n2. Run <img src=x onerror="window.__pwned=1"> the tests.';

  it('shows the plan as Markdown with its two choices; approving answers allow', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'userMessage', id: 'u1', text: 'plan it' });
    await chat.send({ type: 'approvalRequest', id: 'ap1', tool: 'exit_plan_mode', summary: '## Plan 1. Fix the typo', detail: PLAN, callId: 'c1' });
    const card = page.locator('.plan-card[data-id="ap1"]');
    assert.equal(await card.locator('.plan-body h2').innerText(), 'Plan');
    assert.equal(await card.locator('.plan-body ol > li').count(), 2);
    assert.equal(await card.locator('.plan-body img').count(), 0, 'model HTML stays text');
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    assert.deepEqual(await card.locator('.approval-actions button').allInnerTexts(), ['Approve and switch to auto-edit', 'Keep planning']);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Approve and switch to auto-edit', 'the approve button takes the focus');
    await chat.clearPosted();
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.waitForPosted('approvalAnswer'), { type: 'approvalAnswer', id: 'ap1', decision: 'allow' });
    assert.equal(await card.locator('.approval-actions').count(), 0);
    assert.equal(await card.locator('.approval-outcome').innerText(), 'Approved: this chat now runs in auto-edit');
  });

  it('Keep planning answers deny and says so on the card', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'approvalRequest', id: 'ap2', tool: 'exit_plan_mode', summary: 'plan', detail: '1. x' });
    await chat.clearPosted();
    await page.locator('.plan-card[data-id="ap2"] button[data-decision="deny"]').click();
    assert.deepEqual(await chat.waitForPosted('approvalAnswer'), { type: 'approvalAnswer', id: 'ap2', decision: 'deny' });
    assert.equal(await page.locator('.plan-card[data-id="ap2"] .approval-outcome').innerText(), 'Kept planning');
  });

  it("folds a sub-agent's steps inside the agent card, and keeps the fold open as steps arrive", async () => {
    await chat.init();
    const { page } = chat;
    const call = { callId: 'c1', tool: 'agent', summary: 'find greet', status: 'running' as const };
    await chat.send({ type: 'toolGroupStart', id: 'g1', calls: [call] });
    await chat.send({ type: 'toolCallUpdate', groupId: 'g1', call: { ...call, progress: ['grep_search "function greet"'] } });
    const fold = page.locator('.tool-call[data-call-id="c1"] details.tool-progress');
    assert.equal(await fold.locator('summary').innerText(), 'Working · 1 step');
    assert.equal(await fold.getAttribute('open'), null, 'folded by default');
    await fold.locator('summary').click();
    await chat.send({ type: 'toolCallUpdate', groupId: 'g1', call: { ...call, progress: ['grep_search "function greet"', 'read_file src/greet.ts'] } });
    assert.notEqual(await fold.getAttribute('open'), null, 'still open after an update');
    assert.deepEqual(await fold.locator('li').allInnerTexts(), ['grep_search "function greet"', 'read_file src/greet.ts']);
    await chat.send({ type: 'toolCallUpdate', groupId: 'g1', call: { ...call, status: 'ok', result: 'greet is in src/greet.ts:1', progress: ['grep_search "function greet"', 'read_file src/greet.ts'] } });
    assert.equal(await fold.locator('summary').innerText(), 'Steps · 2 steps');
    assert.equal(await page.locator('.tool-call[data-call-id="c1"] .tool-result').innerText(), 'greet is in src/greet.ts:1');
  });

  it('refuses a malformed progress field at the protocol guard', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'toolGroupStart', id: 'g9', calls: [{ callId: 'c9', tool: 'agent', summary: 'x', status: 'running', progress: [1, 2] }] } as never);
    assert.equal(await page.locator('.tool-group[data-id="g9"]').count(), 0);
  });
});
