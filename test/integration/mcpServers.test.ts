// MCP servers in the real extension host: speculate.mcpServers from the user's settings reaches the
// chat's tools (the server starts with the first turn, not before), and the window's shutdown stops it.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostToWebview } from '../../src/shared/protocol';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { speculateApi } from './api';
import { clearUserSettings, poll, setUserSettings, until } from './helpers';

const repo = join(__dirname, '../../..');
const everything = join(repo, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const TAG = `speculate-it-mcp-${process.pid}-${Date.now()}`;

/** Live processes whose environment holds the tag: the servers this window started. */
function tagged(): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`SPECULATE_IT_TAG=${TAG}`);
    } catch {
      return false;
    }
  });
}

describe('MCP servers in the extension host', function () {
  this.timeout(60_000);
  let model: ScriptedServer;
  before(async () => {
    model = new ScriptedServer({ script: () => ({ text: 'Noted.' }) });
    await model.start();
    await setUserSettings({
      baseUrl: model.baseUrl,
      model: 'scripted-demo',
      'suggestions.enabled': false,
      mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'], env: { SPECULATE_IT_TAG: TAG } } },
    });
  });
  after(async () => {
    await clearUserSettings(['baseUrl', 'model', 'suggestions.enabled', 'mcpServers']);
    await model?.close();
  });

  it('offers the server\'s tools from the first turn, starting it only then; shutdown stops it', async () => {
    const api = await speculateApi();
    await poll(() => api.mcp.snapshot().servers.find((s) => s.name === 'everything'), 'the configured server in the list');
    assert.equal(api.mcp.snapshot().servers[0].state, 'idle');
    assert.deepEqual(tagged(), [], 'nothing starts before a turn');

    const posted: HostToWebview[] = [];
    const subscription = api.controller.onDidPostToWebview((message) => posted.push(message));
    try {
      void api.controller.handleWebviewMessage({ type: 'submit', text: 'hello' });
      await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end', 40_000);
    } finally {
      subscription.dispose();
    }
    const offered = (model.chatRequests.at(-1)?.body?.tools ?? []).map((tool) => (tool as { function?: { name?: string } }).function?.name);
    assert.ok(offered.includes('mcp__everything__echo'), offered.join(', '));
    assert.ok(offered.indexOf('mcp__everything__echo') > offered.indexOf('read_file'), 'after the built-in tools');
    assert.equal(api.mcp.view().servers[0].state, 'running');
    assert.equal(tagged().length, 1);

    // What deactivate() runs when the window closes or reloads.
    await api.mcp.shutdown();
    await poll(() => tagged().length === 0, 'the server process to exit', 10_000);
  });
});
