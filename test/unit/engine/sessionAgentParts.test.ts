// The session's part of issue 26: plan mode left through exit_plan_mode for this chat only, the
// project's instructions rebuilt into the system prompt each turn (and forks sending those very
// bytes), and what the turn used reported to the chat.
import * as assert from 'node:assert/strict';
import type { SessionEvent } from '../../../src/core/session';
import type { RecordedRequest } from '../../fixtures/scriptedServer';
import { isFork } from './engineKit';
import { disposeSessionWorld, makeSession, runEnd, warmUpAndShow, type SessionWorld } from './sessionKit';

const PLAN = '1. Fix the typo in src/greet.ts.\n2. Done.';
const FIX = { toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: 'Helo', new_string: 'Hello' } }] };
const TASK = 'plan the typo fix';

function systemOf(request: RecordedRequest): string {
  const content = request.body?.messages?.[0]?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
}

describe('Engine: plan mode, project instructions', function () {
  this.timeout(20_000);
  let s: SessionWorld | undefined;
  afterEach(async () => {
    const ended = s;
    s = undefined;
    if (ended) await disposeSessionWorld(ended);
  });

  describe('exit_plan_mode', () => {
    it('shows the plan for approval; approved, this chat runs in auto-edit and carries it out', async () => {
      s = await makeSession({ [TASK]: [{ toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: PLAN } }] }, FIX, { text: 'Fixed.' }] }, {}, { config: { approvalMode: 'plan' }, answer: 'allow' });
      const outcome = await s.session.submit(TASK);
      assert.equal(outcome?.status, 'done');
      assert.deepEqual(s.approvals.map((a) => [a.tool, a.args]), [['exit_plan_mode', { plan: PLAN }]], 'only the plan was asked about: the edit then ran in auto-edit');
      assert.match(await s.world.read('src/greet.ts'), /Hello, /);
      assert.equal(s.session.approvalMode, 'auto-edit');
      const results = s.session.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      assert.match(results[0], /^The user approved the plan\. This chat now runs in auto-edit mode/);
      assert.ok(s.events.some((e) => e.type === 'notice' && /Plan approved: this chat now runs in auto-edit mode/.test(e.text)));
      // A settings change that leaves the approval mode alone keeps the chat's; a new chat starts from the setting.
      s.session.updateConfig({ model: 'scripted-model', fastModel: '', approvalMode: 'plan', suggestionsEnabled: false, speculationEnabled: true, maxTurns: 20, maxMessages: 100 });
      assert.equal(s.session.approvalMode, 'auto-edit');
      await s.session.newChat();
      assert.equal(s.session.approvalMode, 'plan');
    });

    it('Keep planning leaves plan mode on and tells the model to refine the plan', async () => {
      s = await makeSession({ [TASK]: [{ toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: PLAN } }] }, FIX, { text: 'I will refine it.' }] }, {}, { config: { approvalMode: 'plan' }, answer: 'deny' });
      await s.session.submit(TASK);
      assert.equal(s.session.approvalMode, 'plan');
      const results = s.session.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      assert.match(results[0], /^The user chose to keep planning: the plan was not approved and plan mode stays on\./);
      assert.match(results[1], /^Plan mode is on, so only read tools run; edit was not run\./);
      assert.match(await s.world.read('src/greet.ts'), /Helo, /, 'nothing changed');
    });

    it('cannot leave plan mode where the session forbids it (Restricted Mode)', async () => {
      s = await makeSession({ [TASK]: [{ toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: PLAN } }] }, FIX, { text: 'ok' }] }, {}, {
        config: { approvalMode: 'plan' },
        answer: 'allow',
        session: { planExitBlocked: () => 'this folder is in Restricted Mode.' },
      });
      await s.session.submit(TASK);
      assert.equal(s.session.approvalMode, 'plan');
      const results = s.session.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      assert.equal(results[0], 'The plan was approved, but the chat stays in plan mode: this folder is in Restricted Mode.');
      assert.match(await s.world.read('src/greet.ts'), /Helo, /);
    });
  });

  describe('project instructions in the system prompt', () => {
    it('are rebuilt each turn, reported to the chat, and the speculation sends the same bytes', async () => {
      const SUGGESTION = 'fix the typo in greet';
      s = await makeSession({ [SUGGESTION]: [{ text: 'Fixed.' }] }, { 'show me src/greet.ts': SUGGESTION }, {
        files: { 'src/greet.ts': 'export function greet(name: string) {\n  return `Helo, ${name}`;\n}\n', 'AGENTS.md': 'Run npm test first.\n', 'src/AGENTS.md': 'Sources use tabs.\n' },
        session: (world) => ({ turnContext: world.services.turnContext }),
      });
      await warmUpAndShow(s, SUGGESTION);
      const final = await runEnd(s, SUGGESTION);
      assert.equal(final.status, 'completed');
      const main = s.world.server.chatRequests.filter((r) => !isFork(r));
      assert.match(systemOf(main[0]), /<instructions path="AGENTS.md">\nRun npm test first\.\n<\/instructions>/);
      assert.doesNotMatch(systemOf(main[0]), /Sources use tabs/, 'no file of src/ was in play yet');
      // src/greet.ts came into play inside the second turn, so src/AGENTS.md joins from the next turn on.
      const last = main.at(-1)!;
      const forks = s.world.server.chatRequests.filter(isFork);
      assert.ok(forks.length >= 2, 'the suggestion and the speculation');
      for (const fork of forks) assert.equal(systemOf(fork), systemOf(last), 'every fork sends the main chat\'s system prompt byte for byte');
      const used = s.events.filter((e): e is Extract<SessionEvent, { type: 'context_used' }> => e.type === 'context_used');
      assert.equal(used.length, 2, 'one report per turn');
      assert.deepEqual(used[0].sources, [{ kind: 'instructions', path: 'AGENTS.md', size: 20, truncated: false }]);

      // The next live turn: src/greet.ts is in play now, and an edited AGENTS.md counts at once.
      await s.world.write('AGENTS.md', 'Run npm run lint first.\n');
      s.session.setUserTyping(true);
      await s.session.submit('hello');
      const next = systemOf(s.world.server.chatRequests.filter((r) => !isFork(r)).at(-1)!);
      assert.match(next, /Run npm run lint first\./);
      assert.doesNotMatch(next, /Run npm test first/);
      assert.match(next, /<instructions path="src\/AGENTS.md">\nSources use tabs\.\n<\/instructions>/);
    });
  });
});
