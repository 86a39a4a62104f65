// Which endpoint the chat talks to, from settings, the stored key and the demo model: a client that
// reads them on every request, so changing a setting or the key needs no restart.
import { LlmError, type ChatRequest, type LlmClient, type LlmEvent } from '../core/llm/llmClient';
import { OpenAiCompatibleClient } from '../core/llm/openAiCompatibleClient';
import type { SpeculateSettings } from './settings';

export interface Endpoint {
  baseUrl: string;
  model: string;
  apiKey: string;
  demo: boolean;
}

export const DEMO_MODEL_NAME = 'speculate-demo';

/** The endpoint in force: the user's, else the built-in demo model when npm start runs one. */
export function resolveEndpoint(settings: SpeculateSettings, apiKey: string | undefined, demoUrl: string | undefined): Endpoint | undefined {
  if (settings.baseUrl) return { baseUrl: settings.baseUrl, model: settings.model, apiKey: apiKey ?? '', demo: false };
  if (demoUrl) return { baseUrl: demoUrl, model: settings.model || DEMO_MODEL_NAME, apiKey: '', demo: true };
  return undefined;
}

export const NO_ENDPOINT_MESSAGE =
  'No endpoint is configured. Set "speculate.baseUrl" to an OpenAI-compatible URL (for example https://api.openai.com/v1 or http://localhost:11434/v1), choose a model with "Speculate: Select Model", and store a key with "Speculate: Set API Key" if the endpoint needs one.';

export class SettingsLlmClient implements LlmClient {
  private cached: { key: string; client: OpenAiCompatibleClient } | undefined;

  constructor(private readonly current: () => { endpoint: Endpoint | undefined; settings: SpeculateSettings }) {}

  private client(): OpenAiCompatibleClient {
    const { endpoint, settings } = this.current();
    if (!endpoint) throw new LlmError('not_found', NO_ENDPOINT_MESSAGE);
    const key = JSON.stringify([endpoint.baseUrl, endpoint.apiKey, settings.prefixCaching, settings.requestTimeoutMs]);
    if (this.cached?.key !== key) {
      this.cached = {
        key,
        client: new OpenAiCompatibleClient({
          baseURL: endpoint.baseUrl,
          apiKey: endpoint.apiKey,
          prefixCaching: settings.prefixCaching,
          idleTimeoutMs: settings.requestTimeoutMs,
          firstTokenTimeoutMs: Math.max(settings.requestTimeoutMs, 180_000),
        }),
      };
    }
    return this.cached.client;
  }

  async *stream(request: ChatRequest): AsyncIterable<LlmEvent> {
    const { endpoint } = this.current();
    if (endpoint && !request.model) {
      throw new LlmError('not_found', 'No model is selected. Run "Speculate: Select Model" or set "speculate.model".');
    }
    yield* this.client().stream(request);
  }

  listModels(signal?: AbortSignal): Promise<string[]> {
    return this.client().listModels(signal);
  }
}
