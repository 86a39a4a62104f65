// The chat's model client as the extension builds it, against scripted servers on 127.0.0.1: the key
// stored for an origin goes to that origin only, and a key a server echoes back never reaches the
// user in an error.
import * as assert from 'node:assert/strict';
import { LlmError, type ChatRequest } from '../../../src/core/llm/llmClient';
import { resolveEndpoint, SettingsLlmClient, type Endpoint } from '../../../src/vscode/setup/endpoint';
import type { SpeculateSettings } from '../../../src/vscode/setup/settings';
import { ScriptedServer } from '../../fixtures/scriptedServer';

const KEY = 'sk-canary-endpoint-0123456789';

function settingsFor(baseUrl: string): SpeculateSettings {
  return {
    baseUrl, model: 'scripted-model', fastModel: '', approvalMode: 'default', suggestionsEnabled: true, speculationEnabled: true,
    maxTurns: 20, maxMessages: 100, enterAcceptsSuggestion: false, prefixCaching: 'none', requestTimeoutMs: 60_000, webSearchUrl: '', azureApiVersion: '', protectedPaths: [],
    sandboxEnabled: true, sandboxTimeoutMs: 120_000, sandboxMaxWriteBytes: 256 * 1024 * 1024,
  };
}

const request = (): ChatRequest => ({ model: 'scripted-model', messages: [{ role: 'user', content: 'hi' }] });

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _event of stream) void _event;
}

async function failure(stream: AsyncIterable<unknown>): Promise<LlmError> {
  try {
    await drain(stream);
  } catch (error) {
    assert.ok(error instanceof LlmError, String(error));
    return error;
  }
  throw new Error('the request did not fail');
}

describe('SettingsLlmClient: keys per endpoint origin', () => {
  let api: ScriptedServer;
  let other: ScriptedServer;
  let settings: SpeculateSettings;
  const keys = new Map<string, string>();
  let client: SettingsLlmClient;

  beforeEach(async () => {
    api = new ScriptedServer({ script: () => ({ text: 'hello' }) });
    other = new ScriptedServer({ script: () => ({ text: 'hello from elsewhere' }) });
    await api.start();
    await other.start();
    settings = settingsFor(api.baseUrl);
    keys.clear();
    client = new SettingsLlmClient({
      current: () => ({ endpoint: resolveEndpoint(settings, undefined), settings }),
      keys: { keyFor: async (origin) => keys.get(origin) },
    });
  });
  afterEach(async () => {
    await api.close();
    await other.close();
  });

  it('sends the key stored for the endpoint origin, and no key to an endpoint that has none', async () => {
    keys.set(new URL(api.baseUrl).origin, KEY);
    await drain(client.stream(request()));
    assert.equal(api.chatRequests[0].headers.authorization, `Bearer ${KEY}`);
    settings = settingsFor(other.baseUrl);
    await drain(client.stream(request()));
    assert.equal(other.chatRequests[0].headers.authorization, undefined, 'not the other key, and no placeholder either');
  });

  it('never sends a key when a same-port URL spells the host differently', async () => {
    keys.set(new URL(api.baseUrl).origin, KEY);
    settings = settingsFor(api.baseUrl.replace('127.0.0.1', 'localhost'));
    await drain(client.stream(request()));
    assert.equal(api.chatRequests[0].headers.authorization, undefined);
  });

  it('refuses to follow the endpoint to another origin', async () => {
    keys.set(new URL(api.baseUrl).origin, KEY);
    api.setScript(() => ({ status: 307, headers: { location: `${other.baseUrl}/chat/completions` }, body: {} }));
    const error = await failure(client.stream(request()));
    assert.match(error.message, /redirected the request to http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(other.requests.length, 0);
    assert.ok(!error.message.includes(KEY));
  });

  it('hides the key when a server quotes it back in an error', async () => {
    keys.set(new URL(api.baseUrl).origin, KEY);
    api.setScript(() => ({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error', code: 'invalid_api_key' } } }));
    const error = await failure(client.stream(request()));
    assert.equal(error.kind, 'auth');
    assert.ok(!error.message.includes(KEY), error.message);
    assert.match(error.message, /Incorrect API key provided: \[your API key\]/);
  });

  it('says what is wrong with a baseUrl that is not an http(s) URL', async () => {
    settings = settingsFor('ftp://example.test/v1');
    const error = await failure(client.stream(request()));
    assert.match(error.message, /speculate\.baseUrl is not an http\(s\) URL/);
  });

  it('never looks up a key for the demo model', async () => {
    let asked = 0;
    const demo = new SettingsLlmClient({
      current: () => ({ endpoint: resolveEndpoint(settingsFor(''), api.baseUrl) as Endpoint, settings: settingsFor('') }),
      keys: { keyFor: async () => (asked++, KEY) },
    });
    await drain(demo.stream({ ...request(), model: 'speculate-demo' }));
    assert.equal(asked, 0);
    assert.equal(api.chatRequests[0].headers.authorization, undefined);
  });
});
