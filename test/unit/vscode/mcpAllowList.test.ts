// The allow-list of a workspace's MCP servers, as an attacker's repository meets it: nothing its
// .vscode/mcp.json names runs until the user allowed that exact definition, a changed one asks again,
// Restricted Mode offers none, and a tampered store allows nothing. With real servers where one runs.
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpManager, parseMcpConfigText, parseMcpServers, type McpConfigParse } from '../../../src/core/mcp';
import { definitionHash, MCP_ALLOWED_KEY, planMcpServers, serverDetail, serverTarget, USER_MCP_SOURCE, WorkspaceServerAllowList, type AllowListStore } from '../../../src/vscode/mcp/mcpAllowList';
import { mcpServersView } from '../../../src/vscode/mcp/mcpServersView';

/** globalState as VS Code keeps it: JSON in, JSON out. */
class MemoryStore implements AllowListStore {
  readonly data = new Map<string, string>();
  get(key: string): unknown {
    const text = this.data.get(key);
    return text === undefined ? undefined : JSON.parse(text);
  }
  update(key: string, value: unknown): Promise<void> {
    this.data.set(key, JSON.stringify(value));
    return Promise.resolve();
  }
}

const WS = 'file:///home/user/repo';
const OTHER_WS = 'file:///home/user/other';
const NONE: McpConfigParse = { servers: [], errors: [] };

function workspaceFile(servers: Record<string, unknown>): McpConfigParse {
  return parseMcpConfigText(JSON.stringify({ servers }), 'repo/.vscode/mcp.json', { workspaceFolder: '/home/user/repo' });
}

function plan(store: AllowListStore, file: McpConfigParse, options: { trusted?: boolean; user?: McpConfigParse; workspace?: string } = {}) {
  return planMcpServers({ user: options.user ?? NONE, workspaces: [{ workspace: options.workspace ?? WS, parse: file }], trusted: options.trusted ?? true, allowList: new WorkspaceServerAllowList(store), untrustedCwd: '/home/user' });
}

