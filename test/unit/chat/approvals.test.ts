// The approval scheduler: every mode against read, write, shell (read-only or not), network and
// interaction tools, as TOOLS.md "Approval modes" states; plus "allow always" and its reach.
import * as assert from 'node:assert/strict';
import { ApprovalScheduler, type ApprovalMode } from '../../../src/core/chat/approvals';
import type { ToolKind } from '../../../src/core/tools/types';
import type { ToolArgs } from '../../../src/core/messages';

const READ_ONLY_COMMANDS = new Set(['ls -la', 'git status']);

function scheduler(mode: ApprovalMode, isReadOnly = async (command: string) => READ_ONLY_COMMANDS.has(command)) {
  return new ApprovalScheduler({ mode, isReadOnly });
}

interface Case {
  name: string;
  kind: ToolKind;
  args: ToolArgs;
}

const READ: Case = { name: 'read_file', kind: 'read', args: { file_path: 'a.ts' } };
const WRITE: Case = { name: 'edit', kind: 'write', args: { file_path: 'a.ts', old_string: 'a', new_string: 'b' } };
const SHELL_READ_ONLY: Case = { name: 'run_shell_command', kind: 'shell', args: { command: 'ls -la' } };
const SHELL_WRITING: Case = { name: 'run_shell_command', kind: 'shell', args: { command: 'rm -rf build' } };
const NETWORK: Case = { name: 'web_fetch', kind: 'network', args: { url: 'https://example.com' } };
const INTERACTION: Case = { name: 'todo_write', kind: 'interaction', args: { todos: [] } };

/** The expected action per mode, in the order plan, default, auto-edit, yolo. */
const TABLE: Array<[Case, [string, string, string, string]]> = [
  [READ, ['run', 'run', 'run', 'run']],
  [WRITE, ['refuse', 'ask', 'run', 'run']],
  [SHELL_READ_ONLY, ['refuse', 'ask', 'run', 'run']],
  [SHELL_WRITING, ['refuse', 'ask', 'ask', 'run']],
  [NETWORK, ['refuse', 'ask', 'ask', 'run']],
  [INTERACTION, ['refuse', 'run', 'run', 'run']],
];
const MODES: ApprovalMode[] = ['plan', 'default', 'auto-edit', 'yolo'];

describe('ApprovalScheduler', () => {
  for (const [tool, expected] of TABLE) {
    MODES.forEach((mode, i) => {
      const label = tool.kind === 'shell' ? `${tool.name} "${String(tool.args.command)}"` : tool.name;
      it(`${mode}: ${label} (${tool.kind}) → ${expected[i]}`, async () => {
        const decision = await scheduler(mode).decide(tool, tool.args);
        assert.equal(decision.action, expected[i]);
      });
    });
  }

  it('a plan-mode refusal tells the model why and what to do instead', async () => {
    const decision = await scheduler('plan').decide(WRITE, WRITE.args);
    assert.ok(decision.action === 'refuse');
    assert.match(decision.reason, /Plan mode/);
    assert.match(decision.reason, /edit was not run/);
    assert.match(decision.reason, /exit_plan_mode/);
  });

  it('plan mode asks the user about exit_plan_mode, the way out of plan mode', async () => {
    const decision = await scheduler('plan').decide({ name: 'exit_plan_mode', kind: 'interaction' }, { plan: '1. do it' });
    assert.equal(decision.action, 'ask');
  });

  it('auto-edit asks when the read-only classifier fails', async () => {
    const failing = scheduler('auto-edit', async () => {
      throw new Error('parser not loaded');
    });
    assert.equal((await failing.decide(SHELL_READ_ONLY, SHELL_READ_ONLY.args)).action, 'ask');
  });

  it('auto-edit asks for a shell call without a command string', async () => {
    assert.equal((await scheduler('auto-edit', async () => true).decide(SHELL_READ_ONLY, {})).action, 'ask');
  });

  it('"allow always" for a write tool covers later calls of that tool in default mode', async () => {
    const s = scheduler('default');
    s.grantAlways(WRITE, WRITE.args);
    assert.equal((await s.decide(WRITE, { file_path: 'other.ts' })).action, 'run');
    assert.equal((await s.decide({ name: 'write_file', kind: 'write' }, { file_path: 'x' })).action, 'ask');
  });

  it('"allow always" for a shell command covers that exact command only', async () => {
    const s = scheduler('default');
    s.grantAlways(SHELL_WRITING, SHELL_WRITING.args);
    assert.equal((await s.decide(SHELL_WRITING, { command: 'rm -rf build' })).action, 'run');
    assert.equal((await s.decide(SHELL_WRITING, { command: 'rm -rf /' })).action, 'ask');
  });

  it('grants never lift plan mode, and resetGrants forgets them', async () => {
    const s = scheduler('default');
    s.grantAlways(WRITE, WRITE.args);
    s.setMode('plan');
    assert.equal((await s.decide(WRITE, WRITE.args)).action, 'refuse');
    s.setMode('default');
    s.resetGrants();
    assert.equal((await s.decide(WRITE, WRITE.args)).action, 'ask');
  });
});
