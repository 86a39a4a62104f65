// The headless CLI as outside scripts use it (HEADLESS-CLI.md): JSON lines in and out, exit codes,
// and one speculation end to end against a real OpenAI-compatible server.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { demoReply } from '../../fixtures/scripted/demoScript';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';

const repo = resolve(__dirname, '../../../..');
const cli = join(repo, 'dist/cli.js');

function run(args: string[], input = '', env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
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

const lines = (text: string) => text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('headless CLI', function () {
  this.timeout(30_000);
  before(function () {
    if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
  });

  it('prints help and exits 0; an unknown command is a one-line usage error with exit 2', async () => {
    const help = await run(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /shell-check/);
    const bad = await run(['frobnicate']);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.equal(bad.stderr.trim().split('\n').length, 1);
  });

  it('shell-check answers each line, reports a malformed line and goes on', async () => {
    const result = await run(['shell-check'], '{"command":"git status"}\nnot json\n{"command":"rm -rf build"}\n');
    assert.equal(result.code, 0);
    const [first, error, third] = lines(result.stdout);
    assert.deepEqual(first, { command: 'git status', readOnly: true, reason: 'ok' });
    assert.equal(error.line, 2);
    assert.equal(typeof error.error, 'string');
    assert.equal(third.readOnly, false);
    assert.equal(third.command, 'rm -rf build');
  });

  it('filter-suggestion gives null for a kept suggestion and the rule for a filtered one', async () => {
    const result = await run(['filter-suggestion'], '{"text":"run the tests"}\n{"text":"Looks good to me!"}\n{"text":"Let me check the logs"}\n');
    assert.deepEqual(lines(result.stdout), [
      { text: 'run the tests', reason: null },
      { text: 'Looks good to me!', reason: 'evaluative' },
      { text: 'Let me check the logs', reason: 'ai_voice' },
    ]);
  });

  it('gate decides per tool and mode; a path outside the workspace is a boundary', async () => {
    const workspace = join(repo, 'test/fixtures/workspaces/demo');
    const input = [
      { tool: 'read_file', args: { file_path: 'src/greet.ts' }, approvalMode: 'default', workspace },
      { tool: 'edit', args: { file_path: 'src/greet.ts' }, approvalMode: 'auto-edit', workspace },
      { tool: 'edit', args: { file_path: 'src/greet.ts' }, approvalMode: 'default', workspace },
      { tool: 'write_file', args: { file_path: '../escape.txt' }, approvalMode: 'yolo', workspace },
      { tool: 'mcp__x', args: {}, approvalMode: 'yolo', workspace },
      { tool: 'edit', args: {}, approvalMode: 'sometimes', workspace },
    ].map((l) => JSON.stringify(l)).join('\n');
    const out = lines((await run(['gate'], input)).stdout);
    assert.deepEqual(out.slice(0, 5).map((o) => o.decision), ['allow', 'redirect', 'boundary', 'boundary', 'boundary']);
    assert.match(String(out[3].reason), /outside the workspace/);
    assert.equal(out[5].line, 6);
  });

  it('gate answers boundary for writes to protected paths in every mode, yolo included', async () => {
    const workspace = join(repo, 'test/fixtures/workspaces/demo');
    const targets = ['.git/hooks/post-checkout', '.vscode/tasks.json', '.envrc', 'demo.code-workspace', '.github/workflows/ci.yml'];
    const input = targets.flatMap((file_path) => ['auto-edit', 'yolo'].map((approvalMode) => JSON.stringify({ tool: 'write_file', args: { file_path, content: 'x' }, approvalMode, workspace }))).join('\n');
    const out = lines((await run(['gate'], input)).stdout);
    assert.equal(out.length, targets.length * 2);
    for (const line of out) {
      assert.equal(line.decision, 'boundary');
      assert.match(String(line.reason), /is a protected file \(.+\); writing it needs your approval/);
    }
  });

  describe('speculate', () => {
    let model: ScriptedServer;
    let scratch: string;
    let workspace: string;
    let tmp: string;
    beforeEach(async () => {
      model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
      await model.start();
      scratch = mkdtempSync(join(tmpdir(), 'cli-spec-'));
      workspace = join(scratch, 'ws');
      tmp = join(scratch, 'tmp');
      cpSync(join(repo, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
      mkdirSync(tmp);
    });
    afterEach(async () => {
      await model.close();
      rmSync(scratch, { recursive: true, force: true });
    });
    const args = (extra: string[] = []) => [
      'speculate', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'demo', '--suggestion', 'read src/greet.ts and add a farewell', '--approval-mode', 'auto-edit', ...extra,
    ];
    const overlaysLeft = () => (existsSync(join(tmp, OVERLAY_PARENT)) ? readdirSync(join(tmp, OVERLAY_PARENT)).flatMap((pid) => readdirSync(join(tmp, OVERLAY_PARENT, pid))) : []);

    it('runs without touching the workspace, reports the contract fields, and leaves no overlay', async () => {
      const before = readFileSync(join(workspace, 'src/greet.ts'), 'utf8');
      const result = await run(args(), '', { TMPDIR: tmp });
      assert.equal(result.code, 0, result.stderr);
      const out = JSON.parse(result.stdout) as Record<string, unknown>;
      assert.deepEqual(Object.keys(out), ['status', 'boundary', 'toolCalls', 'filesWritten', 'messages', 'pipelinedSuggestion', 'applied', 'checkpoint', 'error', 'timeSavedMs']);
      assert.equal(out.checkpoint, null);
      assert.equal(out.status, 'completed');
      assert.deepEqual(out.filesWritten, ['src/greet.ts']);
      assert.deepEqual((out.toolCalls as { name: string; decision: string; executed: boolean }[]).map((c) => [c.name, c.decision, c.executed]), [['read_file', 'allow', true], ['edit', 'redirect', true]]);
      assert.equal(out.applied, null);
      assert.equal(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), before);
      assert.doesNotMatch(result.stdout, new RegExp(tmp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      assert.deepEqual(overlaysLeft(), []);
    });

    it('with --accept applies the overlay as Tab would', async () => {
      const result = await run(args(['--accept', '--state-dir', join(scratch, 'state')]), '', { TMPDIR: tmp });
      const out = JSON.parse(result.stdout) as { applied: { files: string[]; conflicts: string[] }; checkpoint: string };
      assert.deepEqual(out.applied, { files: ['src/greet.ts'], conflicts: [] });
      assert.match(out.checkpoint, /^[A-Za-z0-9][A-Za-z0-9._-]*$/);
      assert.match(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), /export function farewell/);
      assert.deepEqual(overlaysLeft(), []);
    });

    it('reports a failing endpoint as status failed with the error, exit 0', async () => {
      model.setScript([{ status: 401 }]);
      const result = await run(args(), '', { TMPDIR: tmp });
      assert.equal(result.code, 0);
      const out = JSON.parse(result.stdout) as { status: string; error: string };
      assert.equal(out.status, 'failed');
      assert.match(out.error, /key/i);
    });

    it('refuses missing options and a bad --history with exit 2', async () => {
      const missing = await run(['speculate', '--workspace', workspace]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /--base-url/);
      const history = join(scratch, 'history.json');
      writeFileSync(history, '[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"read_file","arguments":"{}"}}]}]');
      const dangling = await run(args(['--history', history]));
      assert.equal(dangling.code, 2);
      assert.match(dangling.stderr, /tool calls without results/);
    });
  });
});
