// The MCP servers section of the chat view: hidden with no servers, each server's state in words
// (a crash counts down to its restart), its exact command, tools and error; Restart and Allow by keyboard.
import * as assert from 'node:assert/strict';
import type { McpServersView } from '../../src/shared/protocol';
import { useChatPages, type ChatPage } from './harness';

const VIEW: McpServersView = {
  servers: [
    {
      name: 'everything',
      source: 'settings (speculate.mcpServers)',
      fromWorkspace: false,
      transport: 'stdio',
      target: 'node /opt/everything/index.js stdio',
      state: 'running',
      runAhead: true,
      tools: [
        { name: 'echo', description: 'Echoes back the input', readOnly: true },
        { name: 'get-sum', description: 'Returns the sum of two numbers', readOnly: false },
      ],
    },
    {
      name: 'rigged',
      source: 'demo/.vscode/mcp.json',
      fromWorkspace: true,
      transport: 'stdio',
      target: 'node tools/mcp.js',
      state: 'awaiting-approval',
      runAhead: false,
      tools: [],
      changed: true,
      detail: 'Command: node tools/mcp.js\nEnvironment: NODE_OPTIONS=--require ./x.js\nDefined in: demo/.vscode/mcp.json',
      definition: 'a'.repeat(64),
    },
  ],
  notes: ['settings (speculate.mcpServers): server "bad" needs "command": the program to run; it is not started.'],
};

describe('chat webview: MCP servers', function () {
  this.timeout(30_000);
  const pages = useChatPages({ width: 300, height: 640 });
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  it('is hidden with no servers, and lists each server, its state, command and tools when there are', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'mcpServers', view: { servers: [], notes: [] } });
    assert.equal(await page.locator('section.mcp-servers').isHidden(), true);
    await chat.send({ type: 'mcpServers', view: VIEW });
    const section = page.getByRole('region', { name: 'MCP servers' });
    assert.equal(await section.locator('.mcp-summary').innerText(), 'MCP servers (2) · 1 running · 1 waiting for approval');
    await section.locator('.mcp-summary').click();
    const everything = section.locator('.mcp-server[data-server="everything"]');
    assert.equal(await everything.locator('.mcp-server-state').innerText(), 'running');
    assert.equal(await everything.locator('.mcp-target').innerText(), 'node /opt/everything/index.js stdio');
    await everything.locator('.mcp-tools > summary').click();
    assert.deepEqual(await everything.locator('.mcp-tool code').allInnerTexts(), ['echo', 'get-sum']);
    const rigged = section.locator('.mcp-server[data-server="rigged"]');
    assert.equal(await rigged.locator('.mcp-server-state').innerText(), 'waiting for your approval');
    assert.match(await rigged.locator('.mcp-why').innerText(), /definition changed since you allowed it/);
    assert.equal(await rigged.locator('.mcp-restart').count(), 0, 'a server waiting for approval has nothing to restart');
    assert.match(await section.locator('.mcp-note').innerText(), /server "bad" needs "command"/);
  });

  it('Restart and Allow are reached by keyboard and name their server; Allow sends where it is defined', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'mcpServers', view: VIEW });
    await page.locator('.mcp-summary').focus();
    await page.keyboard.press('Enter');
    const restart = page.getByRole('button', { name: 'Restart the MCP server everything' });
    await restart.focus();
    await chat.clearPosted();
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.waitForPosted('mcpAction'), { type: 'mcpAction', action: 'restart', server: 'everything', source: 'settings (speculate.mcpServers)' });
    // A state change rebuilds the list; the focused button keeps the focus.
    await chat.send({ type: 'mcpServers', view: { ...VIEW, servers: [{ ...VIEW.servers[0], state: 'starting' }, VIEW.servers[1]] } });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Restart the MCP server everything');
    // Allow… first shows all of what it runs (env too) and asks again; Cancel sends nothing.
    await chat.clearPosted();
    await page.getByRole('button', { name: 'Allow the MCP server rigged from demo/.vscode/mcp.json to run node tools/mcp.js' }).press('Enter');
    const confirm = page.getByRole('group', { name: 'Run the MCP server "rigged" as you, with your files and network?' });
    assert.equal(await confirm.locator('.mcp-confirm-detail').innerText(), 'Command: node tools/mcp.js\nEnvironment: NODE_OPTIONS=--require ./x.js\nDefined in: demo/.vscode/mcp.json');
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'mcp-confirm-detail', 'the focus goes to what it runs, to be read first');
    await confirm.getByRole('button', { name: 'Cancel' }).press('Enter');
    assert.equal(await confirm.count(), 0);
    assert.deepEqual(await chat.posted(), []);
    await page.getByRole('button', { name: /^Allow the MCP server rigged/ }).press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    assert.deepEqual(await chat.waitForPosted('mcpAction'), { type: 'mcpAction', action: 'allow', server: 'rigged', source: 'demo/.vscode/mcp.json', definition: 'a'.repeat(64) });
  });

  it('a crashed server counts down to its restart and says it once; its error is shown', async () => {
    await chat.init();
    const { page } = chat;
    const restartAt = await page.evaluate(() => Date.now() + 3_000);
    await chat.send({ type: 'mcpServers', view: { servers: [{ ...VIEW.servers[0], state: 'restarting', restartAt, error: 'the server stopped', tools: [] }], notes: [] } });
    await page.locator('.mcp-summary').click();
    const state = page.locator('.mcp-server[data-server="everything"] .mcp-server-state');
    assert.match(await state.innerText(), /^crashed, restarting in [23] s$/);
    await page.waitForFunction(() => /restarting in 1 s|restarting now/.test(document.querySelector('.mcp-server-state')?.textContent ?? ''), undefined, { timeout: 5_000 });
    assert.equal(await page.locator('.mcp-server[data-server="everything"] .mcp-error').innerText(), 'the server stopped');
    const said = await page.evaluate(() => [...document.getElementById('announcer')!.children].map((c) => c.textContent ?? ''));
    assert.deepEqual(said.filter((line) => line.includes('crashed')), ['MCP server everything crashed; it restarts by itself.']);
  });
});
