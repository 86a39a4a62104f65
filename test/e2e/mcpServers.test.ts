// MCP servers in the real workbench: the user's server-everything (stdio) answers the model's
// mcp__everything__echo after the user allows the call; it is shown crashed and then running again
// (by its backoff, and by Restart); a rigged repository's .vscode/mcp.json server (it writes a marker
// file the moment it starts) and its speculate.mcpServers in workspace settings never start unasked,
// the allowed one starts with the next turn, and a changed command waits for approval again.
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { ScriptedServer, type RecordedRequest, type ScriptedReply } from '../fixtures/scriptedServer';
import { eventually, openChatView, openWorkbench, repoRoot, screenshotFailures, sendMessage, waitIdle, type Workbench } from './workbench';

const everything = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const markerServer = join(repoRoot, 'out/test/fixtures/mcp/markerServer.js');
/** Put into the server's environment, so the test finds its process among everyone's. */
const TAG = `speculate-e2e-mcp-${process.pid}-${Date.now()}`;
const ECHOED = 'hello from the workbench';

/** The model: asked to echo, it calls mcp__everything__echo when offered; given the result, it quotes it. */
function script(request: RecordedRequest): ScriptedReply {
  const messages = request.body?.messages ?? [];
  const last = messages[messages.length - 1] ?? {};
  if (last.role === 'tool') return { text: `The server answered: ${String(last.content)}` };
  const offered = (request.body?.tools ?? []).map((tool) => (tool as { function?: { name?: string } }).function?.name);
  if (JSON.stringify(last.content ?? '').includes('echo')) {
    if (!offered.includes('mcp__everything__echo')) return { text: 'No echo tool was offered.' };
    return { toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: ECHOED } }] };
  }
  return { text: 'Noted.' };
}

/** Pids of live processes whose environment holds `tag` (the servers this test's window started). */
function pidsTagged(tag: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`SPECULATE_E2E_TAG=${tag}`)) found.push(Number(name));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** The Speculate output channel's log file under the server's data folder. */
function outputLog(dataDir: string): string {
  const walk = (dir: string): string | undefined => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        const inner = walk(path);
        if (inner) return inner;
      } else if (name.endsWith('Speculate.log')) return path;
    }
    return undefined;
  };
  const file = walk(dataDir);
  return file ? readFileSync(file, 'utf8') : '';
}

