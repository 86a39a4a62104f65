// The speculation tool gate against TOOLS.md's table, with paths checked on a real temp workspace.
import * as assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, symlink, writeFile, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gateToolCall, type ApprovalMode, type GateContext } from '../../../src/core/followup/speculationToolGate';
import { resolveInsideWorkspace } from '../../../src/core/fs/paths';
import type { WorkspaceFs } from '../../../src/core/fs/workspaceFs';
import { ProtectedPaths } from '../../../src/core/fs/protectedPaths';
import type { Tool, ToolKind, ToolName } from '../../../src/core/tools/types';

function fakeTool(name: ToolName, kind: ToolKind, pathArgs: string[] = []): Tool {
  return {
    name, kind, pathArgs,
    definition: { type: 'function', function: { name, description: name, parameters: { type: 'object' } } },
    summarize: () => name,
    execute: async () => ({ ok: true, output: '' }),
  };
}

describe('speculationToolGate', () => {
  let root: string;
  let outside: string;
  let fs: WorkspaceFs;
  const shellVerdicts = new Map<string, boolean>([['ls -la', true], ['rm -rf build', false]]);
  const context = (approvalMode: ApprovalMode, overlayHasWrites = false): GateContext => ({
    approvalMode, fs, overlayHasWrites,
    classifyShell: async (command) => ({ readOnly: shellVerdicts.get(command) ?? false, reason: shellVerdicts.get(command) ? 'ok' : 'command: rm is not read-only' }),
  });

  before(async () => {
    const base = await realpath(await mkdtemp(join(tmpdir(), 'gate-')));
    root = join(base, 'ws');
    outside = join(base, 'outside');
    await mkdir(join(root, 'src'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(root, 'src/a.ts'), 'a');
    await writeFile(join(outside, 'secret.txt'), 's');
    await symlink(outside, join(root, 'linked-dir'));
    await symlink(join(outside, 'secret.txt'), join(root, 'linked-file'));
    // Only resolve() matters to the gate; the rest of the port is never called.
    fs = { root, resolve: (p: string) => resolveInsideWorkspace(root, p) } as unknown as WorkspaceFs;
  });
  after(async () => rm(join(root, '..'), { recursive: true, force: true }));

  const read = fakeTool('read_file', 'read', ['file_path']);
  const edit = fakeTool('edit', 'write', ['file_path']);
  const shell = fakeTool('run_shell_command', 'shell', ['directory']);

  it('allows reads inside the workspace in every mode', async () => {
    for (const mode of ['plan', 'default', 'auto-edit', 'yolo'] as const) {
      const result = await gateToolCall('read_file', read, { file_path: 'src/a.ts' }, context(mode));
      assert.equal(result.decision, 'allow', mode);
    }
  });

  it('redirects edits into the overlay only in auto-edit and yolo', async () => {
    assert.equal((await gateToolCall('edit', edit, { file_path: 'src/a.ts' }, context('auto-edit'))).decision, 'redirect');
    assert.equal((await gateToolCall('edit', edit, { file_path: 'src/a.ts' }, context('yolo'))).decision, 'redirect');
    for (const mode of ['plan', 'default'] as const) {
      const result = await gateToolCall('edit', edit, { file_path: 'src/a.ts' }, context(mode));
      assert.equal(result.decision, 'boundary');
      assert.equal(result.decision === 'boundary' && result.boundary.type, 'edit');
    }
  });

  it('turns every path that leaves the workspace into a path boundary', async () => {
    for (const escape of ['../outside/secret.txt', join(outside, 'secret.txt'), 'linked-dir/secret.txt', 'linked-file', '/etc/passwd']) {
      for (const [name, tool] of [['read_file', read], ['edit', edit]] as const) {
        const result = await gateToolCall(name, tool, { file_path: escape }, context('yolo'));
        assert.equal(result.decision, 'boundary', `${name} ${escape}`);
        assert.equal(result.decision === 'boundary' && result.boundary.type, 'path', `${name} ${escape}`);
      }
    }
    const shellOutside = await gateToolCall('run_shell_command', shell, { command: 'ls -la', directory: '..' }, context('yolo'));
    assert.equal(shellOutside.decision === 'boundary' && shellOutside.boundary.type, 'path');
  });

  it('allows read-only shell commands and stops at the others, keeping the reason', async () => {
    assert.equal((await gateToolCall('run_shell_command', shell, { command: 'ls -la' }, context('default'))).decision, 'allow');
    const refused = await gateToolCall('run_shell_command', shell, { command: 'rm -rf build' }, context('yolo'));
    assert.equal(refused.decision, 'boundary');
    assert.ok(refused.decision === 'boundary' && refused.boundary.type === 'shell' && refused.boundary.detail.includes('rm -rf build'));
  });

  it('stops a read-only shell command once the overlay holds edits it would not see', async () => {
    const result = await gateToolCall('run_shell_command', shell, { command: 'ls -la' }, context('yolo', true));
    assert.equal(result.decision === 'boundary' && result.boundary.type, 'shell');
  });

  it('fails closed when the classifier throws', async () => {
    const ctx = { ...context('yolo'), classifyShell: async () => { throw new Error('wasm missing'); } };
    const result = await gateToolCall('run_shell_command', shell, { command: 'ls -la' }, ctx);
    assert.equal(result.decision, 'boundary');
  });

  it('stops at network, interaction and unknown tools', async () => {
    const cases: [string, Tool | undefined, string][] = [
      ['web_fetch', fakeTool('web_fetch', 'network'), 'denied_tool'],
      ['web_search', fakeTool('web_search', 'network'), 'denied_tool'],
      ['ask_user_question', fakeTool('ask_user_question', 'interaction'), 'denied_tool'],
      ['todo_write', fakeTool('todo_write', 'interaction'), 'denied_tool'],
      ['mcp__github__create_issue', undefined, 'unknown_tool'],
    ];
    for (const [name, tool, type] of cases) {
      const result = await gateToolCall(name, tool, {}, context('yolo'));
      assert.equal(result.decision === 'boundary' && result.boundary.type, type, name);
    }
  });

  describe('protected paths', () => {
    const writeFileTool = fakeTool('write_file', 'write', ['file_path']);

    before(async () => {
      await mkdir(join(root, 'config'), { recursive: true });
      await symlink(join(root, 'config'), join(root, '.vscode'));
    });

    it('a write to one is a boundary in every mode, yolo included, saying which file and why', async () => {
      for (const target of ['.git/hooks/post-checkout', '.vscode/tasks.json', 'app.code-workspace', '.env.local', 'sub/.envrc', '.github/workflows/ci.yml', '.yarnrc.yml']) {
        for (const mode of ['plan', 'default', 'auto-edit', 'yolo'] as const) {
          for (const [name, tool] of [['edit', edit], ['write_file', writeFileTool]] as const) {
            const result = await gateToolCall(name, tool, { file_path: target }, context(mode));
            assert.equal(result.decision, 'boundary', `${name} ${target} in ${mode}`);
            if (result.decision !== 'boundary') continue;
            assert.equal(result.boundary.type, 'edit');
            assert.match(result.reason, /is a protected file \(.+\); writing it needs your approval/, `${name} ${target} in ${mode}`);
          }
        }
      }
    });

    it('counts the spelled path through a symlinked folder, and what the symlink lands on', async () => {
      // .vscode is a symlink to config/: VS Code still reads .vscode/tasks.json.
      assert.equal((await gateToolCall('write_file', writeFileTool, { file_path: '.vscode/tasks.json' }, context('yolo'))).decision, 'boundary');
      assert.equal((await gateToolCall('write_file', writeFileTool, { file_path: 'config/tasks.json' }, context('yolo'))).decision, 'redirect');
    });

    it('follows the session setting: its own globs, or none', async () => {
      const custom = { ...context('yolo'), protectedPaths: new ProtectedPaths(['src/generated/**']) };
      assert.equal((await gateToolCall('edit', edit, { file_path: 'src/generated/api.ts' }, custom)).decision, 'boundary');
      assert.equal((await gateToolCall('edit', edit, { file_path: '.envrc' }, custom)).decision, 'redirect');
      assert.equal((await gateToolCall('edit', edit, { file_path: 'src/a.ts' }, context('yolo'))).decision, 'redirect');
    });
  });
});
