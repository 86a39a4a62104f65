// `node dist/cli.js chat` as HEADLESS-CLI.md defines it: one main-chat turn against a real
// OpenAI-compatible server, approvals answered by --approve, errors as values, the key never printed.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ScriptedServer } from '../../fixtures/scriptedServer';

const repo = resolve(__dirname, '../../../..');
const cli = join(repo, 'dist/cli.js');
const API_KEY = 'sk-test-chat-7f3a9c1d2e';

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

interface ChatResult {
  status: string;
  text: string | null;
  messages: Array<Record<string, unknown>>;
  toolCalls: Array<{ name: string; args: Record<string, unknown>; outcome: string }>;
  usage: { promptTokens: number; cachedTokens: number; completionTokens: number } | null;
  finishReason: string | null;
  error: string | null;
  checkpoint: string | null;
}

const GREET = 'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n';

describe('headless CLI: chat', function () {
  this.timeout(30_000);
  let model: ScriptedServer;
  let scratch: string;
  let workspace: string;
  let state: string;
  let tmp: string;
  before(function () {
    if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
  });
  beforeEach(async () => {
    model = new ScriptedServer();
    await model.start();
    scratch = mkdtempSync(join(tmpdir(), 'cli-chat-'));
    workspace = join(scratch, 'ws');
    state = join(scratch, 'state');
    tmp = join(scratch, 'tmp');
    cpSync(join(repo, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
    mkdirSync(tmp);
  });
  afterEach(async () => {
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function chat(prompt: string, extra: string[] = []): Promise<{ result: ChatResult; stdout: string; stderr: string }> {
    const out = await run(['chat', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'scripted', '--prompt', prompt, '--api-key', API_KEY, '--state-dir', state, ...extra], { TMPDIR: tmp });
    assert.equal(out.code, 0, out.stderr);
    assert.ok(!out.stdout.includes(API_KEY) && !out.stderr.includes(API_KEY), 'the API key is never printed');
    return { result: JSON.parse(out.stdout) as ChatResult, stdout: out.stdout, stderr: out.stderr };
  }

  it('runs read tools until the model answers: completed, with the turn\'s messages and calls exact', async () => {
    model.setScript([
      { text: 'Reading it.', toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] },
      { text: 'greet() says hello.' },
    ]);
    const { result } = await chat('What does greet do?');
    assert.equal(result.status, 'completed');
    assert.equal(result.text, 'greet() says hello.');
    assert.equal(result.finishReason, 'stop');
    assert.equal(result.error, null);
    assert.equal(result.checkpoint, null, 'a turn that changed no file has no checkpoint');
    assert.deepEqual(result.toolCalls, [{ name: 'read_file', args: { file_path: 'src/greet.ts' }, outcome: 'ran' }]);
    assert.deepEqual(result.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    assert.deepEqual(result.messages[0], { role: 'user', content: 'What does greet do?' });
    assert.equal((result.messages[1].tool_calls as Array<{ id: string }>)[0].id, 'call_1');
    assert.equal(result.messages[2].tool_call_id, 'call_1');
    assert.match(String(result.messages[2].content), /Hello, \$\{name\}!/);
    assert.deepEqual(result.messages[3], { role: 'assistant', content: 'greet() says hello.' });
    assert.ok(result.usage && result.usage.promptTokens > 0 && result.usage.completionTokens > 0, 'usage is summed over the turn');
    // The engine's own system prompt and tool definitions went out, the key only as a header.
    const first = model.chatRequests[0].body!;
    assert.equal(first.messages?.[0].role, 'system');
    assert.ok((first.tools ?? []).some((t) => (t.function as { name: string }).name === 'run_shell_command'));
    assert.equal(model.chatRequests[0].headers.authorization, `Bearer ${API_KEY}`);
  });

  it('a write in default mode with --approve deny does not run, and the model is told', async () => {
    model.setScript([
      { toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/greet.ts', content: 'broken' } }] },
      { text: 'Understood, I left it.' },
    ]);
    const { result } = await chat('Rewrite greet.ts', ['--approval-mode', 'default', '--approve', 'deny']);
    assert.equal(result.status, 'completed');
    assert.deepEqual(result.toolCalls.map((c) => c.outcome), ['denied']);
    assert.match(String(result.messages[2].content), /declined/);
    assert.equal(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), GREET);
    assert.equal(result.checkpoint, null);
  });

  it('a write in default mode with --approve allow is written, names its checkpoint, and undo restores it', async () => {
    model.setScript([
      { toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: 'Hello', new_string: 'Good morning' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/farewell.ts', content: 'export const bye = 1;\n' } }] },
      { text: 'Done.' },
    ]);
    const { result } = await chat('Change the greeting and add a farewell', ['--approval-mode', 'default', '--approve', 'allow']);
    assert.equal(result.status, 'completed');
    assert.deepEqual(result.toolCalls.map((c) => [c.name, c.outcome]), [['edit', 'ran'], ['write_file', 'ran']]);
    assert.match(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), /Good morning/);
    assert.ok(existsSync(join(workspace, 'src/farewell.ts')));
    assert.ok(result.checkpoint, 'a turn that changed files names its checkpoint');
    const undone = await run(['undo', '--workspace', workspace, '--checkpoint', result.checkpoint, '--state-dir', state], { TMPDIR: tmp });
    assert.equal(undone.code, 0, undone.stderr);
    assert.deepEqual(JSON.parse(undone.stdout), { restored: ['src/farewell.ts', 'src/greet.ts'], conflicts: [], error: null });
    assert.equal(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), GREET);
    assert.ok(!existsSync(join(workspace, 'src/farewell.ts')), 'the file the turn created is gone again');
  });

  it('plan mode refuses writes whatever --approve says', async () => {
    model.setScript([
      { toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: 'Hello', new_string: 'Bye' } }] },
      { text: 'Plan mode: I only read.' },
    ]);
    const { result } = await chat('Change the greeting', ['--approval-mode', 'plan', '--approve', 'allow']);
    assert.deepEqual(result.toolCalls.map((c) => [c.name, c.outcome]), [['edit', 'refused']]);
    assert.equal(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), GREET);
  });

  it('an HTTP error fails the turn with the text the chat shows, exit 0, and no key anywhere', async () => {
    model.setScript([{ status: 401, body: { error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } } }]);
    const { result, stdout } = await chat('hello');
    assert.equal(result.status, 'failed');
    assert.equal(result.text, null);
    assert.equal(result.usage, null);
    assert.match(result.error ?? '', /API key/i);
    assert.ok(!stdout.includes(API_KEY));
  });

  it('--history continues a conversation: the earlier turns are sent first, only the new turn is printed', async () => {
    const history = [
      { role: 'user', content: 'Remember the number 41.' },
      { role: 'assistant', content: 'Noted: 41.' },
    ];
    const file = join(scratch, 'history.json');
    writeFileSync(file, JSON.stringify(history));
    model.setScript([{ text: '42.' }]);
    const { result } = await chat('Add one to it.', ['--history', file]);
    assert.equal(result.status, 'completed');
    assert.deepEqual(result.messages, [{ role: 'user', content: 'Add one to it.' }, { role: 'assistant', content: '42.' }]);
    const sent = model.chatRequests[0].body!.messages!.slice(1);
    assert.deepEqual(sent.map((m) => [m.role, m.content]), [['user', 'Remember the number 41.'], ['assistant', 'Noted: 41.'], ['user', 'Add one to it.']]);
  });

  it('--timeout-ms stops a turn the server is slow to answer: cancelled, exit 0, nothing half-kept', async () => {
    model.setScript([{ text: 'too late', latencyMs: 5_000 }]);
    // Long enough for a fresh process to have sent its request, well short of the server's answer.
    const { result } = await chat('hello', ['--timeout-ms', '1500']);
    assert.equal(result.status, 'cancelled');
    assert.equal(result.text, null);
    assert.equal(result.error, null);
    assert.equal(model.chatRequests.length, 1);
    assert.equal(await model.waitForClientClose(model.chatRequests[0], 5_000), true, 'the request was closed, not left running');
  });

  it('bad usage is exit 2 with one line on stderr and nothing on stdout', async () => {
    for (const args of [
      ['chat', '--workspace', '/nonexistent-speculate', '--base-url', 'http://127.0.0.1:9', '--model', 'm', '--prompt', 'x'],
      ['chat', '--workspace', '/tmp', '--model', 'm', '--prompt', 'x'],
      ['chat', '--workspace', '/tmp', '--base-url', 'http://127.0.0.1:9', '--model', 'm', '--prompt', 'x', '--approve', 'sometimes'],
      ['chat', '--workspace', '/tmp', '--base-url', 'http://127.0.0.1:9', '--model', 'm', '--prompt', 'x', '--frobnicate'],
    ]) {
      const out = await run(args);
      assert.equal(out.code, 2, args.join(' '));
      assert.equal(out.stdout, '');
      assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
    }
  });
});