describe('MCP servers of a workspace: the allow-list', () => {
  const rigged = { command: 'node', args: ['tools/mcp.js'], env: { TOKEN: 'sk-secret-canary' } };

  it('runs none of a workspace\'s servers until the user allows each one by its definition', async () => {
    const store = new MemoryStore();
    const file = workspaceFile({ rigged, other: { type: 'http', url: 'https://mcp.example.com/mcp' } });
    const before = plan(store, file);
    assert.deepEqual(before.servers, []);
    assert.deepEqual(before.pending.map((p) => [p.config.name, p.changed]), [['rigged', false], ['other', false]]);

    await new WorkspaceServerAllowList(store).allow(WS, file.servers[0]);
    // A new list over the same store (a reloaded window) remembers it.
    const after = plan(store, file);
    assert.deepEqual(after.servers.map((s) => s.name), ['rigged']);
    assert.deepEqual(after.pending.map((p) => p.config.name), ['other'], 'allowing one server allows no other');
  });

  it('asks again when the repository changes the command, an argument, the environment, the folder, the URL or run-ahead', async () => {
    const store = new MemoryStore();
    const allowList = new WorkspaceServerAllowList(store);
    await allowList.allow(WS, workspaceFile({ rigged }).servers[0]);
    await allowList.allow(WS, workspaceFile({ web: { type: 'http', url: 'https://mcp.example.com/mcp' } }).servers[0]);
    const changes: Record<string, unknown>[] = [
      { rigged: { ...rigged, command: 'bash' } },
      { rigged: { ...rigged, args: ['tools/mcp.js', '--evil'] } },
      { rigged: { ...rigged, env: { ...rigged.env, NODE_OPTIONS: '--require ./steal.js' } } },
      { rigged: { ...rigged, cwd: '/tmp' } },
      // Marking it "may run ahead" would let its calls run without the user: that asks again too.
      { rigged: { ...rigged, speculate: { runAhead: true } } },
      { web: { type: 'http', url: 'https://attacker.example.com/mcp' } },
      { web: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } } },
    ];
    for (const servers of changes) {
      const result = plan(store, workspaceFile(servers));
      assert.deepEqual(result.servers, [], JSON.stringify(servers));
      assert.equal(result.pending.length, 1);
      assert.equal(result.pending[0].changed, true, 'the list says it changed since it was allowed');
    }
    // The unchanged definitions still run.
    assert.deepEqual(plan(store, workspaceFile({ rigged, web: { type: 'http', url: 'https://mcp.example.com/mcp' } })).servers.map((s) => s.name), ['rigged', 'web']);
  });

  it('allowing the changed definition replaces the old one: the old one is not allowed any more', async () => {
    const store = new MemoryStore();
    const allowList = new WorkspaceServerAllowList(store);
    const first = workspaceFile({ rigged }).servers[0];
    const second = workspaceFile({ rigged: { ...rigged, args: ['tools/v2.js'] } }).servers[0];
    await allowList.allow(WS, first);
    await allowList.allow(WS, second);
    assert.equal(allowList.status(WS, second), 'allowed');
    assert.equal(allowList.status(WS, first), 'changed');
  });

  it('an allowed server of one folder is not allowed in another folder with the same file', async () => {
    const store = new MemoryStore();
    const file = workspaceFile({ rigged });
    await new WorkspaceServerAllowList(store).allow(WS, file.servers[0]);
    const elsewhere = plan(store, file, { workspace: OTHER_WS });
    assert.deepEqual(elsewhere.servers, []);
    assert.equal(elsewhere.pending[0].changed, false);
  });

  it('keeps only a hash of the definition: a secret in its env is not written to the store', async () => {
    const store = new MemoryStore();
    const server = workspaceFile({ rigged }).servers[0];
    await new WorkspaceServerAllowList(store).allow(WS, server);
    const stored = store.data.get(MCP_ALLOWED_KEY) ?? '';
    assert.doesNotMatch(stored, /sk-secret-canary|tools\/mcp\.js/);
    assert.deepEqual(JSON.parse(stored), { [WS]: { rigged: definitionHash(server) } });
  });

  it('a store that is not the expected shape allows nothing', () => {
    const server = workspaceFile({ rigged }).servers[0];
    const tampered: unknown[] = ['everything', [WS], { [WS]: 'rigged' }, { [WS]: { rigged: true } }, { [WS]: { rigged: 'not-a-hash' } }, { [WS]: { rigged: definitionHash(server).toUpperCase() } }];
    for (const value of tampered) {
      const store = new MemoryStore();
      store.data.set(MCP_ALLOWED_KEY, JSON.stringify(value));
      assert.equal(new WorkspaceServerAllowList(store).status(WS, server), 'unknown', JSON.stringify(value));
      assert.deepEqual(plan(store, workspaceFile({ rigged })).servers, []);
    }
  });

  it('Restricted Mode offers no workspace server, not even an allowed one, and says why', async () => {
    const store = new MemoryStore();
    const file = workspaceFile({ rigged, broken: { command: 42 } });
    await new WorkspaceServerAllowList(store).allow(WS, file.servers[0]);
    const user = parseMcpServers({ mine: { command: 'npx', args: ['-y', 'my-server'] }, pinned: { command: 'my-server', cwd: '/opt/srv' } }, USER_MCP_SOURCE);
    const result = plan(store, file, { trusted: false, user });
    assert.deepEqual(result.pending, [], 'nothing to allow while untrusted');
    assert.deepEqual(result.blocked.map((s) => s.name), ['rigged']);
    assert.deepEqual(result.errors, [], 'an untrusted file is not even judged');
    // The user's own servers still run, but not in the untrusted folder (npx would read its .npmrc).
    assert.deepEqual(result.servers.map((s) => [s.name, s.type === 'stdio' ? s.cwd : '']), [['mine', '/home/user'], ['pinned', '/opt/srv']]);
    const view = mcpServersView({ servers: [], configErrors: [] }, result, false);
    assert.deepEqual(view.servers.map((s) => [s.name, s.state]), [['rigged', 'blocked']]);
    assert.match(view.notes.join('\n'), /Restricted Mode.*"rigged".*not offered/);
    // Trusted again, the user's server runs in the folder as configured.
    const trusted = plan(store, file, { user });
    const mine = trusted.servers.find((s) => s.name === 'mine');
    assert.equal(mine?.type === 'stdio' ? mine.cwd : 'not found', undefined);
  });

  it('shows the exact command, quoting what a reader could misread, and asks with env and folder in full', () => {
    const [server] = workspaceFile({ rigged: { command: 'node', args: ['-e', "require('x')", ''], env: { NODE_OPTIONS: '--require ./a.js' }, cwd: '${workspaceFolder}/tools' } }).servers;
    assert.equal(serverTarget(server), `node -e 'require('\\''x'\\'')' ''`);
    const detail = serverDetail(server);
    assert.match(detail, /^Command: node -e /);
    assert.match(detail, /Environment: NODE_OPTIONS=--require \.\/a\.js/);
    assert.match(detail, /Folder: \/home\/user\/repo\/tools/);
    assert.match(detail, /Defined in: repo\/\.vscode\/mcp\.json/);
    const [web] = workspaceFile({ web: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer sk-secret' } } }).servers;
    assert.equal(serverTarget(web), 'https://mcp.example.com/mcp (headers: Authorization)', 'header names, never their values');
  });

  it('lists a pending server as waiting for approval, and a changed one as changed', async () => {
    const store = new MemoryStore();
    await new WorkspaceServerAllowList(store).allow(WS, workspaceFile({ rigged }).servers[0]);
    const result = plan(store, workspaceFile({ rigged: { ...rigged, command: 'bash' }, fresh: { command: 'node' } }));
    const view = mcpServersView({ servers: [], configErrors: [] }, result, true);
    assert.deepEqual(
      view.servers.map((s) => ({ name: s.name, state: s.state, changed: s.changed ?? false, fromWorkspace: s.fromWorkspace })),
      [
        { name: 'rigged', state: 'awaiting-approval', changed: true, fromWorkspace: true },
        { name: 'fresh', state: 'awaiting-approval', changed: false, fromWorkspace: true },
      ],
    );
    // What the user confirms is the definition that runs: the row carries its hash for Allow to echo.
    assert.equal(view.servers[0].definition, definitionHash(result.pending[0].config));
    assert.equal(view.servers[0].detail, 'Command: bash tools/mcp.js\nEnvironment: TOKEN=sk-secret-canary\nDefined in: repo/.vscode/mcp.json');
  });
});

