// `node dist/cli.js speculate` against replays of real servers, as outside suites drive it: strict
// servers that refuse optional fields (adapted, remembered in --state-dir), Azure deployment URLs,
// every error shape, cut answers. Each run: exit 0, the key never printed, the workspace untouched,
// no overlay left, nothing written but the learned-profile file.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ReplayServer, type ReplayRule } from '../../fixtures/replay/replayServer';
import { replayScript, type ScriptStep } from '../../fixtures/replay/script';
import { mistralValidator } from '../../fixtures/replay/servers/mistral';
import { strictFields } from '../../fixtures/replay/servers/openai';
import { jsonReply, textReply } from '../../fixtures/replay/wire';
import { treeSnapshot } from '../engine/engineKit';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';

const repo = resolve(__dirname, '../../../..');
const cli = join(repo, 'dist/cli.js');
const KEY = 'sk-cli-replay-key-9f8e7d6c';
const SUGGESTION = 'read src/greet.ts and say what it exports';
const BASE = { id: 'chatcmpl-cli', object: 'chat.completion.chunk', created: 1752000000, model: 'm' };
const TURNS: Record<string, ScriptStep[]> = { [SUGGESTION]: [{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] }, { text: 'It exports greet(name).' }] };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  out: Record<string, unknown>;
}

function run(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => {
      let out: Record<string, unknown> = {};
      try {
        out = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        // asserted by the caller through `code` and `stdout`
      }
      done({ code, stdout, stderr, out });
    });
  });
}

const strictOpenAi = strictFields();

