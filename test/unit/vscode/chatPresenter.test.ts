// The presenter turns session events into what the webview shows; its snapshot must always equal
// what was sent, so a reloaded chat looks exactly as before.
import * as assert from 'node:assert/strict';
import type { SpeculationSnapshot } from '../../../src/core/followup/speculation';
import type { HostToWebview } from '../../../src/shared/protocol';
import { ChatPresenter, approvalDetail, speculationStatusOf } from '../../../src/vscode/chatPresenter';

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
    pipelinedSuggestion: null, error: null, startedAt: 0, finishedAt: null, usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 }, turns: 0,
    ...overrides,
  };
}

describe('ChatPresenter', () => {
  it('streams a turn: user message, assistant text, a tool group with its result, busy and idle', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'user_message', text: 'read a.ts' });
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
      type: 'speculation_accepted', runId: 'run1', suggestion: 'add a test', applied: ['t.ts'], notApplied: [], timeSavedMs: 4200, alreadyRendered: false, continuesLive: false,
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
    const notice = posted.find((m) => m.type === 'notice');
    assert.equal(notice?.type === 'notice' && notice.text, 'Speculated 1 tool call · 4.2 s saved');
  });

  it('does not render a promoted run twice', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'speculation_accepted', runId: 'r', suggestion: 's', applied: [], notApplied: ['a.ts'], timeSavedMs: 0, alreadyRendered: true, continuesLive: true, toolCalls: [], messages: [{ role: 'user', content: 's' }] });
    assert.equal(posted.some((m) => m.type === 'appendItems'), false);
    const notice = posted.find((m) => m.type === 'notice');
    assert.match(notice?.type === 'notice' ? notice.text : '', /kept your version of a\.ts · continuing live/);
  });

  it('maps every speculation state to the status line, in words', () => {
    assert.equal(speculationStatusOf(null).state, 'idle');
    assert.equal(speculationStatusOf(snapshot({ status: 'running' })).state, 'running');
    assert.equal(speculationStatusOf(snapshot({ status: 'completed' })).state, 'ready');
    assert.equal(speculationStatusOf(snapshot({ status: 'aborted' })).state, 'idle');
    const boundary = speculationStatusOf(snapshot({ status: 'boundary', boundary: { type: 'shell', tool: 'run_shell_command', detail: '`npm test` may change files' } }));
    assert.deepEqual(boundary.boundary, { type: 'shell', tool: 'run_shell_command', detail: '`npm test` may change files' });
    const failed = speculationStatusOf(snapshot({ status: 'failed', error: 'HTTP 500' }));
    assert.equal(failed.error, 'HTTP 500');
    const written = speculationStatusOf(snapshot({ filesWritten: [{ path: 'src/a.ts', kind: 'modified' }] }));
    assert.deepEqual(written.filesWritten, ['src/a.ts']);
  });

  it('describes what an approval is for: the command, the file and the size of the change', () => {
    assert.equal(approvalDetail({ tool: 'run_shell_command', args: { command: 'npm test', directory: 'pkg' }, summary: '' }), 'npm test\n(in pkg)');
    assert.equal(approvalDetail({ tool: 'edit', args: { file_path: 'a.ts', old_string: 'x', new_string: 'y\nz' }, summary: '' }), 'a.ts: replace 1 line with 2');
    assert.equal(approvalDetail({ tool: 'web_fetch', args: { url: 'https://x.test' }, summary: '' }), 'https://x.test');
  });

  it('a new chat clears everything and denies a pending approval', async () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'user_message', text: 'hi' });
    const answer = chat.request({ callId: 'c1', tool: 'edit', kind: 'write', args: {}, summary: 'a.ts' });
    chat.clear();
    assert.equal(await answer, 'deny');
    assert.deepEqual(chat.snapshot().transcript, []);
    assert.equal(posted[posted.length - 1].type, 'clear');
  });
});