describe('MCP servers of a workspace: nothing unallowed starts (real servers)', function () {
  this.timeout(60_000);
  const repo = process.cwd();
  const everything = join(repo, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const markerServer = join(repo, 'out/test/fixtures/mcp/markerServer.js');
  let dir: string;
  let manager: McpManager | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'speculate-mcp-allow-'));
  });
  afterEach(async () => {
    await manager?.dispose();
    manager = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('a turn starts the user\'s server and the allowed one, never the rigged one; allowing it lets the next turn start it', async () => {
    const store = new MemoryStore();
    const marker = join(dir, 'rigged-started');
    const user = parseMcpServers({ everything: { command: process.execPath, args: [everything, 'stdio'] } }, USER_MCP_SOURCE);
    const file = workspaceFile({ rigged: { command: process.execPath, args: [markerServer, marker] } });
    const logs: string[] = [];
    manager = new McpManager({ log: (line) => logs.push(line) });
    const first = plan(store, file, { user });
    await manager.setServers(first.servers, first.errors);
    await manager.prepare();
    assert.ok(manager.tools().some((tool) => tool.name === 'mcp__everything__echo'), 'the user\'s server runs');
    assert.equal(existsSync(marker), false, 'the rigged server never started');
    assert.ok(!manager.tools().some((tool) => tool.name.startsWith('mcp__rigged__')));

    await new WorkspaceServerAllowList(store).allow(WS, first.pending[0].config);
    const second = plan(store, file, { user });
    await manager.setServers(second.servers, second.errors);
    assert.equal(existsSync(marker), false, 'allowing does not start it: the next turn does');
    await manager.prepare();
    assert.equal(existsSync(marker), true);
    assert.ok(manager.tools().some((tool) => tool.name === 'mcp__rigged__echo'));

    // The repository then changes the command: the running server is stopped, the new one waits.
    const marker2 = join(dir, 'changed-started');
    const changed = workspaceFile({ rigged: { command: process.execPath, args: [markerServer, marker2] } });
    const third = plan(store, changed, { user });
    assert.equal(third.pending[0]?.changed, true);
    await manager.setServers(third.servers, third.errors);
    await manager.prepare();
    assert.equal(existsSync(marker2), false, 'the changed definition did not start');
    assert.ok(!manager.tools().some((tool) => tool.name.startsWith('mcp__rigged__')), 'its tools are gone');
  });
});
