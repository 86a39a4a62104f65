// Which endpoint the chat talks to, from the user's settings, the key stored for its origin and the
// demo model: a client that reads them on every request, so changing a setting or a key needs no
// restart. The key is looked up by origin and bound to it on the wire (keyBoundFetch).
import { LlmError, type ChatRequest, type ErrorAction, type LlmClient, type LlmEvent } from '../../core/llm/llmClient';
import type { LearnedProfiles } from '../../core/llm/learnedProfiles';
import { OpenAiCompatibleClient } from '../../core/llm/openAiCompatibleClient';
import { originOf, type ApiKeyLookup } from './apiKeys';
import { keyBoundFetch } from './keyBoundFetch';
import type { SpeculateSettings } from './settings';

/** The endpoint in force. Never holds the key: that is looked up per request by `origin`. */
export interface Endpoint {
  baseUrl: string;
  /** scheme://host:port of baseUrl; undefined when baseUrl is not an http(s) URL. */
  origin: string | undefined;
  model: string;
  demo: boolean;
}

export const DEMO_MODEL_NAME = 'speculate-demo';

/** The endpoint in force: the user's, else the built-in demo model when npm start runs one. */
export function resolveEndpoint(settings: Pick<SpeculateSettings, 'baseUrl' | 'model'>, demoUrl: string | undefined): Endpoint | undefined {
  if (settings.baseUrl) return { baseUrl: settings.baseUrl, origin: originOf(settings.baseUrl), model: settings.model, demo: false };
  if (demoUrl) return { baseUrl: demoUrl, origin: originOf(demoUrl), model: settings.model || DEMO_MODEL_NAME, demo: true };
  return undefined;
}

export const NO_ENDPOINT_MESSAGE =
  'No endpoint is configured. Set "speculate.baseUrl" in your user settings to an OpenAI-compatible URL (for example https://api.openai.com/v1 or http://localhost:11434/v1), choose a model with "Speculate: Select Model", and store a key with "Speculate: Set API Key" if the endpoint needs one.';

/** The fixes for a missing endpoint: the preset picker first, the settings for those who know the URL. */
export const NO_ENDPOINT_ACTIONS: readonly ErrorAction[] = ['set_up_endpoint', 'open_settings'];

export function invalidBaseUrlMessage(baseUrl: string): string {
  return `The setting speculate.baseUrl is not an http(s) URL: "${baseUrl}". Set it in your user settings to your endpoint, for example https://api.openai.com/v1.`;
}

/** What replaces the key wherever a server echoed it back into an error. */
export const REDACTED_KEY = '[your API key]';
/** Shorter "keys" are no secret worth hiding and would garble every message they appear in. */
const MIN_REDACTED_LENGTH = 6;

/** The error with every occurrence of the key replaced (servers quote a rejected key back). */
export function redactKey(error: unknown, key: string | undefined): unknown {
  if (!key || key.length < MIN_REDACTED_LENGTH || !(error instanceof Error) || !error.message.includes(key)) return error;
  const message = error.message.split(key).join(REDACTED_KEY);
  if (error instanceof LlmError) return new LlmError(error.kind, message, { ...(error.status !== undefined ? { status: error.status } : {}), reason: error.reason.split(key).join(REDACTED_KEY), actions: error.actions });
  return new Error(message);
}

export interface SettingsLlmClientOptions {
  current: () => { endpoint: Endpoint | undefined; settings: SpeculateSettings };
  keys: ApiKeyLookup;
  /** Replaces global fetch (tests). */
  fetch?: typeof fetch;
  /** What endpoints taught us, shared by every client (kept in the extension's global storage). */
  learned?: LearnedProfiles;
  log?: (line: string) => void;
}

export class SettingsLlmClient implements LlmClient {
  private cached: { fields: readonly unknown[]; client: OpenAiCompatibleClient; key: string | undefined } | undefined;

  constructor(private readonly options: SettingsLlmClientOptions) {}

  private async client(): Promise<{ client: OpenAiCompatibleClient; key: string | undefined }> {
    const { endpoint, settings } = this.options.current();
    if (!endpoint) throw new LlmError('not_found', NO_ENDPOINT_MESSAGE, { actions: NO_ENDPOINT_ACTIONS });
    if (!endpoint.origin) throw new LlmError('not_found', invalidBaseUrlMessage(endpoint.baseUrl), { actions: ['set_up_endpoint', 'open_settings'] });
    const key = endpoint.demo ? undefined : await this.options.keys.keyFor(endpoint.origin);
    const fields = [endpoint.baseUrl, key, settings.prefixCaching, settings.requestTimeoutMs, settings.azureApiVersion] as const;
    if (!this.cached || this.cached.fields.some((field, i) => field !== fields[i])) {
      this.cached = {
        fields,
        key,
        client: new OpenAiCompatibleClient({
          baseURL: endpoint.baseUrl,
          apiKey: key,
          // Without a key no credential header goes anywhere; with one, only to its origin.
          fetch: keyBoundFetch(key ? endpoint.origin : undefined, this.options.fetch),
          prefixCaching: settings.prefixCaching,
          idleTimeoutMs: settings.requestTimeoutMs,
          firstTokenTimeoutMs: Math.max(settings.requestTimeoutMs, 180_000),
          ...(settings.azureApiVersion ? { apiVersion: settings.azureApiVersion } : {}),
          ...(this.options.learned ? { learned: this.options.learned } : {}),
          ...(this.options.log ? { log: this.options.log } : {}),
        }),
      };
    }
    return this.cached;
  }

  async *stream(request: ChatRequest): AsyncIterable<LlmEvent> {
    const { endpoint } = this.options.current();
    if (endpoint && !request.model) {
      throw new LlmError('not_found', 'No model is selected. Run "Speculate: Select Model" or set "speculate.model".', { actions: ['select_model', 'set_up_endpoint'] });
    }
    const { client, key } = await this.client();
    try {
      yield* client.stream(request);
    } catch (error) {
      throw redactKey(error, key);
    }
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const { client, key } = await this.client();
    return client.listModels(signal).catch((error: unknown) => {
      throw redactKey(error, key);
    });
  }
}
