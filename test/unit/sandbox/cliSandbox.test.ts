// The sandbox through the headless CLI (HEADLESS-CLI.md): the gate's `sandbox` decision, speculations
// whose test run passes only with their own edit and writes a report (overlay only, or applied with
// --accept), and a machine whose user namespaces are switched off (gate and speculate fall back, saying why).
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { cli } from '../cli/cliKit';
import { treeSnapshot } from '../engine/engineKit';
import { fixtureSettled } from './sandboxKit';

/** Runs `dist/cli.js` with `input` on stdin; `wrapper` is a command line that runs it (ending in `exec "$@"`-style argument passing). */
function run(args: string[], input: string, env: Record<string, string> = {}, wrapper: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [program, ...argv] = [...wrapper, process.execPath, cli, ...args];
  return new Promise((done) => {
    const child = spawn(program, argv, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
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
  beforeEach(async () => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'cli-sandbox-')));
    workspace = join(scratch, 'ws');
    mkdirSync(join(workspace, 'src'), { recursive: true });
    mkdirSync(join(workspace, 'test'));
    mkdirSync(join(scratch, 'tmp'));
    writeFileSync(join(workspace, 'package.json'), '{ "name": "demo", "private": true, "scripts": { "test": "node --test" } }\n');
    writeFileSync(join(workspace, 'src/greet.js'), 'exports.greet = (n) => `Hello, ${n}!`;\n');
    writeFileSync(join(workspace, 'test/greet.test.js'), "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst { farewell } = require('../src/greet.js');\ntest('farewell', () => assert.equal(farewell('A'), 'Goodbye, A!'));\n");
    await fixtureSettled();
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('gate: `sandbox` for tests in auto-edit and for read-only commands in default; boundaries for the network; today\'s answers when turned off', async () => {
    const line = (command: string, approvalMode: string) => JSON.stringify({ tool: 'run_shell_command', args: { command }, approvalMode, workspace });
    const input = [line('npm test', 'auto-edit'), line('ls -la', 'default'), line('npm test', 'default'), line('npm install', 'yolo'), line('git commit -am x', 'yolo')].join('\n');
    const on = await run(['gate'], input, { TMPDIR: join(scratch, 'tmp') });
    assert.equal(on.code, 0, on.stderr);
    const decisions = on.stdout.trim().split('\n').map((text) => JSON.parse(text) as { decision: string; reason: string });
    // A commit runs ahead with a private .git (commit ahead); Tab applies it by compare-and-swap.
    assert.deepEqual(decisions.map((d) => d.decision), ['sandbox', 'sandbox', 'boundary', 'boundary', 'sandbox']);
    assert.match(decisions[3].reason, /needs the network/);
    assert.match(decisions[4].reason, /commits ahead/);
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

  describe('a test command that writes a report', () => {
    const EDIT = { name: 'edit', arguments: { file_path: 'src/greet.js', old_string: 'exports.greet = (n) => `Hello, ${n}!`;\n', new_string: 'exports.greet = (n) => `Hello, ${n}!`;\nexports.farewell = (n) => `Goodbye, ${n}!`;\n' } };
    const TESTS = { name: 'run_shell_command', arguments: { command: 'mkdir -p reports && npm test > reports/test.txt 2>&1 && echo written' } };
    type Output = { status: string; toolCalls: { name: string; decision: string; executed: boolean }[]; filesWritten: string[]; messages: { role: string; content: string }[]; applied: null | { files: string[]; conflicts: string[] } };

    async function speculate(accept: boolean): Promise<Output> {
      const model = new ScriptedServer();
      await model.start();
      try {
        model.setScript([{ toolCalls: [EDIT] }, { toolCalls: [TESTS] }, { text: 'The tests pass; the report is in reports/test.txt.' }]);
        const args = ['speculate', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'm', '--suggestion', 'add farewell and run the tests', '--approval-mode', 'auto-edit', '--state-dir', join(scratch, 'state')];
        const result = await run(accept ? [...args, '--accept'] : args, '', { TMPDIR: join(scratch, 'tmp') });
        assert.equal(result.code, 0, result.stderr);
        const out = JSON.parse(result.stdout) as Output;
        assert.equal(out.status, 'completed', result.stdout);
        assert.deepEqual(out.toolCalls.map((c) => [c.name, c.decision, c.executed]), [['edit', 'redirect', true], ['run_shell_command', 'sandbox', true]]);
        assert.match(out.messages.filter((m) => m.role === 'tool')[1].content, /Exit code: 0[\s\S]*written/);
        assert.deepEqual(out.filesWritten, ['reports/test.txt', 'src/greet.js'], 'the report is an overlay change like the edit');
        return out;
      } finally {
        await model.close();
      }
    }

    /** What the CLI left in its temp folder: at most the empty per-user parent folders. */
    function tempLeftovers(): string[] {
      const tmp = join(scratch, 'tmp');
      return readdirSync(tmp).flatMap((name) => readdirSync(join(tmp, name)).map((below) => `${name}/${below}`));
    }

    it('without --accept, the report stays in the overlay: nothing in the workspace changes and the overlay is gone', async () => {
      const before = await treeSnapshot(workspace);
      const out = await speculate(false);
      assert.equal(out.applied, null);
      assert.deepEqual(await treeSnapshot(workspace), before);
      assert.deepEqual(tempLeftovers(), []);
    });

    it('with --accept, the report the sandboxed test run wrote is applied with the edit', async () => {
      const out = await speculate(true);
      assert.deepEqual(out.applied, { files: ['reports/test.txt', 'src/greet.js'], conflicts: [] });
      assert.match(readFileSync(join(workspace, 'reports/test.txt'), 'utf8'), /pass 1/);
      assert.match(readFileSync(join(workspace, 'src/greet.js'), 'utf8'), /farewell/);
      assert.deepEqual(tempLeftovers(), []);
    });
  });

  it('where user namespaces are switched off (a real sysctl, set in a user namespace of its own), gate sends read-only commands to the Landlock sandbox and speculate stops at a writing command, saying why', async function () {
    // user.max_user_namespaces is per user namespace: 0 in a child namespace switches them off for
    // the CLI inside it alone, as the sysctl does for a whole machine.
    const model = new ScriptedServer();
    await model.start();
    try {
      model.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: 'npm test' } }] }, { text: 'never' }]);
      const namespacesOff = ['unshare', '--user', '--map-root-user', '--', '/bin/sh', '-c', 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"', 'sh'];
      const spawnOff = (args: string[], input: string) => run(args, input, { TMPDIR: join(scratch, 'tmp') }, namespacesOff);
      const gate = await spawnOff(['gate'], [JSON.stringify({ tool: 'run_shell_command', args: { command: 'npm test' }, approvalMode: 'auto-edit', workspace }), JSON.stringify({ tool: 'run_shell_command', args: { command: 'ls' }, approvalMode: 'default', workspace })].join('\n'));
      assert.equal(gate.code, 0, gate.stderr);
      const answers = gate.stdout.trim().split('\n').map((text) => JSON.parse(text) as { decision: string; reason: string });
      assert.deepEqual(answers.map((answer) => answer.decision), ['boundary', 'sandbox']);
      assert.match(answers[1].reason, /Landlock sandbox \(user namespaces are switched off \(user\.max_user_namespaces = 0\)\)/);
      assert.match(answers[0].reason, /this machine's sandbox is Landlock/);
      const result = await spawnOff(['speculate', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'm', '--suggestion', 'run the tests', '--approval-mode', 'auto-edit', '--state-dir', join(scratch, 'state')], '');
      assert.equal(result.code, 0, result.stderr);
      const out = JSON.parse(result.stdout) as { status: string; boundary: { type: string; detail: string } | null; toolCalls: { decision: string; executed: boolean }[] };
      assert.equal(out.status, 'boundary');
      assert.deepEqual(out.toolCalls.map((c) => [c.decision, c.executed]), [['boundary', false]]);
      assert.equal(out.boundary?.type, 'shell');
      assert.match(out.boundary?.detail ?? '', /Commands that change files stop speculation here: this machine's sandbox is Landlock \(user namespaces are switched off \(user\.max_user_namespaces = 0\)\), which contains read-only commands only/);
    } finally {
      await model.close();
    }
  });
});