describe('headless CLI: speculate against replayed servers', function () {
  this.timeout(30_000);
  let server: ReplayServer;
  let scratch: string;
  let workspace: string;
  let tmp: string;
  let stateDir: string;

  before(function () {
    if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
  });
  beforeEach(async () => {
    server = new ReplayServer();
    await server.start();
    scratch = mkdtempSync(join(tmpdir(), 'cli-replay-'));
    workspace = join(scratch, 'ws');
    tmp = join(scratch, 'tmp');
    stateDir = join(scratch, 'state');
    cpSync(join(repo, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
    mkdirSync(tmp);
  });
  afterEach(async () => {
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function speculate(baseUrl: string, extra: string[] = []): Promise<Run> {
    const before = await treeSnapshot(workspace);
    const result = await run(
      ['speculate', '--workspace', workspace, '--base-url', baseUrl, '--model', 'm', '--suggestion', SUGGESTION, '--api-key', KEY, '--state-dir', stateDir, ...extra],
      // HOME and XDG_STATE_HOME point into the scratch folder: a default state dir would show here.
      { TMPDIR: tmp, HOME: join(scratch, 'home'), XDG_STATE_HOME: join(scratch, 'xdg') },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY), 'the key is never printed');
    assert.deepEqual(await treeSnapshot(workspace), before, 'nothing in the workspace changed');
    const overlays = existsSync(join(tmp, OVERLAY_PARENT)) ? readdirSync(join(tmp, OVERLAY_PARENT)).flatMap((pid) => readdirSync(join(tmp, OVERLAY_PARENT, pid))) : [];
    assert.deepEqual(overlays, [], 'no overlay is left');
    assert.ok(!existsSync(join(scratch, 'home')) && !existsSync(join(scratch, 'xdg')), 'nothing written outside --state-dir');
    const state = existsSync(stateDir) ? readdirSync(stateDir) : [];
    // locks/: the workspace lock's folder, empty once the run is over.
    assert.ok(state.every((name) => name === 'provider-profiles.json' || name === 'locks'), state.join(', '));
    if (state.includes('locks')) assert.deepEqual(readdirSync(join(stateDir, 'locks')), [], 'no lock is left held');
    if (state.includes('provider-profiles.json')) assert.ok(!readFileSync(join(stateDir, 'provider-profiles.json'), 'utf8').includes(KEY));
    return result;
  }

  it('a strict server refusing chat_template_kwargs: the speculation completes, and the next run never sends it', async () => {
    server.serve([strictOpenAi, replayScript(BASE, TURNS)]);
    const first = await speculate(`${server.origin}/v1`);
    assert.equal(first.out.status, 'completed', String(first.out.error));
    assert.deepEqual((first.out.toolCalls as { name: string }[]).map((c) => c.name), ['read_file']);
    assert.equal(server.chatRequests.filter((r) => 'chat_template_kwargs' in (r.body ?? {})).length, 1, 'refused once');
    const learned = JSON.parse(readFileSync(join(stateDir, 'provider-profiles.json'), 'utf8')) as { endpoints: Record<string, { models: Record<string, { thinkingFailed: string[] }> }> };
    assert.ok(learned.endpoints[`${server.origin}/v1`]?.models.m?.thinkingFailed.includes('chat_template_kwargs'), 'remembered for the endpoint');

    server.serve([strictOpenAi, replayScript(BASE, TURNS)]);
    const second = await speculate(`${server.origin}/v1`);
    assert.equal(second.out.status, 'completed');
    assert.ok(server.chatRequests.every((r) => !('chat_template_kwargs' in (r.body ?? {}))), 'the second run sends it nowhere');
  });

  it('a Mistral-style 422 on stream_options: adapted on the first request of the run', async () => {
    server.serve([mistralValidator, replayScript(BASE, TURNS, {}, { usage: { prompt_tokens: 800, completion_tokens: 4, total_tokens: 804 }, usageIn: 'finish-chunk' })]);
    const result = await speculate(`${server.origin}/v1`);
    assert.equal(result.out.status, 'completed', String(result.out.error));
    assert.equal(server.chatRequests.filter((r) => 'stream_options' in (r.body ?? {})).length, 1);
  });

  it('an Azure deployment URL: the api-key header, the deployment path, the api-version query', async () => {
    server.serve([
      (request) => (request.headers['api-key'] === KEY && !request.headers.authorization ? undefined : jsonReply(401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } })),
      (request) => (request.path === '/openai/deployments/gpt4o/chat/completions' && request.query.get('api-version') === '2024-10-21' ? undefined : jsonReply(404, { error: { code: '404', message: 'Resource not found' } })),
      replayScript(BASE, TURNS),
    ]);
    const result = await speculate(`${server.origin}/openai/deployments/gpt4o?api-version=2024-10-21`);
    assert.equal(result.out.status, 'completed', String(result.out.error));
  });

  it('errors of every shape end the run as failed with the server\'s own words', async function () {
    // Five CLI runs, the 502 with its real retry backoff: slow on a busy machine, not a timing check.
    this.timeout(120_000);
    const shapes: [string, ReplayRule, RegExp][] = [
      ['vLLM < 0.10.1', () => jsonReply(400, { object: 'error', message: "This model's maximum context length is 8192 tokens.", type: 'BadRequestError', param: null, code: 400 }), /maximum context length is 8192 tokens/],
      ['Mistral detail', () => jsonReply(422, { object: 'error', message: { detail: [{ type: 'missing', loc: ['body', 'messages'], msg: 'Field required' }] }, type: 'invalid_request_error', param: null, code: null }), /body\.messages: Field required/],
      ['Gemini array', () => jsonReply(400, [{ error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } }]), /API key not valid/],
      ['nginx 502', () => textReply(502, '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>'), /502 Bad Gateway \(an HTML page/],
      ['llama.cpp --jinja', () => jsonReply(500, { error: { code: 500, message: 'tools param requires --jinja flag', type: 'server_error' } }), /--jinja/],
    ];
    for (const [name, rule, words] of shapes) {
      server.serve([rule]);
      const result = await speculate(`${server.origin}/v1`);
      assert.equal(result.out.status, 'failed', name);
      assert.match(String(result.out.error), words, name);
      assert.doesNotMatch(String(result.out.error), /no body|status code/, `${name}: not the bare status`);
    }
  });

  it('an answer cut at the output limit twice (its one retry cut too) fails the speculation: no messages to inject, nothing written', async () => {
    server.serve([replayScript(BASE, { [SUGGESTION]: [{ toolCalls: [{ name: 'write_file', arguments: '{"file_path":"src/x.ts","content":"expo' }], finishReason: 'length' }, { toolCalls: [{ name: 'write_file', arguments: '{"file_path":"src/x.ts","content":"expo' }], finishReason: 'length' }] })]);
    const result = await speculate(`${server.origin}/v1`, ['--approval-mode', 'yolo']);
    assert.equal(result.out.status, 'failed');
    assert.match(String(result.out.error), /output limit \(finish_reason "length"\)/);
    assert.deepEqual(result.out.filesWritten, []);
  });
});
