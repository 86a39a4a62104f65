// MCP servers from npm, for real: server-everything over stdio, Streamable HTTP and SSE,
// server-filesystem over stdio on a temp folder, and fixtures that hang, send garbage or do not exist.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseMcpConfig, type McpServerConfig } from '../../../src/core/mcp/config';
import { McpManager } from '../../../src/core/mcp/mcpManager';
import type { Tool } from '../../../src/core/tools/types';
import type { WorkspaceFs } from '../../../src/core/fs/workspaceFs';

const repo = resolve(__dirname, '../../../..');
const everything = join(repo, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const filesystem = join(repo, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const fixture = (name: string) => join(repo, 'out/test/fixtures/mcp', name);

function servers(map: Record<string, unknown>): McpServerConfig[] {
  const parsed = parseMcpConfig({ servers: map }, 'test');
  assert.deepEqual(parsed.errors, []);
  return parsed.servers;
}

async function call(tool: Tool | undefined, args: Record<string, unknown>) {
  assert.ok(tool, 'the tool is offered');
  return tool.execute(args, { fs: {} as WorkspaceFs });
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}

/** Starts server-everything in one of its network modes and waits until it listens. */
async function startNetworkServer(mode: 'streamableHttp' | 'sse'): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [everything, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((done, fail) => {
    let text = '';
    child.stderr!.on('data', (chunk) => {
      text += chunk;
      if (/listening|running/i.test(text)) done();
    });
    child.on('exit', (code) => fail(new Error(`server-everything ${mode} exited ${code}: ${text}`)));
  });
  return { child, port };
}

describe('MCP servers (real, from npm)', function () {
  this.timeout(60_000);
  let manager: McpManager | undefined;
  const logged: string[] = [];
  const open = (options: ConstructorParameters<typeof McpManager>[0]['timings'] = {}, untrustedRoots?: readonly string[]) => {
    manager = new McpManager({ log: (line) => logged.push(line), timings: { connectTimeoutMs: 15_000, restartDelayMs: 100, ...options }, ...(untrustedRoots ? { untrustedRoots } : {}) });
    return manager;
  };
  afterEach(async () => {
    await manager?.dispose();
    manager = undefined;
    logged.length = 0;
  });

  it('lists server-everything tools over stdio as mcp__everything__* and answers echo', async () => {
    const mcp = open();
    await mcp.setServers(servers({ everything: { command: process.execPath, args: [everything, 'stdio'] } }));
    assert.equal(mcp.tools().length, 0, 'nothing starts before it is used');
    assert.equal(mcp.snapshot().servers[0].state, 'idle');
    await mcp.prepare();
    const names = mcp.tools().map((t) => t.name);
    assert.ok(names.includes('mcp__everything__echo'), names.join(', '));
    assert.ok(names.includes('mcp__everything__get-sum'), names.join(', '));
    const echo = mcp.tools().find((t) => t.name === 'mcp__everything__echo')!;
    assert.equal(echo.kind, 'mcp');
    assert.deepEqual({ readOnly: echo.mcp?.readOnlyHint, openWorld: echo.mcp?.openWorldHint }, { readOnly: true, openWorld: false });
    assert.equal(echo.definition.function.parameters.type, 'object');
    assert.equal(echo.definition.function.parameters.properties?.message?.type, 'string');
    assert.equal(JSON.stringify(echo.definition).includes('$schema'), false);
    const result = await call(echo, { message: 'hello from the test' });
    assert.deepEqual(result, { ok: true, output: 'Echo: hello from the test' });
    const sum = await call(mcp.tools().find((t) => t.name === 'mcp__everything__get-sum'), { a: 2, b: 40 });
    assert.match(sum.output, /42/);
    assert.equal(mcp.snapshot().servers[0].state, 'running');
  });

  it('passes the tiny image of server-everything on as a described part, not as bytes', async () => {
    const mcp = open();
    await mcp.setServers(servers({ everything: { command: process.execPath, args: [everything, 'stdio'] } }));
    await mcp.prepare();
    const result = await call(mcp.tools().find((t) => t.name === 'mcp__everything__get-tiny-image'), {});
    assert.equal(result.ok, true);
    assert.match(result.output, /\[image: image\/png, [\d.]+ (bytes|kB) — not shown/);
    assert.ok(result.output.length < 2000, 'no base64 reaches the model');
  });

  it('cuts a huge result with a note saying how much was left out', async () => {
    const mcp = open();
    await mcp.setServers(servers({ everything: { command: process.execPath, args: [everything, 'stdio'] } }));
    await mcp.prepare();
    const huge = 'x'.repeat(300_000);
    const result = await call(mcp.tools().find((t) => t.name === 'mcp__everything__echo'), { message: huge });
    assert.equal(result.ok, true);
    assert.ok(result.output.length < 60_000, `cut to ${result.output.length}`);
    assert.match(result.output, /characters of the tool's result were left out \(it returned 300006\)/);
    assert.ok(result.output.startsWith('Echo: xxx'));
  });

  it('restarts a server whose process is killed, and the next call is answered', async () => {
    const mcp = open();
    await mcp.setServers(servers({ everything: { command: process.execPath, args: [everything, 'stdio'] } }));
    await mcp.prepare();
    const connection = mcp.connection('everything')!;
    const firstPid = connection.pid;
    assert.ok(firstPid, 'the child has a pid');
    process.kill(firstPid, 'SIGKILL');
    await until(() => connection.state === 'restarting', 'the crash to be seen');
    const during = await call(mcp.tools().find((t) => t.name === 'mcp__everything__echo'), { message: 'too soon' });
    assert.equal(during.ok, false);
    assert.match(during.output, /restarting/);
    await until(() => connection.state === 'running', 'the restart');
    assert.notEqual(connection.pid, firstPid);
    assert.ok(logged.some((line) => /\[everything\] the server stopped/.test(line)), logged.join('\n'));
    const after = await call(mcp.tools().find((t) => t.name === 'mcp__everything__echo'), { message: 'back again' });
    assert.deepEqual(after, { ok: true, output: 'Echo: back again' });
  });

  it('says a server whose program does not exist failed, and gives up after its bounded retries', async () => {
    const mcp = open({ maxRestarts: 2, restartDelayMs: 20 });
    await mcp.setServers(servers({ ghost: { command: '/nonexistent/mcp-server-ghost', args: ['--stdio'] } }));
    await mcp.prepare();
    await until(() => mcp.snapshot().servers[0].state === 'failed', 'the retries to end', 10_000);
    const view = mcp.snapshot().servers[0];
    assert.match(view.error ?? '', /ghost: could not start `\/nonexistent\/mcp-server-ghost --stdio`/);
    assert.match(view.error ?? '', /gave up after 3 tries \(use Restart to try again\)/);
    assert.equal(mcp.tools().length, 0);
  });

  it('times out a server that never answers initialize, naming the time limit', async () => {
    const mcp = open({ connectTimeoutMs: 700, maxRestarts: 0 });
    await mcp.setServers(servers({ silent: { command: process.execPath, args: [fixture('silentServer.js')] } }));
    const started = Date.now();
    await mcp.prepare();
    assert.ok(Date.now() - started < 10_000);
    const view = mcp.snapshot().servers[0];
    assert.equal(view.state, 'failed');
    assert.match(view.error ?? '', /did not complete the MCP handshake within 1 s/);
    assert.ok(logged.some((line) => line === '[silent] silent server: listening and never answering'), `stderr reaches the log: ${logged.join('\n')}`);
  });

  it('reports a server that writes garbage instead of JSON-RPC as a malformed message', async () => {
    const mcp = open({ connectTimeoutMs: 1500, maxRestarts: 0 });
    await mcp.setServers(servers({ garbage: { command: process.execPath, args: [fixture('garbageServer.js')] } }));
    await mcp.prepare();
    const view = mcp.snapshot().servers[0];
    assert.equal(view.state, 'failed');
    assert.match(view.error ?? '', /did not complete the MCP handshake .*it sent: a malformed message/);
  });

  it('talks Streamable HTTP to server-everything', async () => {
    const { child, port } = await startNetworkServer('streamableHttp');
    try {
      const mcp = open();
      await mcp.setServers(servers({ web: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } }));
      await mcp.prepare();
      assert.equal(mcp.snapshot().servers[0].state, 'running', mcp.snapshot().servers[0].error);
      const result = await call(mcp.tools().find((t) => t.name === 'mcp__web__echo'), { message: 'over http' });
      assert.deepEqual(result, { ok: true, output: 'Echo: over http' });
    } finally {
      child.kill();
    }
  });

  it('falls back to SSE for a server that speaks only the older transport', async () => {
    const { child, port } = await startNetworkServer('sse');
    try {
      const mcp = open();
      await mcp.setServers(servers({ old: { type: 'http', url: `http://127.0.0.1:${port}/sse` } }));
      await mcp.prepare();
      assert.equal(mcp.snapshot().servers[0].state, 'running', mcp.snapshot().servers[0].error);
      assert.ok(logged.some((line) => /trying the older SSE transport/.test(line)), logged.join('\n'));
      const result = await call(mcp.tools().find((t) => t.name === 'mcp__old__echo'), { message: 'over sse' });
      assert.deepEqual(result, { ok: true, output: 'Echo: over sse' });
    } finally {
      child.kill();
    }
  });

  it('uses server-filesystem on a temp folder: reads a file, and a refused path is a failed call', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'mcp-fs-')));
    try {
      await writeFile(join(dir, 'notes.txt'), 'remember the milk\n');
      const mcp = open();
      await mcp.setServers(servers({ files: { command: process.execPath, args: [filesystem, dir] } }));
      await mcp.prepare();
      const names = mcp.tools().map((t) => t.name);
      assert.ok(names.includes('mcp__files__read_text_file') && names.includes('mcp__files__write_file'), names.join(', '));
      const write = mcp.tools().find((t) => t.name === 'mcp__files__write_file')!;
      assert.equal(write.mcp?.readOnlyHint, false);
      const read = await call(mcp.tools().find((t) => t.name === 'mcp__files__read_text_file'), { path: join(dir, 'notes.txt') });
      assert.deepEqual(read, { ok: true, output: 'remember the milk\n' });
      const refused = await call(mcp.tools().find((t) => t.name === 'mcp__files__read_text_file'), { path: '/etc/passwd' });
      assert.equal(refused.ok, false, 'isError is a failure');
      assert.match(refused.output, /denied|outside|not allowed/i);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a changed entry (runAhead switched on) gives fresh tools that call the new server', async () => {
    const mcp = open();
    const entry = { command: process.execPath, args: [everything, 'stdio'] };
    await mcp.setServers(servers({ everything: entry }));
    await mcp.prepare();
    const before = mcp.tools().find((t) => t.name === 'mcp__everything__echo')!;
    assert.equal(before.mcp?.runAhead, false);
    await mcp.setServers(servers({ everything: { ...entry, speculate: { runAhead: true } } }));
    await mcp.prepare();
    const after = mcp.tools().find((t) => t.name === 'mcp__everything__echo')!;
    assert.equal(after.mcp?.runAhead, true, 'the gate sees the new setting');
    assert.deepEqual(await call(after, { message: 'new server' }), { ok: true, output: 'Echo: new server' });
  });

  it('never starts a server command that only a workspace PATH entry supplies (a rigged repository)', async () => {
    // A repository ships bin/fake-mcp and a PATH that lists it first (as a dev container, a direnv
    // hook or a terminal in the folder would): the command name must not resolve into the workspace.
    const workspace = await realpath(await mkdtemp(join(tmpdir(), 'speculate-mcp-path-')));
    const marker = join(workspace, 'ran-from-the-workspace');
    await mkdir(join(workspace, 'bin'));
    await writeFile(join(workspace, 'bin', 'fake-mcp'), `#!/bin/sh\necho pwned > '${marker}'\n`, { mode: 0o755 });
    const savedPath = process.env.PATH;
    process.env.PATH = `${join(workspace, 'bin')}:${savedPath ?? ''}`;
    try {
      const mcp = open({ connectTimeoutMs: 2000, maxRestarts: 0 }, [workspace]);
      await mcp.setServers(servers({ rigged: { command: 'fake-mcp', args: [] } }));
      await mcp.prepare();
      assert.equal(mcp.snapshot().servers[0].state, 'failed');
      assert.match(mcp.snapshot().servers[0].error ?? '', /could not start `fake-mcp`/);
      assert.equal(existsSync(marker), false, 'the workspace program did not run');
      await mcp.dispose();

      // Control: the same PATH without the workspace named as untrusted does run it, so the
      // refusal above is the PATH filter's doing, not a broken script.
      const trusting = open({ connectTimeoutMs: 2000, maxRestarts: 0 });
      await trusting.setServers(servers({ rigged: { command: 'fake-mcp', args: [] } }));
      await trusting.prepare();
      await until(() => existsSync(marker), 'the control run to write its marker', 5000);
    } finally {
      process.env.PATH = savedPath;
      await rm(workspace, { recursive: true, force: true });
    }
  });

  it('stops every server on dispose', async () => {
    const mcp = open();
    await mcp.setServers(servers({ a: { command: process.execPath, args: [everything, 'stdio'] }, b: { command: process.execPath, args: [everything, 'stdio'] } }));
    await mcp.prepare();
    const pids = ['a', 'b'].map((name) => mcp.connection(name)!.pid!);
    await mcp.dispose();
    manager = undefined;
    for (const pid of pids) {
      await until(() => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, `process ${pid} to end`, 10_000);
    }
  });
});
