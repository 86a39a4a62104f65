// The sandbox through the headless CLI (HEADLESS-CLI.md): the gate's `sandbox` decision, and a
// speculation whose test run passes only with its own edit, applied with --accept.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ScriptedServer } from '../../fixtures/scriptedServer';

const repo = resolve(__dirname, '../../../..');
const cli = join(repo, 'dist/cli.js');

function run(args: string[], input: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('headless CLI with the sandbox', function () {
  this.timeout(60_000);
  let scratch: string;
  let workspace: string;
  before(function () {
    if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
  });
  beforeEach(() => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'cli-sandbox-')));
    workspace = join(scratch, 'ws');
    mkdirSync(join(workspace, 'src'), { recursive: true });
    mkdirSync(join(workspace, 'test'));
    mkdirSync(join(scratch, 'tmp'));
    writeFileSync(join(workspace, 'package.json'), '{ "name": "demo", "private": true, "scripts": { "test": "node --test" } }\n');
    writeFileSync(join(workspace, 'src/greet.js'), 'exports.greet = (n) => `Hello, ${n}!`;\n');
    writeFileSync(join(workspace, 'test/greet.test.js'), "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst { farewell } = require('../src/greet.js');\ntest('farewell', () => assert.equal(farewell('A'), 'Goodbye, A!'));\n");
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('gate: `sandbox` for tests in auto-edit and for read-only commands in default; boundaries for the network; today\'s answers when turned off', async () => {
    const line = (command: string, approvalMode: string) => JSON.stringify({ tool: 'run_shell_command', args: { command }, approvalMode, workspace });
    const input = [line('npm test', 'auto-edit'), line('ls -la', 'default'), line('npm test', 'default'), line('npm install', 'yolo'), line('git commit -am x', 'yolo')].join('\n');
    const on = await run(['gate'], input, { TMPDIR: join(scratch, 'tmp') });
    assert.equal(on.code, 0, on.stderr);
    const decisions = on.stdout.trim().split('\n').map((text) => JSON.parse(text) as { decision: string; reason: string });
    assert.deepEqual(decisions.map((d) => d.decision), ['sandbox', 'sandbox', 'boundary', 'boundary', 'boundary']);
    assert.match(decisions[3].reason, /needs the network/);
    assert.match(decisions[4].reason, /changes the git repository/);
    const off = await run(['gate'], input, { TMPDIR: join(scratch, 'tmp'), SPECULATE_SANDBOX: 'off' });
    assert.deepEqual(off.stdout.trim().split('\n').map((text) => (JSON.parse(text) as { decision: string }).decision), ['boundary', 'allow', 'boundary', 'boundary', 'boundary']);
  });

  it('speculate --accept: the test run sees the speculated edit, passes, and accept applies the edit', async () => {
    const model = new ScriptedServer();
    await model.start();
    try {
      model.setScript([
        { toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.js', old_string: 'exports.greet = (n) => `Hello, ${n}!`;\n', new_string: 'exports.greet = (n) => `Hello, ${n}!`;\nexports.farewell = (n) => `Goodbye, ${n}!`;\n' } }] },
        { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'npm test' } }] },
        { text: 'Tests pass.' },
      ]);
      const result = await run(['speculate', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'm', '--suggestion', 'add farewell and run the tests', '--approval-mode', 'auto-edit', '--accept', '--state-dir', join(scratch, 'state')], '', { TMPDIR: join(scratch, 'tmp') });
      assert.equal(result.code, 0, result.stderr);
      const out = JSON.parse(result.stdout) as { status: string; toolCalls: { name: string; decision: string; executed: boolean }[]; messages: { role: string; content: string }[]; applied: { files: string[] } };
      assert.equal(out.status, 'completed');
      assert.deepEqual(out.toolCalls.map((c) => [c.name, c.decision, c.executed]), [['edit', 'redirect', true], ['run_shell_command', 'sandbox', true]]);
      assert.match(out.messages.filter((m) => m.role === 'tool')[1].content, /Exit code: 0[\s\S]*pass 1/);
      assert.deepEqual(out.applied.files, ['src/greet.js']);
      assert.match(readFileSync(join(workspace, 'src/greet.js'), 'utf8'), /farewell/);
    } finally {
      await model.close();
    }
  });
});
