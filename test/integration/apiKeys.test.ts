// API keys per endpoint origin in the real extension host, against scripted servers on 127.0.0.1
// that record headers (two ports are two origins): each endpoint gets its own key and no other; the
// key of an earlier version is bound to the user's endpoint, never a workspace's; and no key ever
// shows up in an error, the transcript, the webview state or the logs.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { HostToWebview } from '../../src/shared/protocol';
import { LEGACY_SECRET } from '../../src/vscode/setup/apiKeys';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { speculateApi } from './api';
import { clearUserSettings, poll, restoreWorkspaceSettingsFile, setUserSettings, until, writeWorkspaceSettingsFile } from './helpers';

/** Every key these tests store starts so, for the scans at the end. */
const CANARY = 'sk-canary-';
const KEY_A = `${CANARY}endpoint-a-51c9`;
const KEY_B = `${CANARY}endpoint-b-0d2e`;
const LEGACY_KEY = `${CANARY}earlier-version-9a41`;

const originOf = (server: ScriptedServer) => new URL(server.baseUrl).origin;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

describe('API keys per endpoint origin', function () {
  this.timeout(90_000);
  const servers: ScriptedServer[] = [];
  let a: ScriptedServer;
  let b: ScriptedServer;
  let c: ScriptedServer;
  /** Everything the host sent to the chat webview during this suite. */
  const everPosted: HostToWebview[] = [];
  const posted: HostToWebview[] = [];
  let subscription: vscode.Disposable | undefined;

  before(async () => {
    for (const name of ['a', 'b', 'c']) {
      const server = new ScriptedServer({ script: () => ({ text: `hello from ${name}` }) });
      await server.start();
      servers.push(server);
    }
    [a, b, c] = servers;
    // No suggestions: each turn is exactly the requests the test sends.
    await setUserSettings({ model: 'scripted-model', approvalMode: 'default', 'suggestions.enabled': false });
    const api = await speculateApi();
    subscription = api.controller.onDidPostToWebview((message) => {
      everPosted.push(message);
      posted.push(message);
    });
  });
  after(async () => {
    subscription?.dispose();
    restoreWorkspaceSettingsFile();
    await clearUserSettings(['baseUrl', 'model', 'approvalMode', 'suggestions.enabled']);
    const api = await speculateApi();
    for (const server of servers) await api.apiKeys.clear(originOf(server));
    await api.secrets.delete(LEGACY_SECRET);
    for (const server of servers) await server.close();
  });

  async function chatWith(server: ScriptedServer): Promise<void> {
    const api = await speculateApi();
    await setUserSettings({ baseUrl: server.baseUrl });
    posted.length = 0;
    const before = server.chatRequests.length;
    void api.controller.handleWebviewMessage({ type: 'submit', text: 'hello' });
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), `the turn with ${server.baseUrl}`);
    assert.equal(server.chatRequests.length, before + 1, `${server.baseUrl} answered the turn`);
  }

  it('each endpoint gets the key stored for its origin, and one without a key gets none', async () => {
    const api = await speculateApi();
    await api.apiKeys.set(originOf(a), KEY_A);
    await api.apiKeys.set(originOf(b), KEY_B);
    await chatWith(a);
    await chatWith(b);
    await chatWith(c);
    assert.deepEqual(a.requests.map((r) => r.headers.authorization), [`Bearer ${KEY_A}`]);
    assert.deepEqual(b.requests.map((r) => r.headers.authorization), [`Bearer ${KEY_B}`]);
    assert.deepEqual(c.requests.map((r) => r.headers.authorization), [undefined]);
    assert.deepEqual(await api.apiKeys.origins(), [originOf(a), originOf(b)].sort());
  });

  it("the key of an earlier version waits for the user's endpoint, never binds to a workspace's, then binds to the user's", async () => {
    const api = await speculateApi();
    await api.apiKeys.clear(originOf(a));
    // First no endpoint, then the old key (so no settings change of the last test can bind it).
    await clearUserSettings(['baseUrl']);
    await api.secrets.store(LEGACY_SECRET, LEGACY_KEY);
    // A workspace names an endpoint (nested, so VS Code hands it to extensions): it is not the user's.
    writeWorkspaceSettingsFile(JSON.stringify({ speculate: { baseUrl: c.baseUrl } }));
    await poll(() => vscode.workspace.getConfiguration('speculate').inspect('baseUrl')?.workspaceValue === c.baseUrl, 'VS Code to read the workspace settings');
    assert.equal(api.controller.endpoint(), undefined, "the workspace's endpoint is not used");
    assert.deepEqual(await api.controller.migrateLegacyKey(), { kind: 'waiting' });
    assert.equal(await api.apiKeys.keyFor(originOf(c)), undefined);
    assert.equal(await api.secrets.get(LEGACY_SECRET), LEGACY_KEY);

    // The user sets the endpoint: the key moves there, once.
    await setUserSettings({ baseUrl: a.baseUrl });
    await poll(async () => (await api.apiKeys.keyFor(originOf(a))) === LEGACY_KEY, 'the old key to be bound to the user endpoint');
    // The move ends by deleting the old secret, a round trip after the new key is readable.
    await poll(async () => (await api.secrets.get(LEGACY_SECRET)) === undefined, 'the old key to be removed');
    await chatWith(a);
    assert.equal(a.requests[a.requests.length - 1].headers.authorization, `Bearer ${LEGACY_KEY}`);
    await chatWith(c);
    assert.equal(c.requests[c.requests.length - 1].headers.authorization, undefined, 'not to any other endpoint');
    restoreWorkspaceSettingsFile();
  });

  it('a key a server quotes back never reaches the error, the transcript, the webview state or the logs', async () => {
    const api = await speculateApi();
    await api.apiKeys.set(originOf(a), KEY_A);
    a.setScript(() => ({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY_A}. You can find your API key at https://example.test.`, type: 'invalid_request_error', code: 'invalid_api_key' } } }));
    await setUserSettings({ baseUrl: a.baseUrl });
    posted.length = 0;
    void api.controller.handleWebviewMessage({ type: 'submit', text: 'hello' });
    const error = await until(posted, (m) => (m.type === 'error' ? m : undefined), 'the error block');
    assert.match(error.message, /rejected the API key/);
    assert.match(error.message, /Incorrect API key provided: \[your API key\]/);
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end');

    // The webview state: a reloaded webview gets the whole transcript in `init`.
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'ready' });
    const init = await until(posted, (m) => (m.type === 'init' ? m : undefined), 'the init snapshot');
    assert.ok(init.state.transcript.some((item) => item.kind === 'error'), 'the snapshot holds the error');
    const shown = JSON.stringify(everPosted) + JSON.stringify(init);
    assert.ok(!shown.includes(CANARY), 'no key in anything sent to the webview');

    // The logs: the Speculate channel and every other log of this window, once the channel has
    // written the line of the previous test's move of the old key.
    const logFile = join(api.logUri.fsPath, 'Speculate.log');
    await poll(() => {
      try {
        return /is now the key for http:\/\/127\.0\.0\.1:\d+/.test(readFileSync(logFile, 'utf8'));
      } catch {
        return false;
      }
    }, 'the log to be written');
    const sessionLogs = dirname(dirname(api.logUri.fsPath));
    const leaking = filesUnder(sessionLogs).filter((file) => readFileSync(file, 'utf8').includes(CANARY));
    assert.deepEqual(leaking, []);
  });
});
