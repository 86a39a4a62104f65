// The gate's `sandbox` decision against SANDBOX.md's table: with a sandbox, shell commands run inside
// unless they need the network, a person or write the git repository; default and plan run only
// read-only commands there (workspace read-only); without a sandbox the answers are today's.
import * as assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gateToolCall, type ApprovalMode, type GateContext, type GateDecision } from '../../../src/core/followup/speculationToolGate';
import { resolveInsideWorkspace } from '../../../src/core/fs/paths';
import type { WorkspaceFs } from '../../../src/core/fs/workspaceFs';
import { commandNeeds } from '../../../src/core/sandbox/commandNeeds';
import { isShellCommandReadOnly } from '../../../src/core/shell';
import { runShellCommandTool } from '../../../src/core/tools/runShellCommand';

describe('speculation gate with a sandbox', () => {
  let root: string;
  let fs: WorkspaceFs;
  before(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-gate-')));
    fs = { root, resolve: (p: string) => resolveInsideWorkspace(root, p) } as unknown as WorkspaceFs;
  });
  after(() => rm(root, { recursive: true, force: true }));

  const context = (approvalMode: ApprovalMode, sandboxAvailable: boolean, overlayHasWrites = false): GateContext => ({
    approvalMode,
    fs,
    overlayHasWrites,
    classifyShell: (command) => isShellCommandReadOnly(command, { workspaceRoot: root }),
    sandboxAvailable,
    commandNeeds,
  });
  const decide = (command: string, approvalMode: ApprovalMode, sandboxAvailable = true, overlayHasWrites = false): Promise<GateDecision> =>
    gateToolCall('run_shell_command', runShellCommandTool, { command }, context(approvalMode, sandboxAvailable, overlayHasWrites));
  const summary = (decision: GateDecision) => (decision.decision === 'sandbox' ? `sandbox ${decision.writable ? 'writable' : 'read-only'}` : decision.decision);

  it('auto-edit and yolo: tests, builds and formatters run in the sandbox over the overlay, after edits too', async () => {
    for (const mode of ['auto-edit', 'yolo'] as const) {
      for (const command of ['npm test', 'npm run build', 'npx prettier --write .', 'rm -rf dist && tsc', 'git diff', 'ls -la']) {
        assert.equal(summary(await decide(command, mode, true, true)), 'sandbox writable', `${mode}: ${command}`);
      }
    }
  });

  it('default and plan: read-only commands run in the sandbox with the workspace read-only; the rest stop', async () => {
    for (const mode of ['default', 'plan'] as const) {
      assert.equal(summary(await decide('ls -la', mode)), 'sandbox read-only', mode);
      const writing = await decide('npm test', mode);
      assert.ok(writing.decision === 'boundary' && /needs your approval in/.test(writing.boundary.detail), mode);
    }
  });

  it('the network, a person and writes to the git repository stay boundaries in every mode', async () => {
    const cases: [string, RegExp][] = [
      ['npm install', /needs the network/],
      ['git push', /needs the network/],
      ['vim notes.txt', /needs you/],
      ['git commit -am wip', /changes the git repository/],
      ['git stash', /changes the git repository/],
    ];
    for (const mode of ['plan', 'default', 'auto-edit', 'yolo'] as const) {
      for (const [command, why] of cases) {
        const decision = await decide(command, mode);
        assert.ok(decision.decision === 'boundary' && decision.boundary.type === 'shell' && why.test(decision.boundary.detail), `${mode}: ${command} → ${decision.reason}`);
      }
    }
  });

  it('without a sandbox the answers are today\'s: read-only allowed, writing a boundary, stale after edits', async () => {
    assert.equal((await decide('ls -la', 'auto-edit', false)).decision, 'allow');
    assert.equal((await decide('npm test', 'auto-edit', false)).decision, 'boundary');
    const stale = await decide('ls -la', 'auto-edit', false, true);
    assert.ok(stale.decision === 'boundary' && /would not see the speculated edits/.test(stale.boundary.detail));
  });

  it('Landlock (no overlay): read-only commands run there with the workspace read-only in every mode; writing ones and commands after edits stop, naming the backend', async () => {
    const landlock = (mode: ApprovalMode, overlayHasWrites = false): GateContext => ({ ...context(mode, true, overlayHasWrites), sandboxWrites: 'none', sandboxWhy: 'user namespaces are switched off (user.max_user_namespaces = 0)' });
    for (const mode of ['plan', 'default', 'auto-edit', 'yolo'] as const) {
      const reading = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'ls -la' }, landlock(mode));
      assert.equal(summary(reading), 'sandbox read-only', mode);
      assert.match(reading.reason, /Landlock sandbox \(user namespaces are switched off/);
      const writing = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'npm test' }, landlock(mode));
      assert.ok(writing.decision === 'boundary' && /this machine's sandbox is Landlock .*read-only commands only/.test(writing.boundary.detail), `${mode}: ${writing.reason}`);
      const stale = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'cat a.txt' }, landlock(mode, true));
      assert.ok(stale.decision === 'boundary' && /would not see the speculated edits \(the Landlock sandbox/.test(stale.reason), mode);
      const network = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'npm install' }, landlock(mode));
      assert.equal(network.decision, 'boundary', mode);
    }
  });

  it('commit ahead: a git write it can take runs in the sandbox with .git writable, in auto-edit and yolo only', async () => {
    const withGit = (approvalMode: ApprovalMode, extra: Partial<GateContext> = {}) => ({ ...context(approvalMode, true), gitAhead: true, ...extra });
    for (const mode of ['auto-edit', 'yolo'] as const) {
      const decision = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'git add -A && git commit -m x' }, withGit(mode));
      assert.deepEqual([decision.decision, decision.decision === 'sandbox' && decision.writable, decision.decision === 'sandbox' && decision.git], ['sandbox', true, true], mode);
    }
    for (const mode of ['default', 'plan'] as const) {
      const decision = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'git commit -am x' }, withGit(mode));
      assert.equal(decision.decision, 'boundary', mode);
    }
    const landlock = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'git commit -am x' }, withGit('yolo', { sandboxWrites: 'none' }));
    assert.equal(landlock.decision, 'boundary');
    const other = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'git rebase main' }, withGit('yolo'));
    assert.match(other.reason, /changes the git repository/);
    const without = await gateToolCall('run_shell_command', runShellCommandTool, { command: 'git commit -am x' }, context('yolo', true));
    assert.equal(without.decision, 'boundary');
  });
});
