// The presenter turns session events into what the webview shows; its snapshot must always equal
// what was sent, so a reloaded chat looks exactly as before.
import * as assert from 'node:assert/strict';
import type { SpeculationSnapshot } from '../../../src/core/followup/speculation';
import type { HostToWebview } from '../../../src/shared/protocol';
import { ChatPresenter } from '../../../src/vscode/chat/chatPresenter';
import { approvalDetail } from '../../../src/vscode/chat/approvalText';
import { speculationStatusOf } from '../../../src/vscode/speculation/speculationStatus';

function presenter() {
  const posted: HostToWebview[] = [];
  const chat = new ChatPresenter({
    post: (message) => posted.push(message),
    model: () => ({ label: 'm', demo: false }),
    settings: () => ({ enterAcceptsSuggestion: false }),
  });
  return { chat, posted };
}

function snapshot(overrides: Partial<SpeculationSnapshot> = {}): SpeculationSnapshot {
  return {
    id: 'run1', suggestion: 'add a test', status: 'running', boundary: null, toolCalls: [], filesWritten: [], messages: [],
    pipelinedSuggestion: null, error: null, errorReason: null, startedAt: 0, finishedAt: null, usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 }, turns: 0,
    ...overrides,
  };
}

describe('ChatPresenter', () => {
  it('streams a turn: user message, assistant text, a tool group with its result, busy and idle', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'user_message', text: 'read a.ts', historyIndex: 0, attachments: [] });
    chat.handle({ type: 'busy', busy: true });
    chat.handle({ type: 'chat', event: { type: 'text', delta: 'Let me ' } });
    chat.handle({ type: 'chat', event: { type: 'text', delta: 'read it.' } });
    chat.handle({ type: 'chat', event: { type: 'tool_call_started', callId: 'c1', name: 'read_file', args: { file_path: 'a.ts' }, summary: 'a.ts' } });
    chat.handle({ type: 'chat', event: { type: 'tool_call_finished', callId: 'c1', name: 'read_file', summary: 'a.ts', status: 'ok', result: 'content', filesChanged: [] } });
    chat.handle({ type: 'chat', event: { type: 'text', delta: 'Done.' } });
    chat.handle({ type: 'busy', busy: false });
    assert.deepEqual(posted.map((m) => m.type), [
      'userMessage', 'turnState', 'assistantStart', 'assistantDelta', 'assistantDelta', 'assistantEnd', 'toolGroupStart', 'toolCallUpdate',
      'toolGroupEnd', 'assistantStart', 'assistantDelta', 'assistantEnd', 'turnState',
    ]);
    const state = chat.snapshot();
    assert.equal(state.busy, false);
    assert.deepEqual(state.transcript.map((item) => item.kind), ['user', 'assistant', 'toolGroup', 'assistant']);
    const [, first, group] = state.transcript;
    assert.equal(first.kind === 'assistant' && first.text, 'Let me read it.');
    assert.deepEqual(group.kind === 'toolGroup' && group.calls, [{ callId: 'c1', tool: 'read_file', summary: 'a.ts', status: 'ok', result: 'content' }]);
  });

  it('asks for approval inline and resolves it with the answer the webview sends', async () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'chat', event: { type: 'tool_call_started', callId: 'c1', name: 'run_shell_command', args: { command: 'npm test' }, summary: 'npm test' } });
    const answer = chat.request({ callId: 'c1', tool: 'run_shell_command', kind: 'shell', args: { command: 'npm test' }, summary: 'npm test' });
    const request = posted.find((m) => m.type === 'approvalRequest');
    assert.ok(request && request.type === 'approvalRequest');
    assert.equal(request.detail, 'npm test');
    assert.equal(chat.approvalPending, true);
    chat.answerApproval(request.id, 'always');
    assert.equal(await answer, 'allow_always');
    assert.equal(chat.approvalPending, false);
    const item = chat.snapshot().transcript.find((t) => t.kind === 'approval');
    assert.equal(item?.kind === 'approval' && item.decision, 'always');
  });

  it('an approval whose turn is stopped is denied, never left hanging', async () => {
    const { chat } = presenter();
    const controller = new AbortController();
    const answer = chat.request({ callId: 'c1', tool: 'edit', kind: 'write', args: {}, summary: 'a.ts', signal: controller.signal });
    controller.abort();
    assert.equal(await answer, 'deny');
  });

  it('shows an accepted speculation at once, marked speculated, with the time saved', () => {
    const { chat, posted } = presenter();
    chat.handle({
      type: 'speculation_accepted', runId: 'run1', suggestion: 'add a test', historyStart: 0, applied: ['t.ts'], notApplied: [], timeSavedMs: 4200, alreadyRendered: false, continuesLive: false,
      excluded: [], point: { id: 'pt1', historyLength: 4, checkpointId: 'cp1' },
      checkpoint: { id: 'cp1', createdAt: 0, origin: { kind: 'accept', suggestion: 'add a test', runId: 'run1' }, state: 'applied', files: [{ path: 't.ts', change: 'created' }] },
      toolCalls: [{ index: 0, id: 'c1', name: 'write_file', args: { file_path: 't.ts' }, rawArgs: '{}', summary: 't.ts', decision: 'redirect', executed: true, ok: true, result: 'Created t.ts' }],
      messages: [
        { role: 'user', content: 'add a test' },
        { role: 'assistant', content: 'Adding it.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'write_file', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'Created t.ts' },
        { role: 'assistant', content: 'Added.' },
      ],
    });
    const append = posted.find((m) => m.type === 'appendItems');
    assert.ok(append && append.type === 'appendItems');
    assert.deepEqual(append.items.map((i) => i.kind), ['user', 'assistant', 'toolGroup', 'assistant']);
    assert.ok(append.items.every((i) => 'speculated' in i && i.speculated === true));
    // The line after it says what was saved, and carries the checkpoint that undoes it.
    const line = posted.filter((m) => m.type === 'appendItems').flatMap((m) => (m.type === 'appendItems' ? m.items : [])).find((i) => i.kind === 'turnEnd');
    assert.deepEqual(line && line.kind === 'turnEnd' && [line.text, line.checkpoint], ['Speculated 1 tool call · 4.2 s saved', { checkpointId: 'cp1', state: 'applied', files: [{ path: 't.ts', change: 'created' }] }]);
  });

  it('does not render a promoted run twice', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'speculation_accepted', runId: 'r', suggestion: 's', historyStart: 0, applied: [], notApplied: ['a.ts'], excluded: ['b.ts'], timeSavedMs: 0, alreadyRendered: true, continuesLive: true, toolCalls: [], messages: [{ role: 'user', content: 's' }], point: { id: 'pt1', historyLength: 1, checkpointId: null }, checkpoint: null });
    const items = posted.flatMap((m) => (m.type === 'appendItems' ? m.items : []));
    assert.deepEqual(items.map((i) => i.kind), ['turnEnd'], 'only the line: the turns are on screen already');
    assert.match(items[0].kind === 'turnEnd' ? items[0].text : '', /kept your version of a\.ts · left out b\.ts · continuing live/);
  });

  it('says on the accept line which changes were dropped before Tab', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'speculation_accepted', runId: 'r', suggestion: 's', historyStart: 0, applied: ['a.ts'], notApplied: [], excluded: [], droppedHunks: [{ path: 'a.ts', total: 3, dropped: ['line 4 (+1)'] }], timeSavedMs: 0, alreadyRendered: true, continuesLive: false, toolCalls: [], messages: [{ role: 'user', content: 's' }], point: { id: 'pt1', historyLength: 1, checkpointId: null }, checkpoint: null });
    const items = posted.flatMap((m) => (m.type === 'appendItems' ? m.items : []));
    assert.match(items[0].kind === 'turnEnd' ? items[0].text : '', /left out 1 of 3 changes in a\.ts \(line 4 \(\+1\)\)/);
  });

  it('says on the accept line what was committed ahead, and when the index stayed as the user had it', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'speculation_accepted', runId: 'r', suggestion: 'commit it', historyStart: 0, applied: [], notApplied: [], excluded: [], timeSavedMs: 0, alreadyRendered: true, continuesLive: false, toolCalls: [], messages: [{ role: 'user', content: 'commit it' }], point: { id: 'pt1', historyLength: 1, checkpointId: null }, checkpoint: null, committedAhead: { moved: ['main: 1a2b3c4 → 5d6e7f8'], indexNote: 'the index was not updated: you changed it since the speculation read it' } });
    const items = posted.flatMap((m) => (m.type === 'appendItems' ? m.items : []));
    assert.match(items[0].kind === 'turnEnd' ? items[0].text : '', /committed main: 1a2b3c4 → 5d6e7f8 · the index was not updated: you changed it/);
  });

  it('carries what Tab would commit (commit ahead) to the status line, and nothing when the run did not commit', () => {
    const commitAhead = { moves: ['main: 1a2b3c4 → 5d6e7f8'], log: 'commit 5d6e7f8\nAuthor: Ada <ada@example.com>\n\n    Add farewell\n\n src/greet.ts | 3 +++', diff: '+farewell', note: 'dates are the speculation’s' };
    const status = speculationStatusOf(snapshot({ status: 'completed', commitAhead }));
    assert.deepEqual(status.commitAhead, { moves: commitAhead.moves, log: commitAhead.log, note: commitAhead.note });
    assert.equal(speculationStatusOf(snapshot({ status: 'completed' })).commitAhead, undefined);
    assert.equal(speculationStatusOf(snapshot({ status: 'completed', commitAhead: null })).commitAhead, undefined);
  });

  it('maps every speculation state to the status line, in words', () => {
    assert.equal(speculationStatusOf(null).state, 'idle');
    assert.equal(speculationStatusOf(snapshot({ status: 'running' })).state, 'running');
    assert.equal(speculationStatusOf(snapshot({ status: 'completed' })).state, 'ready');
    assert.equal(speculationStatusOf(snapshot({ status: 'aborted' })).state, 'idle');
    const stoppedAt = { index: 0, id: 'c1', name: 'run_shell_command', args: { command: 'npm test' }, rawArgs: '{"command":"npm test"}', summary: 'npm test', decision: 'boundary' as const, executed: false, ok: null, result: null };
    const boundary = speculationStatusOf(
      snapshot({ status: 'boundary', boundary: { type: 'shell', tool: 'run_shell_command', detail: '`npm test` may change files (npm runs package scripts)' }, toolCalls: [stoppedAt] }),
    );
    assert.deepEqual(boundary.boundary, {
      type: 'shell',
      tool: 'run_shell_command',
      detail: '`npm test` may change files (npm runs package scripts)',
      text: 'Stopped before `npm test`: it may change files. Tab runs it with your approval.',
    });
    const failed = speculationStatusOf(snapshot({ status: 'failed', error: 'HTTP 500' }));
    assert.equal(failed.error, 'HTTP 500');
    const written = speculationStatusOf(snapshot({ filesWritten: [{ path: 'src/a.ts', kind: 'modified' }] }));
    assert.deepEqual(written.filesWritten, ['src/a.ts']);
  });

  it('describes what an approval is for: the command, the file and the size of the change', () => {
    assert.equal(approvalDetail({ tool: 'run_shell_command', args: { command: 'npm test', directory: 'pkg' }, summary: '' }), 'npm test\n(in pkg)');
    assert.equal(approvalDetail({ tool: 'edit', args: { file_path: 'a.ts', old_string: 'x', new_string: 'y\nz' }, summary: '' }), 'a.ts: replace 1 line with 2');
    assert.equal(approvalDetail({ tool: 'web_fetch', args: { url: 'https://x.test' }, summary: '' }), 'https://x.test');
    // A write with its change: the diff follows, and a protected file says why it asks.
    const diff = '--- a/.vscode/tasks.json\n+++ b/.vscode/tasks.json\n@@ -1,1 +1,1 @@\n-{}\n+{"tasks": []}';
    const change = { path: '.vscode/tasks.json', diff, protected: { pattern: '.vscode/*.json', why: 'VS Code runs tasks from it' } };
    assert.equal(
      approvalDetail({ tool: 'write_file', args: { file_path: '.vscode/tasks.json', content: '{"tasks": []}\n' }, summary: '', change }),
      `Protected file: .vscode/tasks.json — VS Code runs tasks from it (it matches ".vscode/*.json" in speculate.protectedPaths).\n\n.vscode/tasks.json: write 2 lines\n\n${diff}`,
    );
  });

  it('a new chat clears everything and denies a pending approval', async () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'user_message', text: 'hi', historyIndex: 0, attachments: [] });
    const answer = chat.request({ callId: 'c1', tool: 'edit', kind: 'write', args: {}, summary: 'a.ts' });
    chat.clear();
    assert.equal(await answer, 'deny');
    assert.deepEqual(chat.snapshot().transcript, []);
    assert.equal(posted[posted.length - 1].type, 'clear');
  });

  describe('edit & resend, regenerate, usage and the stored view', () => {
    /** Two turns: "first" (history 0–1) and "second" with a tool call (history 2–5). */
    function twoTurns() {
      const p = presenter();
      const { chat } = p;
      chat.handle({ type: 'user_message', text: 'first', historyIndex: 0, attachments: [] });
      chat.handle({ type: 'chat', event: { type: 'text', delta: 'one' } });
      chat.handle({ type: 'busy', busy: false });
      chat.handle({
        type: 'user_message', text: 'second', historyIndex: 2,
        attachments: [{ kind: 'selection', path: 'src/greet.ts', startLine: 3, endLine: 5, text: 'x' }],
      });
      chat.handle({ type: 'chat', event: { type: 'tool_call_started', callId: 'c1', name: 'read_file', args: {}, summary: 'a.ts' } });
      chat.handle({ type: 'chat', event: { type: 'tool_call_finished', callId: 'c1', name: 'read_file', summary: 'a.ts', status: 'ok', result: 'r', filesChanged: [] } });
      chat.handle({ type: 'chat', event: { type: 'text', delta: 'two' } });
      chat.handle({ type: 'busy', busy: false });
      return p;
    }
    const userIds = (chat: ChatPresenter) => chat.snapshot().transcript.filter((t) => t.kind === 'user').map((t) => t.id);

    it('shows the chips of a message, and maps each user message to its place in the history', () => {
      const { chat } = twoTurns();
      const second = chat.snapshot().transcript.find((t) => t.kind === 'user' && t.text === 'second');
      assert.deepEqual(second?.kind === 'user' && second.attachments?.map((a) => [a.kind, a.label, a.path, a.line]), [['selection', 'greet.ts:3-5', 'src/greet.ts', 3]]);
      assert.deepEqual(userIds(chat).map((id) => chat.historyIndexOf(id)), [0, 2]);
    });

    it('editing the second message removes it and its answer, and the resent one keeps its chips', () => {
      const { chat, posted } = twoTurns();
      const [first, second] = userIds(chat);
      chat.prepareEdit(second);
      posted.length = 0;
      chat.handle({ type: 'history_truncated', length: 2 });
      const firstAnswer = chat.snapshot().transcript[1];
      assert.deepEqual(posted, [{ type: 'truncate', afterId: firstAnswer.id }]);
      assert.deepEqual(chat.snapshot().transcript.map((t) => t.kind), ['user', 'assistant']);
      chat.handle({ type: 'user_message', text: 'second, shorter', historyIndex: 2, attachments: [] });
      const resent = chat.snapshot().transcript[2];
      assert.equal(resent.kind === 'user' && resent.attachments?.[0]?.label, 'greet.ts:3-5');
      assert.equal(chat.historyIndexOf(first), 0);
    });

    it('editing the first message empties the transcript; regenerate keeps the question', () => {
      const edit = twoTurns();
      edit.posted.length = 0;
      edit.chat.handle({ type: 'history_truncated', length: 0 });
      assert.deepEqual(edit.posted, [{ type: 'truncate' }]);
      assert.deepEqual(edit.chat.snapshot().transcript, []);

      const regenerate = twoTurns();
      const [, second] = userIds(regenerate.chat);
      regenerate.posted.length = 0;
      regenerate.chat.handle({ type: 'history_truncated', length: 3 });
      assert.deepEqual(regenerate.posted, [{ type: 'truncate', afterId: second }]);
      assert.deepEqual(regenerate.chat.snapshot().transcript.map((t) => t.kind), ['user', 'assistant', 'user']);
    });

    it('puts each answer\'s tokens under it and keeps a chat line with the background share', () => {
      const { chat, posted } = presenter();
      chat.handle({ type: 'user_message', text: 'q', historyIndex: 0, attachments: [] });
      const chatEntry = { source: 'chat' as const, model: 'm', input: 12_345, cached: 9_100, output: 350 };
      chat.handle({ type: 'usage', source: 'chat', model: 'm', counts: { input: 12_345, cached: 9_100, output: 350 }, chat: { entries: [chatEntry] } });
      const item = chat.snapshot().transcript.at(-1);
      assert.equal(item?.kind === 'usage' && item.text, '12.3k in (9.1k cached) · 350 out');
      chat.handle({
        type: 'usage', source: 'suggestion', model: 'm', counts: { input: 12_000, cached: 12_000, output: 10 },
        chat: { entries: [chatEntry, { source: 'suggestion', model: 'm', input: 12_000, cached: 12_000, output: 10 }] },
      });
      const line = posted.filter((m) => m.type === 'chatUsage').at(-1);
      assert.equal(line?.type === 'chatUsage' && line.usage?.text, 'This chat: 12.3k in (9.1k cached) · 350 out · background 12k in (12k cached) · 10 out (49% of the tokens)');
      assert.equal(chat.snapshot().transcript.filter((t) => t.kind === 'usage').length, 1, 'background work adds no line under the answer');
    });

    it('prices an answer and the chat when a price table is set', () => {
      const posted: HostToWebview[] = [];
      const chat = new ChatPresenter({
        post: (m) => posted.push(m), model: () => ({ label: 'm', demo: false }), settings: () => ({ enterAcceptsSuggestion: false }),
        prices: () => ({ currency: '$', models: { m: { input: 2, cachedInput: 0.5, output: 8 } } }),
      });
      const counts = { input: 10_000, cached: 8_000, output: 500 };
      chat.handle({ type: 'usage', source: 'chat', model: 'm', counts, chat: { entries: [{ source: 'chat', model: 'm', ...counts }] } });
      const item = chat.snapshot().transcript.at(-1);
      // 2,000 × 2 + 8,000 × 0.5 + 500 × 8 = 12,000 per million = $0.012
      assert.equal(item?.kind === 'usage' && item.text, '10k in (8k cached) · 500 out · $0.012');
      assert.match(chat.snapshot().usage?.text ?? '', /· \$0\.012$/);
    });

    it('a stored view comes back exactly; a missing or damaged one is rebuilt from the messages', () => {
      const { chat } = twoTurns();
      const view = chat.exportView();
      const again = presenter();
      again.chat.loadChat({ messages: [], view: JSON.parse(JSON.stringify(view)), title: 'first' });
      assert.deepEqual(again.chat.snapshot().transcript, chat.snapshot().transcript);
      assert.equal(again.chat.snapshot().title, 'first');
      assert.deepEqual(userIds(again.chat).map((id) => again.chat.historyIndexOf(id)), [0, 2]);
      assert.equal(again.posted.at(-1)?.type, 'init');

      const rebuilt = presenter();
      rebuilt.chat.loadChat({
        messages: [
          { role: 'user', content: 'first\n\n<attached_context>\n<file path="a.ts">\nx\n</file>\n</attached_context>' },
          { role: 'assistant', content: 'one' },
        ],
        view: { transcript: [{ kind: 'script' }], userHistory: [], counter: 1 },
        title: 'first',
      });
      const items = rebuilt.chat.snapshot().transcript;
      assert.deepEqual(items.map((t) => t.kind), ['user', 'assistant']);
      assert.equal(items[0].kind === 'user' && items[0].text, 'first', 'the attached context is not shown as the message');
      assert.equal(rebuilt.chat.historyIndexOf(items[0].id), 0);
    });
  });

  it('keeps a warning notice with its buttons in the snapshot a reloaded webview gets', () => {
    const { chat, posted } = presenter();
    const actions = [{ action: 'manageTrust' as const, label: 'Manage Workspace Trust' }];
    chat.notice('Restricted Mode: plan mode.', { tone: 'warning', actions });
    actions[0].label = 'changed afterwards';
    assert.deepEqual(posted, [{ type: 'notice', id: 'n1', text: 'Restricted Mode: plan mode.', tone: 'warning', actions: [{ action: 'manageTrust', label: 'Manage Workspace Trust' }] }]);
    assert.deepEqual(chat.snapshot().transcript, [
      { kind: 'notice', id: 'n1', text: 'Restricted Mode: plan mode.', tone: 'warning', actions: [{ action: 'manageTrust', label: 'Manage Workspace Trust' }] },
    ]);
  });
  it('keeps a pinned notice above every chat until it is unpinned, and never stores it with a chat', () => {
    const { chat, posted } = presenter();
    chat.pinNotice('Restricted Mode.', { tone: 'warning', actions: [{ action: 'manageTrust', label: 'Manage Workspace Trust' }] });
    chat.notice('Stopped.');
    assert.deepEqual(chat.exportView().transcript.map((t) => t.kind === 'notice' && t.text), ['Stopped.']);
    posted.length = 0;
    chat.clear();
    assert.deepEqual(posted.map((m) => m.type), ['clear', 'notice']);
    assert.deepEqual(chat.snapshot().transcript.map((t) => t.kind === 'notice' && t.text), ['Restricted Mode.']);
    chat.unpinNotices();
    chat.clear();
    assert.deepEqual(chat.snapshot().transcript, []);
  });

  it('a turn error carries the buttons that fix it, and Retry only when the history can be resumed', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'chat', event: { type: 'turn_error', kind: 'auth', message: 'The endpoint rejected the API key (HTTP 401: bad key).', retryable: true, actions: ['set_api_key', 'open_settings'] } });
    chat.handle({ type: 'chat', event: { type: 'turn_error', kind: 'output_limit', message: 'The answer was cut off.', retryable: false, actions: [] } });
    const errors = posted.filter((m) => m.type === 'error');
    assert.deepEqual(errors, [
      { type: 'error', id: 'e1', message: 'The endpoint rejected the API key (HTTP 401: bad key).', retryable: true, actions: [{ action: 'setApiKey', label: 'Set API Key' }, { action: 'openUserSettings', label: 'Open User Settings' }] },
      { type: 'error', id: 'e2', message: 'The answer was cut off.', retryable: false },
    ]);
    assert.deepEqual(chat.snapshot().transcript.map((t) => t.kind === 'error' && t.actions?.map((a) => a.action)), [['setApiKey', 'openUserSettings'], undefined]);
  });

  it('says a lasting fork failure in the speculation status (no suggestion needed) until the next turn starts', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'fork_unavailable', reason: "property 'chat_template_kwargs' is unsupported" });
    assert.deepEqual(chat.snapshot().speculation, { state: 'failed', toolCalls: 0, filesWritten: [], error: "property 'chat_template_kwargs' is unsupported" });
    assert.equal(posted.filter((m) => m.type === 'error').length, 0, 'quietly: not an error block');
    chat.handle({ type: 'busy', busy: true });
    assert.equal(chat.snapshot().speculation.state, 'idle');
  });

  it('shows a failed speculation with the short reason, and a chat notice (a tool call written as text) as a notice', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'speculation', snapshot: snapshot({ status: 'failed', error: 'The model\'s answer was cut off at its output limit (finish_reason "length"), so none of it is used.', errorReason: 'the answer was cut off at the output limit' }) });
    assert.equal(chat.snapshot().speculation.error, 'the answer was cut off at the output limit');
    chat.handle({ type: 'chat', event: { type: 'notice', text: 'The model wrote a tool call as plain text.' } });
    assert.deepEqual(posted.at(-1), { type: 'notice', id: 'n1', text: 'The model wrote a tool call as plain text.' });
  });

  it('a refused accept\'s notice carries the button that runs the request live', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'notice', text: 'Could not apply the speculated changes. The disk is full.', offer: 'run_live' });
    assert.deepEqual(posted.at(-1), { type: 'notice', id: 'n1', text: 'Could not apply the speculated changes. The disk is full.', actions: [{ action: 'runLive', label: 'Run It Live' }] });
    chat.handle({ type: 'notice', text: 'Accept cancelled.' });
    assert.deepEqual(posted.at(-1), { type: 'notice', id: 'n2', text: 'Accept cancelled.' });
  });
});
