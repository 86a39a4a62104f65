// Keys per endpoint origin over a SecretStorage fake, and moving the single key of earlier versions.
import * as assert from 'node:assert/strict';
import { ApiKeyStore, keyChoices, LEGACY_SECRET, originOf, type SecretStore } from '../../../src/vscode/setup/apiKeys';

class MemorySecrets implements SecretStore {
  readonly values = new Map<string, string>();
  private readonly listeners = new Set<(event: { key: string }) => unknown>();
  async get(key: string) {
    return this.values.get(key);
  }
  async store(key: string, value: string) {
    this.values.set(key, value);
    this.fire(key);
  }
  async delete(key: string) {
    this.values.delete(key);
    this.fire(key);
  }
  onDidChange(listener: (event: { key: string }) => unknown) {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
  /** What another window writing the same storage looks like. */
  fire(key: string) {
    for (const listener of this.listeners) listener({ key });
  }
}

describe('API keys per endpoint origin', () => {
  it('takes the origin of an http(s) URL only', () => {
    assert.equal(originOf('https://API.OpenAI.com:443/v1/'), 'https://api.openai.com');
    assert.equal(originOf(' http://127.0.0.1:11434/v1 '), 'http://127.0.0.1:11434');
    assert.equal(originOf('https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21'), 'https://x.openai.azure.com');
    assert.equal(originOf('file:///etc/passwd'), undefined);
    assert.equal(originOf('not a url'), undefined);
  });

  it('keeps one key per origin and lists the origins that have one', async () => {
    const store = new ApiKeyStore(new MemorySecrets());
    await store.set('https://api.openai.com', 'sk-openai');
    await store.set('http://localhost:8000', 'sk-vllm');
    assert.equal(await store.keyFor('https://api.openai.com'), 'sk-openai');
    assert.equal(await store.keyFor('http://localhost:8000'), 'sk-vllm');
    assert.equal(await store.keyFor('http://127.0.0.1:8000'), undefined, 'another spelling of the host is another origin');
    assert.deepEqual(await store.origins(), ['http://localhost:8000', 'https://api.openai.com']);
    await store.clear('http://localhost:8000');
    assert.equal(await store.keyFor('http://localhost:8000'), undefined);
    assert.deepEqual(await store.origins(), ['https://api.openai.com']);
  });

  it('does not lose an origin when keys are set at the same time', async () => {
    const store = new ApiKeyStore(new MemorySecrets());
    await Promise.all(['http://a.test', 'http://b.test', 'http://c.test'].map((origin) => store.set(origin, `key-${origin}`)));
    assert.deepEqual(await store.origins(), ['http://a.test', 'http://b.test', 'http://c.test']);
  });

  it('sees a key another window changed', async () => {
    const secrets = new MemorySecrets();
    const store = new ApiKeyStore(secrets);
    let changes = 0;
    store.onDidChange(() => changes++);
    await store.set('http://a.test', 'one');
    secrets.values.set('speculate.apiKey@http://a.test', 'two');
    secrets.fire('speculate.apiKey@http://a.test');
    assert.equal(await store.keyFor('http://a.test'), 'two');
    assert.ok(changes >= 2);
  });

  it('binds the key of an earlier version to the user endpoint once, and waits while there is none', async () => {
    const secrets = new MemorySecrets();
    secrets.values.set(LEGACY_SECRET, 'sk-old');
    const store = new ApiKeyStore(secrets);
    assert.deepEqual(await store.adoptLegacyKey(undefined), { kind: 'waiting' });
    assert.equal(secrets.values.get(LEGACY_SECRET), 'sk-old', 'the key is kept until an endpoint is set');
    assert.deepEqual(await store.adoptLegacyKey('https://api.openai.com'), { kind: 'adopted', origin: 'https://api.openai.com' });
    assert.equal(await store.keyFor('https://api.openai.com'), 'sk-old');
    assert.equal(secrets.values.has(LEGACY_SECRET), false);
    assert.deepEqual(await store.adoptLegacyKey('http://evil.test'), { kind: 'none' }, 'a later endpoint does not get it too');
    assert.equal(await store.keyFor('http://evil.test'), undefined);
  });

  it('keeps a key already stored for the endpoint over the old one', async () => {
    const secrets = new MemorySecrets();
    const store = new ApiKeyStore(secrets);
    await store.set('https://api.openai.com', 'sk-new');
    secrets.values.set(LEGACY_SECRET, 'sk-old');
    assert.deepEqual(await store.adoptLegacyKey('https://api.openai.com'), { kind: 'superseded', origin: 'https://api.openai.com' });
    assert.equal(await store.keyFor('https://api.openai.com'), 'sk-new');
    assert.equal(await store.hasLegacyKey(), false);
  });

  it('offers the current endpoint first, then the others that have a key', () => {
    assert.deepEqual(keyChoices('https://api.openai.com', ['http://b.test', 'https://api.openai.com', 'http://a.test']), [
      { origin: 'https://api.openai.com', current: true, hasKey: true },
      { origin: 'http://a.test', current: false, hasKey: true },
      { origin: 'http://b.test', current: false, hasKey: true },
    ]);
    assert.deepEqual(keyChoices('http://new.test', []), [{ origin: 'http://new.test', current: true, hasKey: false }]);
    assert.deepEqual(keyChoices(undefined, []), []);
  });
});
