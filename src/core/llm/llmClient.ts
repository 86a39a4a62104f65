// The model port: one streamed chat completion with tools. The OpenAI-compatible implementation
// lives beside it; tests pass the scripted server's URL or a fake of this interface.
import type { AssistantMessage, ChatMessage, ToolDefinition } from '../messages';
import type { StopKind } from './finishReason';

export type { StopKind } from './finishReason';

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  temperature?: number;
  /** false switches thinking/reasoning off for this request (forks always do). */
  thinking?: boolean;
  /**
   * Sent as max_tokens: the output limit. Unset leaves the server's own; set only for the retry of
   * an answer cut at the limit (a body field outside the prompt, so the cached prefix is unchanged).
   */
  maxTokens?: number;
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
  | {
      type: 'done';
      message: AssistantMessage;
      usage: Usage;
      finishReason: string | null;
      /** What the finish_reason means: complete, cut at the output limit, filtered. */
      stop: StopKind;
      /** Said to the user after the answer (e.g. a tool call written as text: the parser is off). */
      hint?: string;
    };

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
  | 'quota' // 402, 429 insufficient_quota: billing, not waiting, fixes it
  | 'server' // 5xx after retries, or an error the server reported inside the stream
  | 'bad_request' // 400/413/422: the endpoint refused the request (e.g. context too long, unknown parameter)
  | 'network' // unreachable endpoint, reset connection after retries
  | 'timeout' // the server went silent
  | 'aborted' // the caller aborted
  | 'bad_response' // the stream or JSON was not what an OpenAI-compatible server sends
  | 'output_limit' // finish_reason "length": the answer was cut at the output limit
  | 'content_filter'; // finish_reason "content_filter": the provider's filter stopped the answer

/** What the user can do about an error, offered as a button where the error is shown. */
/** The fixes an error can offer; set_up_endpoint is the preset picker (pick a provider again). */
export type ErrorAction = 'open_settings' | 'set_api_key' | 'select_model' | 'set_up_endpoint';

export interface LlmErrorDetails {
  status?: number;
  /** The reason in a few words (usually the server's own), for quiet places like a status line. */
  reason?: string;
  actions?: readonly ErrorAction[];
}

/** A model call that failed; `message` says what happened and what the user can do. */
export class LlmError extends Error {
  readonly status?: number;
  readonly reason: string;
  readonly actions: readonly ErrorAction[];

  constructor(readonly kind: LlmErrorKind, message: string, details: number | LlmErrorDetails = {}) {
    super(message);
    this.name = 'LlmError';
    const d = typeof details === 'number' ? { status: details } : details;
    if (d.status !== undefined) this.status = d.status;
    this.reason = d.reason ?? message;
    this.actions = d.actions ?? [];
  }

  /** Waiting and trying again may help (the network, a busy server); otherwise something must change. */
  get transient(): boolean {
    return isTransientKind(this.kind);
  }
}

export function isTransientKind(kind: LlmErrorKind): boolean {
  return kind === 'network' || kind === 'timeout' || kind === 'rate_limit' || kind === 'server' || kind === 'aborted';
}
