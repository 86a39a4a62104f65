// The LlmClient for any OpenAI-compatible endpoint (OpenAI, DashScope, Ollama, vLLM, LM Studio,
// OpenRouter) over the `openai` package, with our own retries, silence timeouts and error texts.
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { abortedError, badResponse, classifyError, silentServerError, type ErrorContext } from './errors';
import { LlmError, type ChatRequest, type LlmClient, type LlmEvent } from './llmClient';
import { buildChatCompletionBody, type PrefixCaching } from './requestBody';
import { StreamAssembler, isRecord } from './streamAssembler';
import { defaultThinkingOffFields } from './thinking';

export interface RetryPolicy {
  /** Total attempts including the first. */
  maxAttempts: number;
  /** Backoff before the 2nd attempt; doubles each time, ±25 % jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A server's Retry-After is honoured up to this much. */
  maxRetryAfterMs: number;
}

export interface OpenAiCompatibleClientOptions {
  /** The API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1. */
  baseURL: string;
  /** May be empty for local servers. */
  apiKey?: string;
  prefixCaching?: PrefixCaching;
  /** No first chunk within this long → timeout. Generous: local models may prefill a long prompt. */
  firstTokenTimeoutMs?: number;
  /** No further chunk within this long, once streaming → timeout. */
  idleTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Replaces global fetch (proxies, tests). */
  fetch?: typeof fetch;
  /** Body fields sent with `thinking: false`; defaults by endpoint (see thinking.ts). */
  thinkingOffFields?: Record<string, unknown>;
  defaultHeaders?: Record<string, string>;
  /** Waits between retries; tests may pass a fast one. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 20_000 };
export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 180_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const LIST_MODELS_TIMEOUT_MS = 20_000;
// The openai package's own timeout only covers the wait for response headers; ours covers the
// whole stream, so theirs is pushed out of the way.
const PACKAGE_TIMEOUT_MS = 24 * 60 * 60 * 1000;

export class OpenAiCompatibleClient implements LlmClient {
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly prefixCaching: PrefixCaching;
  private readonly firstTokenTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly thinkingOffFields: Record<string, unknown>;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private callCounter = 0;

  constructor(options: OpenAiCompatibleClientOptions) {
    this.baseURL = options.baseURL.replace(/\/+$/, '');
    this.prefixCaching = options.prefixCaching ?? 'none';
    this.firstTokenTimeoutMs = options.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.thinkingOffFields = options.thinkingOffFields ?? defaultThinkingOffFields(this.baseURL);
    this.sleep = options.sleep ?? abortableSleep;
    const headers: Record<string, string> = { ...options.defaultHeaders };
    // Switches DashScope's explicit (marked) cache on for this client's requests.
    if (this.prefixCaching === 'dashscope') headers['X-DashScope-CacheControl'] = 'enable';
    this.client = new OpenAI({
      baseURL: this.baseURL,
      // The package refuses an empty key; local servers ignore whatever is sent.
      apiKey: options.apiKey || 'not-needed',
      // Explicit nulls keep OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment off the wire.
      organization: null,
      project: null,
      // Retries are ours (exact, testable, never after tokens reached the caller).
      maxRetries: 0,
      // Failures reach the user as LlmErrors; the package must not also print them to the console.
      logLevel: 'off',
      timeout: PACKAGE_TIMEOUT_MS,
      defaultHeaders: headers,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async *stream(request: ChatRequest): AsyncGenerator<LlmEvent> {
    const context: ErrorContext = { baseURL: this.baseURL, model: request.model };
    const body = buildChatCompletionBody(request, { prefixCaching: this.prefixCaching, thinkingOffFields: this.thinkingOffFields });
    const callPrefix = `call_${Date.now().toString(36)}_${(this.callCounter++).toString(36)}`;
    for (let attempt = 1; ; attempt++) {
      if (request.signal?.aborted) throw abortedError();
      const attemptAbort = new AbortController();
      const onCallerAbort = () => attemptAbort.abort();
      request.signal?.addEventListener('abort', onCallerAbort, { once: true });
      const watchdog = new SilenceWatchdog(() => attemptAbort.abort());
      watchdog.arm(this.firstTokenTimeoutMs);
      const assembler = new StreamAssembler((index) => `${callPrefix}_${index}`);
      let yielded = false;
      try {
        // The body carries provider extras (cache marks, thinking switch) beyond the package's types;
        // they are plain JSON fields that the package sends as they are.
        const params = body as unknown as ChatCompletionCreateParamsStreaming;
        const stream = await this.client.chat.completions.create(params, { signal: attemptAbort.signal });
        for await (const chunk of stream as AsyncIterable<ChatCompletionChunk | unknown>) {
          watchdog.arm(this.idleTimeoutMs);
          for (const event of assembler.push(chunk)) {
            yielded = true;
            yield event;
          }
        }
        // The package ends the loop silently when the request is aborted, so find out why it ended.
        if (request.signal?.aborted) throw abortedError();
        if (watchdog.fired) throw silentServerError(context, watchdog.lastMs);
        if (!assembler.finished) {
          throw new LlmError('network', `The answer from ${this.baseURL} stopped before the model finished (no finish_reason). Try again.`);
        }
        const result = assembler.result();
        yield { type: 'done', message: result.message, usage: result.usage, finishReason: result.finishReason };
        return;
      } catch (error) {
        if (request.signal?.aborted) throw abortedError();
        if (watchdog.fired) throw silentServerError(context, watchdog.lastMs);
        const classified = classifyError(error, context);
        // Once any token reached the caller it may already be on screen (or in a speculation's
        // transcript); a retry would stream a second, different answer after it. Fail instead and
        // let the user retry the whole turn.
        const canRetry = classified.retryable && !yielded && attempt < this.retry.maxAttempts;
        if (!canRetry) throw attempt > 1 ? withAttempts(classified.error, attempt) : classified.error;
        await this.sleep(this.backoffMs(attempt, classified.retryAfterMs), request.signal).catch(() => {
          throw abortedError();
        });
      } finally {
        watchdog.disarm();
        request.signal?.removeEventListener('abort', onCallerAbort);
        // Closes the socket when the caller stopped iterating early (break, return, error).
        attemptAbort.abort();
      }
    }
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const context: ErrorContext = { baseURL: this.baseURL, model: '(listing models)' };
    let body: unknown;
    try {
      const timeout = AbortSignal.timeout(LIST_MODELS_TIMEOUT_MS);
      body = await this.client.get<unknown>('/models', { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (error) {
      if (signal?.aborted) throw abortedError();
      const classified = classifyError(error, context);
      if (classified.error.kind === 'not_found') {
        throw new LlmError('not_found', `The endpoint at ${this.baseURL} has no /models list (HTTP 404). Check that speculate.baseUrl points at the API root, usually ending in /v1.`, 404);
      }
      throw classified.error;
    }
    // OpenAI and most servers answer {data: [{id}]}; a few answer a bare array.
    const list = isRecord(body) ? body.data : body;
    if (!Array.isArray(list)) throw badResponse(context, 'GET /models did not return a list');
    return list.flatMap((entry: unknown) => (isRecord(entry) && typeof entry.id === 'string' ? [entry.id] : [])).sort();
  }

  private backoffMs(attempt: number, retryAfter: number | undefined): number {
    if (retryAfter !== undefined) return Math.min(retryAfter, this.retry.maxRetryAfterMs);
    const exponential = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    return exponential * (0.75 + Math.random() * 0.5);
  }
}

/** Aborts the attempt when the server stays silent longer than the current allowance. */
class SilenceWatchdog {
  private timer: ReturnType<typeof setTimeout> | undefined;
  fired = false;
  lastMs = 0;

  constructor(private readonly onSilence: () => void) {}

  arm(ms: number): void {
    this.disarm();
    this.lastMs = ms;
    this.timer = setTimeout(() => {
      this.fired = true;
      this.onSilence();
    }, ms);
  }

  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function withAttempts(error: LlmError, attempts: number): LlmError {
  return new LlmError(error.kind, `${error.message} (gave up after ${attempts} attempts)`, error.status);
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
