// `--mcp-config` on `chat` and `speculate` (HEADLESS-CLI.md), against the real server-everything
// from npm over stdio and a scripted model: the model's call of mcp__everything__echo runs on the
// server, its answer reaches the model, the servers are gone when the CLI exits, a bad file is exit 2.
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { cli, repo, runCli } from './cliKit';

const everything = join(repo, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

interface ChatResult {
  status: string;
  text: string | null;
  messages: Array<Record<string, unknown>>;
  toolCalls: Array<{ name: string; args: Record<string, unknown>; outcome: string }>;
  error: string | null;
}

/** Processes whose environment carries `mark` (the servers one run started), read from /proc. */
function processesMarked(mark: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').includes(mark)) found.push(Number(pid));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

describe('headless CLI: --mcp-config', function () {
  this.timeout(60_000);
  let model: ScriptedServer;
  let scratch: string;
  let workspace: string;
  let tmp: string;
  let mark: string;
  before(function () {
    if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
  });
  beforeEach(async () => {
    model = new ScriptedServer();
    await model.start();
    scratch = mkdtempSync(join(tmpdir(), 'cli-mcp-'));
    workspace = join(scratch, 'ws');
    tmp = join(scratch, 'tmp');
    cpSync(join(repo, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
    mkdirSync(tmp);
    mark = `SPECULATE_MCP_CLI_TEST=${randomUUID()}`;
  });
  afterEach(async () => {
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** An mcp.json naming server-everything over stdio (plus `speculate` when given), tagged with this test's mark. */
  function config(extra: Record<string, unknown> = {}): string {
    const file = join(scratch, 'mcp.json');
    const [key, value] = mark.split('=');
    writeFileSync(file, JSON.stringify({ servers: { everything: { command: process.execPath, args: [everything, 'stdio'], env: { [key]: value }, ...extra } } }));
    return file;
  }

  const base = (_command: 'chat' | 'speculate') => ['--workspace', workspace, '--base-url', model.baseUrl, '--model', 'scripted', '--state-dir', join(scratch, 'state')];

  it('chat: the model calls mcp__everything__echo, the server answers, and its answer reaches the model', async () => {
    model.setScript([
      { toolCalls: [{ id: 'call_echo', name: 'mcp__everything__echo', arguments: { message: 'ping from the model' } }] },
      { text: 'The server said it back.' },
    ]);
    const out = await runCli(['chat', ...base('chat'), '--prompt', 'Echo something', '--approve', 'allow', '--mcp-config', config()], { TMPDIR: tmp });
    assert.equal(out.code, 0, out.stderr);
    const result = JSON.parse(out.stdout) as ChatResult;
    assert.equal(result.status, 'completed', out.stderr);
    assert.deepEqual(result.toolCalls, [{ name: 'mcp__everything__echo', args: { message: 'ping from the model' }, outcome: 'ran' }]);
    // The server's tools were offered under their mcp__ names, after the built-ins.
    const offered = (model.chatRequests[0].body!.tools ?? []).map((t) => (t.function as { name: string }).name);
    assert.ok(offered.includes('mcp__everything__echo'), offered.join(', '));
    assert.ok(offered.indexOf('read_file') < offered.indexOf('mcp__everything__echo'));
    // The second request carries the server's own answer as the tool result.
    const second = model.chatRequests[1].body!.messages ?? [];
    const toolResult = second.find((m) => m.role === 'tool' && m.tool_call_id === 'call_echo');
    assert.ok(toolResult, 'the tool result was sent to the model');
    assert.match(String(toolResult.content), /Echo: ping from the model/);
    assert.equal(result.text, 'The server said it back.');
    assert.deepEqual(processesMarked(mark), [], 'the server was stopped before the CLI exited');
  });

  it('chat in default mode asks about an MCP call: --approve deny keeps it from running', async () => {
    model.setScript([
      { toolCalls: [{ id: 'call_echo', name: 'mcp__everything__echo', arguments: { message: 'not sent' } }] },
      { text: 'Fine.' },
    ]);
    const out = await runCli(['chat', ...base('chat'), '--prompt', 'Echo something', '--mcp-config', config()], { TMPDIR: tmp });
    assert.equal(out.code, 0, out.stderr);
    const result = JSON.parse(out.stdout) as ChatResult;
    assert.deepEqual(result.toolCalls.map((c) => [c.name, c.outcome]), [['mcp__everything__echo', 'denied']]);
    assert.doesNotMatch(String(result.messages[2].content), /Echo: not sent/);
    assert.match(String(result.messages[2].content), /declined/);
  });

  it('speculate: an MCP call is a boundary unless the server may run ahead and the tool is read-only and closed-world', async () => {
    const speculate = async (configFile: string, tool: string, args: Record<string, unknown>) => {
      model.setScript([{ toolCalls: [{ name: tool, arguments: args }] }, { text: 'Done.' }, { text: 'Done.' }]);
      const out = await runCli(['speculate', ...base('speculate'), '--suggestion', 'echo hi', '--approval-mode', 'auto-edit', '--mcp-config', configFile], { TMPDIR: tmp });
      assert.equal(out.code, 0, out.stderr);
      return JSON.parse(out.stdout) as { status: string; toolCalls: Array<{ name: string; decision: string; executed: boolean }>; messages: Array<Record<string, unknown>> };
    };
    const plain = await speculate(config(), 'mcp__everything__echo', { message: 'hi' });
    assert.equal(plain.status, 'boundary');
    assert.deepEqual(plain.toolCalls.map((c) => [c.name, c.decision, c.executed]), [['mcp__everything__echo', 'boundary', false]]);

    const ahead = await speculate(config({ speculate: { runAhead: true } }), 'mcp__everything__echo', { message: 'hi' });
    assert.equal(ahead.status, 'completed');
    assert.deepEqual(ahead.toolCalls.map((c) => [c.name, c.decision, c.executed]), [['mcp__everything__echo', 'allow', true]]);
    assert.ok(ahead.messages.some((m) => m.role === 'tool' && /Echo: hi/.test(String(m.content))), 'the echo ran ahead');

    // gzip-file-as-resource declares an open world (and writes): a boundary even on a run-ahead server.
    const open = await speculate(config({ speculate: { runAhead: true } }), 'mcp__everything__gzip-file-as-resource', { name: 'x.gz', data: 'https://example.com/' });
    assert.equal(open.status, 'boundary');
    assert.deepEqual(open.toolCalls.map((c) => [c.decision, c.executed]), [['boundary', false]]);
    assert.deepEqual(processesMarked(mark), [], 'the server was stopped before the CLI exited');
  });

  it('a bad --mcp-config is exit 2 with one line naming the file, and nothing on stdout', async () => {
    const cases: Array<[string, string | null, RegExp]> = [
      ['missing.json', null, /cannot be read/],
      ['garbage.json', '{"servers": {', /not valid JSON/],
      ['noservers.json', '{"mcpServers": {}}', /no "servers" object/],
      ['badentry.json', '{"servers": {"x": {"args": ["a"]}}}', /server "x"/],
      ['badtype.json', '{"servers": {"x": {"type": "carrier-pigeon", "url": "http://a"}}}', /server "x"/],
    ];
    for (const [name, text, expected] of cases) {
      const file = join(scratch, name);
      if (text !== null) writeFileSync(file, text);
      for (const command of ['chat', 'speculate'] as const) {
        const extra = command === 'chat' ? ['--prompt', 'x'] : ['--suggestion', 'x'];
        const out = await runCli([command, ...base(command), ...extra, '--mcp-config', file], { TMPDIR: tmp });
        assert.equal(out.code, 2, `${command} ${name}: ${out.stderr}`);
        assert.equal(out.stdout, '');
        assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
        assert.match(out.stderr, expected);
        assert.ok(out.stderr.includes(file), out.stderr);
      }
    }
    assert.equal(model.chatRequests.length, 0, 'no turn was run with a broken server list');
  });

  it('a server that cannot start is an error on stderr naming it, and the turn still runs without its tools', async () => {
    const file = join(scratch, 'mcp.json');
    writeFileSync(file, JSON.stringify({ servers: { ghost: { command: join(scratch, 'no-such-program') } } }));
    model.setScript([{ text: 'No tools needed.' }]);
    const out = await runCli(['chat', ...base('chat'), '--prompt', 'hi', '--mcp-config', file], { TMPDIR: tmp });
    assert.equal(out.code, 0, out.stderr);
    assert.equal((JSON.parse(out.stdout) as ChatResult).status, 'completed');
    assert.match(out.stderr, /ghost/);
    const offered = (model.chatRequests[0].body!.tools ?? []).map((t) => (t.function as { name: string }).name);
    assert.ok(!offered.some((n) => n.startsWith('mcp__')), offered.join(', '));
  });
});
