// The chat webview's transcript in Chromium: messages, safe streamed Markdown, links, tool groups,
// approvals, errors, notices, conflicts, and robustness against malformed host messages.
import * as assert from 'node:assert/strict';
import type { ToolCallView } from '../../src/shared/protocol';
import { settle, useChatPages, type ChatPage } from './harness';

describe('chat webview: transcript', function () {
  this.timeout(20_000);
  const pages = useChatPages();
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  it('shows the welcome explaining Tab while the chat is empty, and the model with its demo badge', async () => {
    await chat.init({ model: { label: 'demo-echo', demo: true } });
    const { page } = chat;
    assert.equal(await page.locator('.welcome').isVisible(), true);
    assert.match(await page.locator('.welcome').innerText(), /Tab\s+accept the suggestion/);
    assert.equal(await page.locator('.model-label').innerText(), 'demo-echo');
    assert.equal(await page.locator('.badge.demo').isVisible(), true);

    await chat.send({ type: 'config', model: { label: 'gpt-4.1', demo: false }, settings: { enterAcceptsSuggestion: false } });
    assert.equal(await page.locator('.model-label').innerText(), 'gpt-4.1');
    assert.equal(await page.locator('.badge.demo').isVisible(), false);

    await chat.send({ type: 'userMessage', id: 'u1', text: 'hello' });
    assert.equal(await page.locator('.welcome').isVisible(), false);
  });

  it('renders streamed Markdown as elements, with model-written HTML staying plain text', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'userMessage', id: 'u1', text: 'show me <b>markup</b>' });
    await chat.send({ type: 'assistantStart', id: 'a1' });
    const chunks = [
      '## Plan\n\nThis is **bold** and *italic* with `code` and ',
      '<img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script>.\n\n',
      '- first\n- second\n  - nested\n\n> quoted\n\n```js\nconst a = "<b>not bold</b>";\n```\n',
    ];
    for (const text of chunks) await chat.send({ type: 'assistantDelta', id: 'a1', text });
    await chat.send({ type: 'assistantEnd', id: 'a1' });

    const body = page.locator('.assistant-text[data-id="a1"]');
    assert.equal(await body.locator('h2').innerText(), 'Plan');
    assert.equal(await body.locator('strong').first().innerText(), 'bold');
    assert.equal(await body.locator('em').first().innerText(), 'italic');
    assert.equal(await body.locator('p code').first().innerText(), 'code');
    assert.equal(await body.locator(':scope > ul > li').count(), 2);
    assert.equal(await body.locator('ul ul > li').innerText(), 'nested');
    assert.equal(await body.locator('blockquote').innerText(), 'quoted');
    assert.equal(await body.locator('pre code').innerText(), 'const a = "<b>not bold</b>";');
    assert.match(await body.innerText(), /<img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2<\/script>/);

    assert.equal(await page.locator('.transcript img, .transcript script, .transcript b').count(), 0, 'no element from model or user text');
    assert.equal(await page.locator('.user-text').innerText(), 'show me <b>markup</b>');
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  });

  it('re-renders only the streaming message, announces it when done, and copies code through the host', async () => {
    await chat.init({
      transcript: [
        { kind: 'user', id: 'u0', text: 'first question' },
        { kind: 'assistant', id: 'a0', text: 'An **earlier** answer.' },
      ],
    });
    const { page } = chat;
    await page.evaluate(() => {
      (document.querySelector('.assistant-text[data-id="a0"] strong') as unknown as { marker: number }).marker = 1;
    });
    await chat.send({ type: 'userMessage', id: 'u1', text: 'next' });
    await chat.send({ type: 'assistantStart', id: 'a1' });
    await chat.send({ type: 'assistantDelta', id: 'a1', text: 'Run this:\n\n```sh\nnpm te' });
    await settle(page);
    assert.equal(await page.locator('.assistant-text[data-id="a1"] pre code').innerText(), 'npm te', 'an unclosed fence already shows');
    assert.equal(await page.locator('.assistant-text[data-id="a1"]').getAttribute('class'), 'assistant-text markdown streaming');
    await chat.send({ type: 'assistantDelta', id: 'a1', text: 'st\n```\nDone.' });
    await chat.send({ type: 'assistantEnd', id: 'a1' });

    const kept = await page.evaluate(() => (document.querySelector('.assistant-text[data-id="a0"] strong') as unknown as { marker?: number }).marker);
    assert.equal(kept, 1, 'the earlier message kept its nodes');
    assert.equal(await page.locator('.assistant-text[data-id="a1"] pre code').innerText(), 'npm test');
    await page.waitForFunction(() => document.getElementById('announcer')?.textContent?.includes('Done.'));

    await chat.clearPosted();
    // Clicked and read in one step: the label goes back after 1.5 s, which a stalled renderer could pass.
    const label = await page.locator('.assistant-text[data-id="a1"] .code-copy').evaluate((el: HTMLElement) => {
      el.click();
      return el.innerText;
    });
    assert.equal(label, 'Copied');
    assert.deepEqual(await chat.waitForPosted('copyText'), { type: 'copyText', text: 'npm test' });
  });

  it('folds the model’s reasoning above its answer', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'assistantStart', id: 'a1' });
    await chat.send({ type: 'reasoningDelta', id: 'a1', text: 'The user wants <b>tests</b>; ' });
    await chat.send({ type: 'reasoningDelta', id: 'a1', text: 'check the runner first.' });
    const fold = page.locator('details.reasoning');
    assert.equal(await fold.locator('summary').innerText(), 'Thinking…');
    assert.equal(await fold.evaluate((d) => (d as HTMLDetailsElement).open), false, 'folded by default');
    await chat.send({ type: 'assistantDelta', id: 'a1', text: 'Here is the plan.' });
    await chat.send({ type: 'assistantEnd', id: 'a1' });
    assert.equal(await fold.locator('summary').innerText(), 'Reasoning');
    await fold.locator('summary').click();
    assert.equal(await fold.locator('.reasoning-text').innerText(), 'The user wants <b>tests</b>; check the runner first.');
    const order = await page.locator('.response-parts > *').evaluateAll((els) => els.map((e) => e.className));
    assert.deepEqual(order, ['reasoning', 'assistant-text markdown']);
  });

  it('asks the host to open links and files, never navigating, and drops unsafe link targets', async () => {
    await chat.init({
      transcript: [
        {
          kind: 'assistant',
          id: 'a1',
          text: 'See [the docs](https://example.com/docs), [parser](src/parser.ts#L18), [evil](javascript:alert(1)) and [data](data:text/html,hi).',
        },
      ],
    });
    const { page } = chat;
    const before = page.url();
    const links = page.locator('.assistant-text a');
    assert.equal(await links.count(), 2);
    await chat.clearPosted();
    await links.nth(0).click();
    assert.deepEqual(await chat.waitForPosted('openLink'), { type: 'openLink', url: 'https://example.com/docs' });
    await links.nth(1).focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.waitForPosted('openFile'), { type: 'openFile', path: 'src/parser.ts', line: 18 });
    assert.equal(page.url(), before);
    assert.match(await page.locator('.assistant-text').innerText(), /evil and data\./);
  });

  it('shows tool calls with status for eyes and screen readers, folding long results', async () => {
    await chat.init();
    const { page } = chat;
    const running: ToolCallView[] = [
      { callId: 'c1', tool: 'read_file', summary: 'src/app.ts', status: 'running' },
      { callId: 'c2', tool: 'run_shell_command', summary: 'npm test', status: 'running' },
    ];
    await chat.send({ type: 'toolGroupStart', id: 'g1', calls: running });
    const group = page.locator('.tool-group[data-id="g1"]');
    assert.equal(await group.locator('.tool-call').count(), 2);
    assert.equal(await group.locator('.tool-call .icon-spinner').count(), 2);
    assert.match(await group.locator('.tool-call').nth(0).innerText(), /Running:\s*read_file\s*src\/app\.ts/);

    const longOutput = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
    await chat.send({ type: 'toolCallUpdate', groupId: 'g1', call: { ...running[0]!, status: 'ok', result: longOutput } });
    await chat.send({ type: 'toolCallUpdate', groupId: 'g1', call: { ...running[1]!, status: 'error', result: 'exit code 1' } });
    await chat.send({ type: 'toolCallUpdate', groupId: 'g1', call: { callId: 'c3', tool: 'write_file', summary: 'b.ts', status: 'cancelled' } });
    await chat.send({ type: 'toolGroupEnd', id: 'g1' });
    assert.match(await group.locator('.tool-call[data-call-id="c3"]').innerText(), /^Cancelled:\s*write_file/);

    const first = group.locator('.tool-call[data-call-id="c1"]');
    const fold = first.locator('details');
    assert.equal(await fold.count(), 1, 'a long result is folded');
    assert.equal(await fold.evaluate((d) => (d as HTMLDetailsElement).open), false);
    assert.match(await fold.locator('summary').innerText(), /30 lines/);
    assert.equal(await first.locator('.tool-result').isVisible(), false);
    await fold.locator('summary').focus();
    await page.keyboard.press('Enter');
    assert.equal(await first.locator('.tool-result').isVisible(), true, 'the fold opens from the keyboard');

    const second = group.locator('.tool-call[data-call-id="c2"]');
    assert.equal(await second.locator('details').count(), 0);
    assert.equal(await second.locator('.tool-result').innerText(), 'exit code 1');
    assert.match(await second.innerText(), /^Failed:/);
    assert.match(await first.innerText(), /^Done:/);
    assert.equal(await group.getAttribute('class'), 'tool-group done');
  });

  it('puts approvals in the transcript with keyboard-reachable buttons that answer the host', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'toolGroupStart', id: 'g1', calls: [{ callId: 'c1', tool: 'run_shell_command', summary: 'npm install', status: 'pending-approval' }] });
    await chat.send({ type: 'approvalRequest', id: 'ap1', tool: 'run_shell_command', summary: 'npm install', detail: 'npm install left-pad', callId: 'c1' });

    const approval = page.locator('.approval[data-id="ap1"]');
    assert.match(await approval.innerText(), /Allow run_shell_command\?/);
    assert.match(await approval.locator('.approval-detail').innerText(), /npm install left-pad/);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Allow', 'focus moves to Allow');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Always allow');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Deny');
    await chat.clearPosted();
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.waitForPosted('approvalAnswer'), { type: 'approvalAnswer', id: 'ap1', decision: 'deny' });
    assert.equal(await approval.locator('button').count(), 0);
    assert.match(await approval.locator('.approval-outcome').innerText(), /Denied/);
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA', 'focus returns to the input');

    // An approval answered elsewhere (or cancelled by Stop) loses its buttons too.
    await chat.send({ type: 'approvalRequest', id: 'ap2', tool: 'edit', summary: 'src/a.ts', detail: '' });
    await page.locator('.approval[data-id="ap2"] button', { hasText: 'Always allow' }).click();
    assert.deepEqual((await chat.posted()).filter((m) => m.type === 'approvalAnswer').at(-1), { type: 'approvalAnswer', id: 'ap2', decision: 'always' });
    await chat.send({ type: 'approvalRequest', id: 'ap3', tool: 'write_file', summary: 'b.ts', detail: '' });
    await chat.send({ type: 'approvalResolved', id: 'ap3', decision: 'allow' });
    assert.equal(await page.locator('.approval[data-id="ap3"] button').count(), 0);
    assert.match(await page.locator('.approval[data-id="ap3"]').innerText(), /Allowed/);
  });

  it('leaves the focus in the input when an approval arrives while the user is typing', async () => {
    await chat.init();
    const { page } = chat;
    await page.locator('textarea').fill('half a thought');
    await page.locator('textarea').focus();
    await chat.send({ type: 'approvalRequest', id: 'ap1', tool: 'edit', summary: 'src/a.ts', detail: '' });
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA');
    await page.waitForFunction(() => document.getElementById('announcer')?.textContent?.includes('Approval needed'));
  });

  it('shows errors with a Retry that asks the host once', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'error', id: 'e1', message: 'The endpoint refused the API key (401). Set a new key with "Speculate: Set API key".', retryable: true });
    await chat.send({ type: 'error', id: 'e2', message: 'The model name is unknown.', retryable: false });
    const block = page.locator('.error-block[data-id="e1"]');
    assert.equal(await block.getAttribute('role'), 'alert');
    assert.match(await block.innerText(), /refused the API key/);
    assert.equal(await page.locator('.error-block[data-id="e2"] button').count(), 0);
    await chat.clearPosted();
    await block.locator('button', { hasText: 'Retry' }).click();
    assert.deepEqual(await chat.waitForPosted('retry'), { type: 'retry', errorId: 'e1' });
    assert.equal(await block.locator('button').isDisabled(), true);
  });

  it('puts the fix on buttons under an error (Set API Key, Select Model, Open User Settings), Retry last', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({
      type: 'error',
      id: 'e3',
      message: 'The endpoint rejected the API key (HTTP 401: Incorrect API key provided).',
      retryable: true,
      actions: [
        { action: 'setApiKey', label: 'Set API Key' },
        { action: 'selectModel', label: 'Select Model' },
        { action: 'openUserSettings', label: 'Open User Settings' },
      ],
    });
    const block = page.locator('.error-block[data-id="e3"]');
    assert.deepEqual(await block.locator('button').allInnerTexts(), ['Set API Key', 'Select Model', 'Open User Settings', 'Retry']);
    await chat.clearPosted();
    await block.locator('button', { hasText: 'Set API Key' }).click();
    assert.deepEqual(await chat.waitForPosted('chatAction'), { type: 'chatAction', action: 'setApiKey' });
    await chat.clearPosted();
    await block.locator('button', { hasText: 'Open User Settings' }).click();
    assert.deepEqual(await chat.waitForPosted('chatAction'), { type: 'chatAction', action: 'openUserSettings' });
    // A reloaded view shows the same buttons from the snapshot.
    await chat.init({ transcript: [{ kind: 'error', id: 'e4', message: 'No model is selected.', retryable: false, actions: [{ action: 'selectModel', label: 'Select Model' }] }] });
    assert.deepEqual(await page.locator('.error-block[data-id="e4"] button').allInnerTexts(), ['Select Model']);
  });

  it('appends an accepted speculation at once, marked as speculated, followed by its notice', async () => {
    await chat.init({ transcript: [{ kind: 'user', id: 'u0', text: 'why does the test fail?' }, { kind: 'assistant', id: 'a0', text: 'Off by one.' }] });
    const { page } = chat;
    await chat.send({
      type: 'appendItems',
      items: [
        { kind: 'user', id: 'u1', text: 'fix it', speculated: true },
        { kind: 'toolGroup', id: 'g1', done: true, speculated: true, calls: [{ callId: 'c1', tool: 'edit', summary: 'src/a.ts', status: 'ok', result: 'Edited src/a.ts' }] },
        { kind: 'assistant', id: 'a1', text: 'Fixed the bound.', speculated: true },
      ],
    });
    await chat.send({ type: 'notice', id: 'n1', text: 'Speculated 1 tool call · 2.4 s saved' });
    assert.equal(await page.locator('.turn.request').count(), 2);
    assert.equal(await page.locator('.turn .badge.speculated').count(), 2, 'the request and its response carry the badge');
    assert.equal(await page.locator('.tool-group[data-id="g1"] .tool-result').innerText(), 'Edited src/a.ts');
    assert.equal(await page.locator('.notice').innerText(), 'Speculated 1 tool call · 2.4 s saved');
    const order = await page.locator('.transcript-items > *').evaluateAll((els) => els.map((e) => e.className));
    assert.deepEqual(order, ['turn request', 'turn response', 'turn request', 'turn response', 'notice']);
  });

  it('shows a warning notice as a block whose buttons name host actions, also after a reload', async () => {
    const text = 'Restricted Mode: this folder is not trusted, so Speculate runs in plan mode.';
    await chat.init({
      transcript: [{ kind: 'notice', id: 'n1', text, tone: 'warning', actions: [{ action: 'manageTrust', label: 'Manage Workspace Trust' }] }],
    });
    const { page } = chat;
    const block = page.locator('.notice-block.warning[data-id="n1"]');
    assert.equal(await block.locator('.notice-text').innerText(), text);
    await block.getByRole('button', { name: 'Manage Workspace Trust' }).click();
    assert.deepEqual(await chat.waitForPosted('chatAction'), { type: 'chatAction', action: 'manageTrust' });

    await chat.send({
      type: 'notice',
      id: 'n2',
      text: "This workspace's setting speculate.baseUrl is ignored.",
      tone: 'warning',
      actions: [{ action: 'openUserSettings', label: 'Open User Settings', setting: 'speculate.baseUrl' }],
    });
    await page.locator('.notice-block[data-id="n2"]').getByRole('button', { name: 'Open User Settings' }).click();
    const posted = (await chat.posted()).filter((m) => m.type === 'chatAction');
    assert.deepEqual(posted.at(-1), { type: 'chatAction', action: 'openUserSettings', setting: 'speculate.baseUrl' });
    assert.equal(await page.locator('.notice').count(), 0, 'quiet notices keep their own look');
  });

  it('keeps the newest notice in view when the status line and ghost text grow the input', async () => {
    const transcript = Array.from({ length: 30 }, (_, i) => ({ kind: 'assistant' as const, id: `a${i}`, text: `Answer number ${i} with some words to fill the line.` }));
    await chat.init({ transcript });
    await chat.send({ type: 'notice', id: 'n1', text: 'Speculated 2 tool calls · 3.1 s saved' });
    await settle(chat.page);
    // The composer grows: the pipelined suggestion and its running speculation appear.
    await chat.send({ type: 'suggestion', id: 's1', text: 'run the tests' });
    await chat.send({ type: 'speculation', status: { state: 'running', toolCalls: 1, filesWritten: [], suggestionId: 's1' } });
    await settle(chat.page);
    const visible = await chat.page.evaluate(() => {
      const notice = document.querySelector('.notice')!.getBoundingClientRect();
      const scroller = document.querySelector('.transcript')!.getBoundingClientRect();
      return notice.bottom <= scroller.bottom + 1 && notice.top >= scroller.top;
    });
    assert.equal(visible, true, 'the notice is inside the visible part of the transcript');
  });

  it('offers Open diff / Overwrite / Keep mine per conflicted file and posts each choice', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({
      type: 'conflicts',
      id: 'k1',
      files: [
        { path: 'src/a.ts', reason: 'changed in the editor since Speculate copied it' },
        { path: 'src/b.ts', reason: 'deleted in the workspace' },
      ],
    });
    const block = page.locator('.conflicts[data-id="k1"]');
    assert.match(await block.innerText(), /2 files changed while Speculate was working/);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Open diff', 'focus goes to the first choice');
    await chat.clearPosted();
    const rowA = block.locator('.conflict-file[data-path="src/a.ts"]');
    await rowA.locator('button', { hasText: 'Open diff' }).click();
    await rowA.locator('button', { hasText: 'Overwrite' }).click();
    const rowB = block.locator('.conflict-file[data-path="src/b.ts"]');
    await rowB.locator('button', { hasText: 'Keep mine' }).click();
    const choices = (await chat.posted()).filter((m) => m.type === 'conflictChoice');
    assert.deepEqual(choices, [
      { type: 'conflictChoice', conflictId: 'k1', path: 'src/a.ts', choice: 'open-diff' },
      { type: 'conflictChoice', conflictId: 'k1', path: 'src/a.ts', choice: 'overwrite' },
      { type: 'conflictChoice', conflictId: 'k1', path: 'src/b.ts', choice: 'keep-mine' },
    ]);
    assert.match(await rowA.locator('.conflict-outcome').innerText(), /Overwritten/);
    assert.match(await rowB.locator('.conflict-outcome').innerText(), /Kept your version/);
    assert.equal(await rowA.locator('button', { hasText: 'Keep mine' }).count(), 0);
    assert.equal(await rowA.locator('button', { hasText: 'Open diff' }).count(), 1, 'the diff stays available');
    await rowB.locator('a.link').click();
    assert.deepEqual(await chat.waitForPosted('openFile'), { type: 'openFile', path: 'src/b.ts' });
  });

  it('ignores malformed host messages and keeps working', async () => {
    await chat.init({ transcript: [{ kind: 'user', id: 'u0', text: 'kept' }] });
    const { page } = chat;
    const garbage: unknown[] = [
      null,
      'init',
      42,
      [],
      { type: 'nope' },
      { type: 'assistantDelta', id: 'a1' },
      { type: 'toolGroupStart', id: 'g', calls: [{ callId: 'c', tool: 'x', summary: 's', status: 'exploded' }] },
      { type: 'init', state: { transcript: [{ kind: 'user', id: 'u', text: 5 }] } },
      { type: 'init', state: null },
      { type: 'suggestion', id: '', text: 'empty id' },
      { type: 'speculation', status: { state: 'ready', toolCalls: -1, filesWritten: [] } },
      { type: 'appendItems', items: [{ kind: 'script', id: 'x' }] },
      { type: '__proto__' },
      { type: 'toString' },
      { type: 'toolCallUpdate', groupId: 'missing', call: { callId: 'c', tool: 'x', summary: '', status: 'ok' } },
      { type: 'assistantDelta', id: 'never-started', text: 'lost' },
      { type: 'approvalResolved', id: 'unknown', decision: 'allow' },
    ];
    for (const message of garbage) await chat.send(message);
    await settle(page);
    assert.equal(await page.locator('.transcript-items > *').count(), 1, 'nothing was added or removed');
    assert.equal(await page.locator('.user-text').innerText(), 'kept');
    await chat.send({ type: 'userMessage', id: 'u1', text: 'still alive' });
    assert.equal(await page.locator('.user-text').nth(1).innerText(), 'still alive');
  });

  it('clears everything on a new chat and shows the busy state while a turn runs', async () => {
    await chat.init({ transcript: [{ kind: 'user', id: 'u0', text: 'old' }], suggestion: { id: 's1', text: 'do more' } });
    const { page } = chat;
    await chat.send({ type: 'turnState', busy: true });
    assert.equal(await page.locator('.progress').isVisible(), true);
    await chat.send({ type: 'clear' });
    assert.equal(await page.locator('.transcript-items > *').count(), 0);
    assert.equal(await page.locator('.welcome').isVisible(), true);
    assert.equal(await page.locator('.ghost').isVisible(), false);
    assert.equal(await page.locator('.progress').isVisible(), false);

    await chat.clearPosted();
    await page.locator('button.new-chat').click();
    assert.deepEqual(await chat.waitForPosted('newChat'), { type: 'newChat' });
  });
});
