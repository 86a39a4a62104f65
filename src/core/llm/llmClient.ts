// The model port: one streamed chat completion with tools. The OpenAI-compatible implementation
// lives beside it; tests pass the scripted server's URL or a fake of this interface.
import type { AssistantMessage, ChatMessage, ToolDefinition } from '../messages';

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  temperature?: number;
  /** false switches thinking/reasoning off for this request (forks always do). */
  thinking?: boolean;
  signal?: AbortSignal;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** prompt_tokens_details.cached_tokens, 0 when the provider does not report it. */
  cachedTokens: number;
}

export type LlmEvent =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  /** A tool call began streaming; its arguments arrive later, assembled in `done`. */
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'done'; message: AssistantMessage; usage: Usage; finishReason: string | null };

export interface LlmClient {
  /** Streams one completion. Throws LlmError; aborting the signal closes the HTTP request. */
  stream(request: ChatRequest): AsyncIterable<LlmEvent>;
  /** Model ids the endpoint offers (GET /models). */
  listModels(signal?: AbortSignal): Promise<string[]>;
}

export type LlmErrorKind =
  | 'auth' // 401/403: bad or missing key
  | 'not_found' // 404: unknown model or wrong base URL
  | 'rate_limit' // 429 after retries
  | 'server' // 5xx after retries, or an error the server reported inside the stream
  | 'bad_request' // 400/413/422: the endpoint refused the request (e.g. context too long, unknown parameter)
  | 'network' // unreachable endpoint, reset connection after retries
  | 'timeout' // the server went silent
  | 'aborted' // the caller aborted
  | 'bad_response'; // the stream or JSON was not what an OpenAI-compatible server sends

/** A model call that failed; `message` says what happened and what the user can do. */
export class LlmError extends Error {
  constructor(readonly kind: LlmErrorKind, message: string, readonly status?: number) {
    super(message);
    this.name = 'LlmError';
  }
}
