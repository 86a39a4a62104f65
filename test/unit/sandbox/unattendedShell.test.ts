// The main chat's unattended shell commands (run without asking on a read-only verdict) run in the
// read-only sandbox where one is available: the classifier becomes a second line, not the only one.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { NodeProcessRunner } from '../../../src/core/process/nodeProcessRunner';
import { LinuxSandbox } from '../../../src/core/sandbox';
import { runShellCommandTool } from '../../../src/core/tools/runShellCommand';
import { runInSandbox } from '../../../src/core/tools/sandboxedShell';
import { makeWorkspace, SECRET, type TempWorkspace } from '../tools/workspaceFixture';

describe('unattended shell commands in the read-only sandbox', function () {
  this.timeout(30_000);
  let ws: TempWorkspace;
  let sandbox: LinuxSandbox;
  beforeEach(async () => {
    ws = await makeWorkspace({ 'a.txt': 'alpha\n' });
    sandbox = new LinuxSandbox({ tmpRoot: path.dirname(ws.root), hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ws.outside } });
  });
  afterEach(() => ws.cleanup());

  it('a read-only command the chat runs without asking runs inside: clean environment, fresh home, same answer', async () => {
    const result = await runShellCommandTool.execute({ command: 'cat a.txt' }, ws.context({ processRunner: new NodeProcessRunner(), approvedAsReadOnly: true, shellSandbox: sandbox }));
    assert.equal(result.ok, true, result.output);
    assert.match(result.output, /Exit code: 0\nOutput:\nalpha/);
    assert.deepEqual(result.sandboxed, { writable: false, changed: [] });
  });

  it('inside, a write fails and the model is told the sandbox stopped it; the file is unchanged', async () => {
    const result = await runInSandbox({ command: 'echo changed > a.txt', cwd: ws.root, context: ws.context({ shellSandbox: sandbox }), purpose: 'unattended', timeoutMs: 10_000, maxOutputBytes: 16_384, run: { writable: false } });
    assert.ok(result && !result.ok);
    assert.match(result.output, /ran without approval in a sandbox \(workspace read-only, no network\)/);
    assert.equal(result.boundary, undefined, 'the main chat has no boundary; the model is told to ask');
    assert.equal(await ws.fs.readFile('a.txt').then((data) => Buffer.from(data).toString()), 'alpha\n');
  });

  it('inside, what lies outside the workspace is not there', async () => {
    const result = await runInSandbox({ command: `cat ${path.join(ws.outside, 'secret.txt')}`, cwd: ws.root, context: ws.context({ shellSandbox: sandbox }), purpose: 'unattended', timeoutMs: 10_000, maxOutputBytes: 16_384, run: { writable: false } });
    assert.ok(result && !result.ok);
    assert.ok(!result.output.includes(SECRET));
  });

  it('without a sandbox the command runs as before (and the caller falls back)', async () => {
    assert.equal(await runInSandbox({ command: 'true', cwd: ws.root, context: ws.context({}), purpose: 'unattended', timeoutMs: 10_000, maxOutputBytes: 16_384, run: { writable: false } }), undefined);
    const result = await runShellCommandTool.execute({ command: 'cat a.txt' }, ws.context({ processRunner: new NodeProcessRunner(), approvedAsReadOnly: true }));
    assert.equal(result.ok, true, result.output);
    assert.equal(result.sandboxed, undefined);
  });
});
