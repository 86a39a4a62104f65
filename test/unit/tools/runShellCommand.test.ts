// run_shell_command through the real process runner: where it runs, what the model is told, limits.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { NodeProcessRunner } from '../../../src/core/process/nodeProcessRunner';
import { createShellTool, runShellCommandTool } from '../../../src/core/tools/runShellCommand';
import type { ProcessRunner } from '../../../src/core/process/processRunner';
import { addEscapes, escapingPaths, makeWorkspace, type TempWorkspace } from './workspaceFixture';

describe('run_shell_command tool', () => {
  let ws: TempWorkspace;
  const processRunner = new NodeProcessRunner({ killGraceMs: 200 });

  beforeEach(async () => {
    ws = await makeWorkspace({ 'src/a.txt': 'alpha\n' });
    await addEscapes(ws);
  });

  afterEach(() => ws.cleanup());

  it('runs in the workspace root by default and in directory when given', async () => {
    const root = await runShellCommandTool.execute({ command: 'pwd' }, ws.context({ processRunner }));
    assert.deepEqual(root, { ok: true, output: `Exit code: 0\nOutput:\n${ws.root}` });
    const sub = await runShellCommandTool.execute({ command: 'cat a.txt', directory: 'src' }, ws.context({ processRunner }));
    assert.equal(sub.output, 'Exit code: 0\nOutput:\nalpha');
    const absolute = await runShellCommandTool.execute({ command: 'pwd', directory: path.join(ws.root, 'src') }, ws.context({ processRunner }));
    assert.equal(absolute.output, `Exit code: 0\nOutput:\n${path.join(ws.root, 'src')}`);
  });

  it('reports a failing command with its exit code and output', async () => {
    const result = await runShellCommandTool.execute({ command: 'echo oops >&2; exit 4' }, ws.context({ processRunner }));
    assert.deepEqual(result, { ok: false, output: 'Exit code: 4\nOutput:\noops' });
    assert.equal((await runShellCommandTool.execute({ command: 'true' }, ws.context({ processRunner }))).output, 'Exit code: 0\n(no output)');
  });

  it('merges context.shellEnv over the process environment', async () => {
    const result = await runShellCommandTool.execute({ command: 'echo "$GIT_CONFIG_GLOBAL:${PATH:+has-path}"' }, ws.context({ processRunner, shellEnv: { GIT_CONFIG_GLOBAL: '/dev/null' } }));
    assert.equal(result.output, 'Exit code: 0\nOutput:\n/dev/null:has-path');
  });

  it('stops a command at the timeout and says so', async () => {
    const tool = createShellTool({ timeoutMs: 200 });
    const result = await tool.execute({ command: 'sleep 20' }, ws.context({ processRunner }));
    assert.equal(result.ok, false);
    assert.match(result.output, /^The command timed out after 0 s and was stopped, with everything it started\./);
  });

  it('cuts long output and tells the model how to see the rest', async () => {
    const tool = createShellTool({ maxOutputBytes: 2048 });
    const result = await tool.execute({ command: 'seq 1 100000' }, ws.context({ processRunner }));
    assert.equal(result.ok, true);
    assert.match(result.output, /^Exit code: 0\nOutput:\n1\n2\n/);
    assert.match(result.output, /100000\n\[Output was longer than 2 KB; the middle was left out\./);
    assert.ok(result.output.length < 2600);
  });

  it('reports cancellation when aborted', async () => {
    const controller = new AbortController();
    const running = runShellCommandTool.execute({ command: 'sleep 20' }, ws.context({ processRunner, signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const result = await running;
    assert.equal(result.ok, false);
    assert.match(result.output, /cancelled/);
  });

  it('refuses a working directory outside the workspace without running anything', async () => {
    let ran = 0;
    const counting: ProcessRunner = {
      async run() {
        ran++;
        return { exitCode: 0, signal: null, output: '', truncated: false, timedOut: false };
      },
    };
    for (const { path: requested, why } of escapingPaths(ws)) {
      const result = await runShellCommandTool.execute({ command: 'ls', directory: requested }, ws.context({ processRunner: counting }));
      assert.equal(result.ok, false, requested);
      assert.match(result.output, why);
    }
    assert.match((await runShellCommandTool.execute({ command: 'ls', directory: 'src/a.txt' }, ws.context({ processRunner: counting }))).output, /src\/a.txt is a file/);
    assert.match((await runShellCommandTool.execute({ command: 'ls', directory: 'nope' }, ws.context({ processRunner: counting }))).output, /Directory not found: nope/);
    assert.equal(ran, 0);
  });

  it('explains a missing runner and bad arguments', async () => {
    assert.match((await runShellCommandTool.execute({ command: 'ls' }, ws.context())).output, /Shell commands are not available here/);
    assert.match((await runShellCommandTool.execute({ command: ['ls'] }, ws.context({ processRunner }))).output, /"command" must be a string/);
    assert.match((await runShellCommandTool.execute({ command: '  ' }, ws.context({ processRunner }))).output, /"command" must be a non-empty string/);
    assert.match((await runShellCommandTool.execute({ command: 'ls', directory: 1 }, ws.context({ processRunner }))).output, /"directory" must be a string/);
  });

  it('summarises with the description when there is one', () => {
    assert.equal(runShellCommandTool.summarize({ command: 'npm test', description: 'Run the tests' }), 'Run the tests');
    assert.equal(runShellCommandTool.summarize({ command: 'ls -la\n  | head', directory: 'src' }), 'ls -la | head (in src)');
  });
});
