// API keys in VS Code's SecretStorage, one per endpoint origin (scheme://host:port): the key is
// looked up by the origin a request goes to, so it is sent only where it was stored for. Also moves
// the single key of earlier versions onto the endpoint the user had configured.
// No vscode import: SecretStorage is reached through the SecretStore shape, which tests fake.

/** The part of vscode.SecretStorage this store uses. */
export interface SecretStore {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
  onDidChange(listener: (event: { key: string }) => unknown): { dispose(): void };
}

/** What the model client receives: the key for one origin, nothing else. */
export interface ApiKeyLookup {
  keyFor(origin: string): Promise<string | undefined>;
}

/** The one key of versions before keys were kept per endpoint. */
export const LEGACY_SECRET = 'speculate.apiKey';
const SECRET_PREFIX = 'speculate.apiKey@';
/** The origins that have a key, for the Set / Clear pickers (SecretStorage cannot list its keys). */
const INDEX_SECRET = 'speculate.apiKeyOrigins';

/** The origin of an http(s) URL, or undefined for anything else. */
export function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

export type LegacyKeyOutcome =
  | { kind: 'none' }
  /** No endpoint in the user settings yet: the key waits for one. */
  | { kind: 'waiting' }
  | { kind: 'adopted'; origin: string }
  /** The endpoint had a key of its own already; the old one was dropped. */
  | { kind: 'superseded'; origin: string };

export class ApiKeyStore implements ApiKeyLookup {
  private readonly cache = new Map<string, string | undefined>();
  private readonly listeners = new Set<() => void>();
  private readonly subscription: { dispose(): void };
  /** Writes run one after another so the index never loses an origin to a race in this window. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly secrets: SecretStore) {
    // Another window (or Clear in this one) changed a key: forget it, and tell the client.
    this.subscription = secrets.onDidChange((event) => {
      if (event.key.startsWith(SECRET_PREFIX)) this.cache.delete(event.key.slice(SECRET_PREFIX.length));
      else if (event.key !== INDEX_SECRET) return;
      for (const listener of this.listeners) listener();
    });
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  async keyFor(origin: string): Promise<string | undefined> {
    if (this.cache.has(origin)) return this.cache.get(origin);
    const key = (await this.secrets.get(SECRET_PREFIX + origin)) || undefined;
    this.cache.set(origin, key);
    return key;
  }

  /** The origins that have a key, sorted. */
  async origins(): Promise<string[]> {
    const listed = parseIndex(await this.secrets.get(INDEX_SECRET));
    const present = await Promise.all(listed.map(async (origin) => ((await this.keyFor(origin)) ? origin : undefined)));
    return present.filter((origin): origin is string => origin !== undefined).sort();
  }

  set(origin: string, key: string): Promise<void> {
    return this.write(async () => {
      await this.secrets.store(SECRET_PREFIX + origin, key);
      this.cache.set(origin, key);
      await this.updateIndex((origins) => origins.add(origin));
    });
  }

  clear(origin: string): Promise<void> {
    return this.write(async () => {
      await this.secrets.delete(SECRET_PREFIX + origin);
      this.cache.set(origin, undefined);
      await this.updateIndex((origins) => origins.delete(origin));
    });
  }

  /**
   * Binds the key of earlier versions to the endpoint the user configured (its origin), once. With
   * no endpoint in the user settings the key waits: it is never bound to a workspace's endpoint.
   */
  adoptLegacyKey(origin: string | undefined): Promise<LegacyKeyOutcome> {
    return this.write(async (): Promise<LegacyKeyOutcome> => {
      const legacy = await this.secrets.get(LEGACY_SECRET);
      if (!legacy) return { kind: 'none' };
      if (!origin) return { kind: 'waiting' };
      const existing = await this.keyFor(origin);
      if (!existing) {
        await this.secrets.store(SECRET_PREFIX + origin, legacy);
        this.cache.set(origin, legacy);
        await this.updateIndex((origins) => origins.add(origin));
      }
      await this.secrets.delete(LEGACY_SECRET);
      return existing ? { kind: 'superseded', origin } : { kind: 'adopted', origin };
    });
  }

  /** Whether a key of an earlier version still waits for an endpoint in the user settings. */
  async hasLegacyKey(): Promise<boolean> {
    return Boolean(await this.secrets.get(LEGACY_SECRET));
  }

  clearLegacyKey(): Promise<void> {
    return this.write(async () => {
      await this.secrets.delete(LEGACY_SECRET);
    });
  }

  dispose(): void {
    this.subscription.dispose();
    this.listeners.clear();
  }

  private write<T>(step: () => Promise<T>): Promise<T> {
    const run = this.queue.then(step, step);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async updateIndex(change: (origins: Set<string>) => unknown): Promise<void> {
    const origins = new Set(parseIndex(await this.secrets.get(INDEX_SECRET)));
    change(origins);
    await this.secrets.store(INDEX_SECRET, JSON.stringify([...origins].sort()));
  }
}

function parseIndex(raw: string | undefined): string[] {
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

/** One endpoint the Set / Clear pickers offer. */
export interface KeyChoice {
  origin: string;
  /** The origin of speculate.baseUrl in the user settings. */
  current: boolean;
  hasKey: boolean;
}

/** The current endpoint first (whether or not it has a key), then every other origin with a key. */
export function keyChoices(currentOrigin: string | undefined, storedOrigins: readonly string[]): KeyChoice[] {
  const stored = new Set(storedOrigins);
  const choices: KeyChoice[] = currentOrigin ? [{ origin: currentOrigin, current: true, hasKey: stored.has(currentOrigin) }] : [];
  for (const origin of [...stored].sort()) if (origin !== currentOrigin) choices.push({ origin, current: false, hasKey: true });
  return choices;
}