describe('MCP servers in the workbench', function () {
  this.timeout(180_000);
  let model: ScriptedServer;
  let workbench: Workbench;
  let chat: FrameLocator;
  // Outside the workspace: a marker there would show up in the chat's file tools.
  const markerDir = mkdtempSync(join(tmpdir(), 'speculate-e2e-mcp-markers-'));
  const markers = { rigged: join(markerDir, 'rigged-started'), changed: join(markerDir, 'changed-started'), settings: join(markerDir, 'settings-started') };
  screenshotFailures(() => workbench);
  afterEach(function () {
    // What the window logged about its servers, for a failure's report.
    if (this.currentTest?.state === 'failed' && workbench) console.log(outputLog(workbench.dataDir).split('\n').filter((line) => line.includes('MCP')).slice(-30).join('\n'));
  });

  const row = (name: string) => chat.locator(`.mcp-server[data-server="${name}"]`);
  const waitState = (name: string, state: string) => chat.locator(`.mcp-server[data-server="${name}"][data-state="${state}"]`).waitFor({ timeout: 30_000 });

  before(async () => {
    model = new ScriptedServer({ script });
    await model.start();
    workbench = await openWorkbench({
      settings: {
        'speculate.baseUrl': model.baseUrl,
        'speculate.model': 'scripted-demo',
        'speculate.approvalMode': 'default',
        'speculate.suggestions.enabled': false,
        'speculate.mcpServers': { everything: { command: process.execPath, args: [everything, 'stdio'], env: { SPECULATE_E2E_TAG: TAG } } },
      },
      // The repository also tries the user's own setting: it is user-only, so this never runs.
      workspaceSettings: { 'speculate.mcpServers': { sneaky: { command: process.execPath, args: [markerServer, markers.settings] } } },
      // Runs after the settings file is written, before the window opens.
      prepareWorkspace: (workspace) => writeFileSync(join(workspace, '.vscode/mcp.json'), JSON.stringify({ servers: { rigged: { command: process.execPath, args: [markerServer, markers.rigged] } } }, null, 2)),
    });
    chat = await openChatView(workbench);
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
    rmSync(markerDir, { recursive: true, force: true });
  });

  it('lists the user\'s server as not started and the repository\'s as waiting for approval; nothing started', async () => {
    await chat.locator('section.mcp-servers:not([hidden]) .mcp-summary').click();
    await waitState('everything', 'not-started');
    await waitState('rigged', 'awaiting-approval');
    assert.equal(await row('rigged').locator('.mcp-target').innerText(), `${process.execPath} ${markerServer} ${markers.rigged}`);
    assert.equal(await row('sneaky').count(), 0, 'a workspace cannot add a server through speculate.mcpServers');
    assert.deepEqual(pidsTagged(TAG), [], 'servers start lazily, on the first turn');
    assert.equal(existsSync(markers.rigged), false);
    await workbench.screenshot('mcp-servers-list');
  });

  it('a turn starts the server; the model\'s mcp__everything__echo asks first with its arguments, then its answer reaches the model', async () => {
    await sendMessage(chat, 'please echo something through MCP');
    const approval = chat.locator('.approval', { hasText: 'mcp__everything__echo' }).last();
    await approval.waitFor();
    assert.match(await approval.innerText(), new RegExp(ECHOED), 'the call\'s arguments are shown');
    await approval.locator('.approval-actions button[data-decision="allow"]').press('Enter');
    await chat.locator('.assistant-text', { hasText: `The server answered: Echo: ${ECHOED}` }).waitFor({ timeout: 30_000 });
    await waitIdle(chat);
    const toolMessage = model.chatRequests.flatMap((r) => r.body?.messages ?? []).find((m) => m.role === 'tool');
    assert.match(String(toolMessage?.content), new RegExp(`Echo: ${ECHOED}`));
    await waitState('everything', 'running');
    await row('everything').locator('.mcp-tools > summary').click();
    await row('everything').locator('.mcp-tool[data-tool="echo"]').waitFor();
    assert.equal(existsSync(markers.rigged), false, 'the turn did not start the repository\'s server');
    await eventually(() => /MCP \[everything\] Starting default \(STDIO\) server/.test(outputLog(workbench.dataDir)), "the server's stderr in the Speculate output", 20_000);
  });

  it('a crashed server is shown crashed, then running again by itself; Restart starts it afresh', async () => {
    const [pid] = pidsTagged(TAG);
    assert.ok(pid, 'the server runs');
    // Every state the row passes through, recorded in the page (the crash lasts about a second).
    await chat.locator('section.mcp-servers').evaluate((section) => {
      const seen: string[] = [];
      (window as unknown as { __mcpStates: string[] }).__mcpStates = seen;
      new MutationObserver(() => {
        const state = section.querySelector<HTMLElement>('.mcp-server[data-server="everything"]')?.dataset.state;
        if (state && seen[seen.length - 1] !== state) seen.push(state);
      }).observe(section, { subtree: true, childList: true, attributes: true });
    });
    process.kill(pid, 'SIGKILL');
    await eventually(() => pidsTagged(TAG).some((p) => p !== pid), 'the restarted server', 30_000);
    await waitState('everything', 'running');
    const seen = await chat.locator('section.mcp-servers').evaluate(() => (window as unknown as { __mcpStates: string[] }).__mcpStates);
    assert.ok(seen.indexOf('restarting') >= 0 && seen.lastIndexOf('running') > seen.indexOf('restarting'), seen.join(' → '));

    const [second] = pidsTagged(TAG);
    await chat.getByRole('button', { name: 'Restart the MCP server everything' }).press('Enter');
    await eventually(() => pidsTagged(TAG).length === 1 && pidsTagged(TAG)[0] !== second, 'a fresh server after Restart', 30_000);
    await waitState('everything', 'running');
  });

  it('the repository\'s server runs only once allowed, from the next turn; a changed command waits for approval again', async () => {
    await row('rigged').getByRole('button', { name: /^Allow the MCP server rigged/ }).press('Enter');
    const confirm = row('rigged').getByRole('group', { name: /^Run the MCP server "rigged" as you/ });
    assert.equal(await confirm.locator('.mcp-confirm-detail').innerText(), `Command: ${process.execPath} ${markerServer} ${markers.rigged}\nDefined in: workspace/.vscode/mcp.json`);
    await workbench.screenshot('mcp-allow-confirm');
    assert.equal(existsSync(markers.rigged), false);
    await confirm.getByRole('button', { name: 'Allow', exact: true }).press('Enter');
    await waitState('rigged', 'not-started');
    assert.equal(existsSync(markers.rigged), false, 'allowing it does not start it yet');

    await sendMessage(chat, 'hello');
    await eventually(() => existsSync(markers.rigged), 'the allowed server starting with the turn', 30_000);
    await waitIdle(chat);
    await waitState('rigged', 'running');

    writeFileSync(join(workbench.workspace, '.vscode/mcp.json'), JSON.stringify({ servers: { rigged: { command: process.execPath, args: [markerServer, markers.changed] } } }, null, 2));
    await waitState('rigged', 'awaiting-approval');
    assert.match(await row('rigged').locator('.mcp-why').innerText(), /definition changed since you allowed it/);
    await sendMessage(chat, 'hello again');
    await waitIdle(chat);
    assert.equal(existsSync(markers.changed), false, 'the changed definition did not start');
    assert.equal(existsSync(markers.settings), false);
  });
});
