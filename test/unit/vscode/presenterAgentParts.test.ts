// The presenter's part of issue 26: a sub-agent's steps on the agent card (kept in the snapshot),
// the plan as the detail of exit_plan_mode's approval, and the context a turn used said once.
import * as assert from 'node:assert/strict';
import type { HostToWebview } from '../../../src/shared/protocol';
import { ChatPresenter } from '../../../src/vscode/chat/chatPresenter';
import { approvalDetail } from '../../../src/vscode/chat/approvalText';

function presenter() {
  const posted: HostToWebview[] = [];
  const chat = new ChatPresenter({ post: (message) => posted.push(message), model: () => ({ label: 'm', demo: false }), settings: () => ({ enterAcceptsSuggestion: false }) });
  return { chat, posted };
}

describe('ChatPresenter: sub-agent steps, plan card, context line', () => {
  it("keeps a sub-agent's steps on its card, in the snapshot as on screen", () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'chat', event: { type: 'tool_call_started', callId: 'c1', name: 'agent', args: { description: 'find greet', prompt: 'p' }, summary: 'find greet' } });
    chat.handle({ type: 'chat', event: { type: 'tool_call_progress', callId: 'c1', name: 'agent', line: 'grep_search greet' } });
    chat.handle({ type: 'chat', event: { type: 'tool_call_progress', callId: 'c1', name: 'agent', line: 'read_file src/greet.ts' } });
    chat.handle({ type: 'chat', event: { type: 'tool_call_finished', callId: 'c1', name: 'agent', summary: 'find greet', status: 'ok', result: 'src/greet.ts:1', filesChanged: [] } });
    const last = posted.filter((m) => m.type === 'toolCallUpdate').at(-1);
    assert.deepEqual(last?.type === 'toolCallUpdate' && last.call, { callId: 'c1', tool: 'agent', summary: 'find greet', status: 'ok', result: 'src/greet.ts:1', progress: ['grep_search greet', 'read_file src/greet.ts'] });
    const group = chat.snapshot().transcript.find((item) => item.kind === 'toolGroup');
    assert.deepEqual(group?.kind === 'toolGroup' && group.calls[0].progress, ['grep_search greet', 'read_file src/greet.ts']);
  });

  it('gives exit_plan_mode the whole plan as its approval detail', () => {
    const plan = '1. First\n2. Second';
    assert.equal(approvalDetail({ tool: 'exit_plan_mode', args: { plan }, summary: '1. First 2. Second' }), plan);
  });

  it('says the context a turn used when it changes, and a broken skill once, as a warning', () => {
    const { chat, posted } = presenter();
    const sources = [
      { kind: 'instructions' as const, path: 'AGENTS.md', size: 5 * 1024 * 1024, truncated: true },
      { kind: 'memory' as const, location: '/state/memory.md', truncated: false },
      { kind: 'skills' as const, names: ['a', 'b'] },
      { kind: 'skill_problem' as const, path: '.agents/skills/x/SKILL.md', reason: 'has no name: in its front matter' },
    ];
    chat.handle({ type: 'context_used', sources });
    chat.handle({ type: 'context_used', sources });
    const notices = posted.flatMap((m) => (m.type === 'notice' ? [[m.text, m.tone ?? 'info']] : []));
    assert.deepEqual(notices, [
      ['Context: AGENTS.md (cut: 5.0 MB) · memory · 2 skills', 'info'],
      ['Skill not loaded: .agents/skills/x/SKILL.md has no name: in its front matter.', 'warning'],
    ]);
  });
});
