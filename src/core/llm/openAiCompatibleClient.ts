// The LlmClient for any OpenAI-compatible endpoint (OpenAI, Azure, DashScope, Ollama, vLLM, LM
// Studio, llama.cpp, OpenRouter, Groq, DeepSeek, Mistral, Gemini, …) over the `openai` package:
// the provider profile shapes each request, refusals of optional fields are adapted to (and
// learned), and retries, silence timeouts and error texts are our own.
import OpenAI, { AzureOpenAI } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import type { APIError } from 'openai';
import { displayUrl, endpointKey, parseEndpoint, type EndpointShape } from './endpointUrl';
import { isErrorChunk, fromJson, readServerError } from './errorBody';
import { abortedError, badResponse, classifyError, redactSecret, silentServerError, type ErrorContext } from './errors';
import { stopKind } from './finishReason';
import { LearnedProfiles, type LearnedEndpoint } from './learnedProfiles';
import { LlmError, type ChatRequest, type LlmClient, type LlmEvent } from './llmClient';
import { providerProfile, type ProviderProfile } from './providerProfile';
import { buildChatCompletionBody, type PrefixCaching } from './requestBody';
import { adaptationsFor, applyAdaptation, learnAdaptation, learnIneffectiveSwitch, noOverrides, resolveShape, type Adaptation, type SentOptional } from './requestShape';
import { readSse } from './sse';
import { MalformedChunkError, StreamAssembler, StreamErrorReport, isRecord } from './streamAssembler';
import { textualToolCallHint } from './textualToolCalls';

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
  /**
   * The API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1; an Azure deployment
   * URL (…/openai/deployments/X?api-version=…) or an Azure …/openai/v1 URL is recognised as such.
   */
  baseURL: string;
  /** May be empty for local servers. */
  apiKey?: string;
  /** Azure api-version where the URL names none. */
  apiVersion?: string;
  prefixCaching?: PrefixCaching;
  /** No first byte within this long → timeout. Generous: local models may prefill a long prompt. */
  firstTokenTimeoutMs?: number;
  /** No further byte within this long, once streaming → timeout (keep-alive comments count). */
  idleTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Replaces global fetch (proxies, tests). */
  fetch?: typeof fetch;
  defaultHeaders?: Record<string, string>;
  /** Waits between retries; tests may pass a fast one. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** What endpoints taught us; shared by every client of the process. In memory when absent. */
  learned?: LearnedProfiles;
  /** Replaces parts of the known profile (tests, explicit settings). */
  profile?: Partial<Omit<ProviderProfile, 'id'>>;
  log?: (line: string) => void;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 20_000 };
export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 180_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const LIST_MODELS_TIMEOUT_MS = 20_000;
// The openai package's own timeout only covers the wait for response headers; ours covers the
// whole stream, so theirs is pushed out of the way.
const PACKAGE_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** Each optional field can be refused once; more changes than this mean something else is wrong. */
const MAX_ADAPTATIONS = 5;

/** The raw body of each HTTP error response, so no body shape loses the server's text. */
const errorBodies = new WeakMap<object, string>();

interface PackageClientOptions {
  shape: EndpointShape;
  apiKey: string;
  fetch?: typeof fetch;
  headers: Record<string, string>;
}

export class OpenAiCompatibleClient implements LlmClient {
  private readonly client: OpenAI;
  private readonly shape: EndpointShape;
  private readonly key: string;
  private readonly display: string;
  private readonly apiKey: string;
  private readonly prefixCaching: PrefixCaching;
  private readonly firstTokenTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly learned: LearnedProfiles;
  private readonly log: (line: string) => void;
  private callCounter = 0;

  constructor(private readonly options: OpenAiCompatibleClientOptions) {
    this.shape = parseEndpoint(options.baseURL, options.apiVersion ? { apiVersion: options.apiVersion } : {});
    this.key = endpointKey(options.baseURL);
    this.display = displayUrl(options.baseURL);
    this.apiKey = options.apiKey ?? '';
    this.prefixCaching = options.prefixCaching ?? 'none';
    this.firstTokenTimeoutMs = options.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.sleep = options.sleep ?? abortableSleep;
    this.learned = options.learned ?? new LearnedProfiles();
    this.log = options.log ?? (() => undefined);
    const headers: Record<string, string> = { ...options.defaultHeaders };
    // Switches DashScope's explicit (marked) cache on for this client's requests.
    if (this.prefixCaching === 'dashscope') headers['X-DashScope-CacheControl'] = 'enable';
    this.client = packageClient({ shape: this.shape, apiKey: this.apiKey, headers, ...(options.fetch ? { fetch: options.fetch } : {}) });
  }

  /** The provider profile for a model at this endpoint (known by host, before anything learned). */
  profileFor(model: string): ProviderProfile {
    return { ...providerProfile(this.shape, model), ...this.options.profile };
  }

  private context(model: string): ErrorContext {
    const profile = this.profileFor(model);
    return {
      baseURL: this.display,
      model,
      ...(profile.id !== 'generic' ? { label: profile.label } : {}),
      azure: this.shape.kind !== 'openai',
      secret: this.apiKey,
      bodyOf: (error: APIError) => errorBodies.get(error),
    };
  }

  async *stream(request: ChatRequest): AsyncGenerator<LlmEvent> {
    const context = this.context(request.model);
    const profile = this.profileFor(request.model);
    const learned = await this.learned.endpoint(this.key);
    const overrides = noOverrides();
    const pending: Adaptation[] = [];
    let adaptations = 0;
    let blindUsed = false;
    let retriedOnce = false;
    const callPrefix = `call_${Date.now().toString(36)}_${(this.callCounter++).toString(36)}`;
    for (let attempt = 1; ; attempt++) {
      if (request.signal?.aborted) throw abortedError();
      const shape = resolveShape(profile, learned, request.model, request.thinking === false, overrides);
      const { body, sent } = buildChatCompletionBody(request, { prefixCaching: this.prefixCaching, shape });
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
        const response = await this.client.chat.completions.create(params, { signal: attemptAbort.signal }).asResponse();
        const reply = this.readReply(response, assembler, () => watchdog.arm(this.idleTimeoutMs));
        for await (const event of reply) {
          yielded = true;
          yield event;
        }
        if (request.signal?.aborted) throw abortedError();
        if (watchdog.fired) throw silentServerError(context, watchdog.lastMs);
        if (!assembler.finished) {
          throw new LlmError('network', `The answer from ${this.display} stopped before the model finished (no finish_reason). Try again.`, {
            reason: 'the answer stopped before the model finished',
          });
        }
        const result = assembler.result();
        await this.settleLearning(request.model, pending, sent, assembler.reasoningSeen);
        const stop = stopKind(result.finishReason);
        const hint = !result.message.tool_calls && result.message.content ? textualToolCallHint(result.message.content, (request.tools?.length ?? 0) > 0) : undefined;
        yield { type: 'done', message: result.message, usage: result.usage, finishReason: result.finishReason, stop, ...(hint ? { hint } : {}) };
        return;
      } catch (error) {
        if (request.signal?.aborted) throw abortedError();
        if (watchdog.fired) throw silentServerError(context, watchdog.lastMs);
        const classified = classifyError(error, context);
        // A refusal of an optional field: send the request again without it (or with the field the
        // server asks for). This is not a retry of a failure and does not use up the attempts.
        const found = !yielded && classified.server ? adaptationsFor(classified.status, classified.server, sent, blindUsed) : [];
        if (found.length > 0 && adaptations < MAX_ADAPTATIONS) {
          adaptations++;
          for (const adaptation of found) {
            applyAdaptation(overrides, adaptation);
            if (adaptation.kind === 'add' || adaptation.named) {
              await this.remember(request.model, adaptation, learned);
            } else {
              blindUsed = true;
              pending.push(adaptation);
            }
            this.log(`${context.label ?? this.display}: ${describeAdaptation(adaptation)} after "${redactSecret(classified.server?.text ?? '', this.apiKey)}"`);
          }
          attempt--;
          continue;
        }
        // Once any token reached the caller it may already be on screen (or in a speculation's
        // transcript); a retry would stream a second, different answer after it. Fail instead and
        // let the user retry the whole turn.
        const once = classified.retryOnce === true && !retriedOnce;
        const canRetry = !yielded && ((classified.retryable && attempt < this.retry.maxAttempts) || once);
        if (!canRetry) throw attempt > 1 ? withAttempts(classified.error, attempt) : classified.error;
        if (once) retriedOnce = true;
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

  /**
   * The events of one HTTP reply. Most servers stream SSE; some ignore `stream: true` and answer
   * one JSON completion (or a JSON error with status 200, as LM Studio does on a wrong path).
   */
  private async *readReply(response: Response, assembler: StreamAssembler, onBytes: () => void): AsyncGenerator<LlmEvent> {
    const bytes = response.body;
    if (!bytes) throw new StreamErrorReport({ text: 'the reply had no body' });
    const peeked = await peek(bytes as unknown as AsyncIterable<Uint8Array>, onBytes);
    const first = peeked.head.trimStart().charAt(0);
    const type = response.headers.get('content-type') ?? '';
    if (first === '{' || first === '[' || (/json/i.test(type) && !/event-stream/i.test(type))) {
      const text = await collectText(peeked.stream);
      yield* this.readWholeCompletion(text, assembler);
      return;
    }
    if (first === '<') {
      const text = await collectText(peeked.stream);
      throw new MalformedChunkError(readServerError(text).text);
    }
    for await (const event of readSse(peeked.stream, onBytes)) {
      const data = event.data.trim();
      if (data === '[DONE]') return;
      // Groq and others name error events; their data is an error body of any shape.
      if (event.event === 'error') throw new StreamErrorReport(readServerError(data));
      if (data === '') continue;
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new MalformedChunkError(`a stream line that is not JSON: ${data.length > 120 ? `${data.slice(0, 120)}…` : data}`);
      }
      for (const out of assembler.push(chunk)) yield out;
    }
  }

  private async *readWholeCompletion(text: string, assembler: StreamAssembler): AsyncGenerator<LlmEvent> {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new StreamErrorReport({ text: readServerError(text).text });
    }
    if (isErrorChunk(value)) throw new StreamErrorReport(fromJson(value));
    if (!isRecord(value) || !Array.isArray(value.choices)) throw new MalformedChunkError('a JSON reply that is neither a completion nor a stream');
    await this.learned.update(this.key, (entry) => (entry.ignoresStream ? false : ((entry.ignoresStream = true), true)));
    // One completion is one big chunk: its `message` takes the place of the delta.
    for (const out of assembler.push(value)) yield out;
  }

  private async remember(model: string, adaptation: Adaptation, learned: LearnedEndpoint): Promise<void> {
    learnAdaptation(learned, model, adaptation);
    await this.learned.update(this.key, (entry) => learnAdaptation(entry, model, adaptation));
  }

  /** After a success: blind guesses proved right are kept; a switch that changed nothing is passed over. */
  private async settleLearning(model: string, pending: Adaptation[], sent: SentOptional, reasoningSeen: boolean): Promise<void> {
    const ineffective = sent.thinkingSwitch && reasoningSeen ? sent.thinkingSwitch : undefined;
    if (pending.length === 0 && !ineffective) return;
    await this.learned.update(this.key, (entry) => {
      let changed = false;
      for (const adaptation of pending) changed = learnAdaptation(entry, model, adaptation) || changed;
      if (ineffective) changed = learnIneffectiveSwitch(entry, model, ineffective) || changed;
      return changed;
    });
    if (ineffective) this.log(`${this.display}: "${ineffective}" did not switch thinking off for ${model}; the next fork tries another switch`);
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const context = this.context('(listing models)');
    // A deployment URL names the one model it serves.
    if (this.shape.kind === 'azure-deployment' && this.shape.deployment) return [this.shape.deployment];
    let body: unknown;
    try {
      const timeout = AbortSignal.timeout(LIST_MODELS_TIMEOUT_MS);
      body = await this.client.get<unknown>('/models', { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (error) {
      if (signal?.aborted) throw abortedError();
      const classified = classifyError(error, context);
      if (classified.error.kind === 'not_found') {
        throw new LlmError('not_found', `The endpoint at ${this.display} has no /models list (HTTP 404). Check that speculate.baseUrl points at the API root, usually ending in /v1.`, {
          status: 404,
          actions: ['open_settings'],
        });
      }
      throw classified.error;
    }
    // OpenAI and most servers answer {data: [{id}]}; Ollama's native list is {models: [{name}]}; a few a bare array.
    const list = isRecord(body) ? (body.data ?? body.models) : body;
    if (!Array.isArray(list)) throw badResponse(context, 'GET /models did not return a list');
    return list
      .flatMap((entry: unknown) => (isRecord(entry) && typeof entry.id === 'string' ? [entry.id] : isRecord(entry) && typeof entry.name === 'string' ? [entry.name] : []))
      .sort();
  }

  private backoffMs(attempt: number, retryAfter: number | undefined): number {
    if (retryAfter !== undefined) return Math.min(retryAfter, this.retry.maxRetryAfterMs);
    const exponential = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    return exponential * (0.75 + Math.random() * 0.5);
  }
}

function describeAdaptation(adaptation: Adaptation): string {
  switch (adaptation.kind) {
    case 'add':
      return `sending ${adaptation.field} from now on`;
    case 'drop':
      return adaptation.named ? `refused ${adaptation.field}; sending requests without it from now on` : `trying once without ${adaptation.field}`;
    case 'drop_switch':
      return adaptation.named ? `refused the thinking switch "${adaptation.id}"; forks try the next one` : `trying once without the thinking switch "${adaptation.id}"`;
  }
}

/** The openai package client for the endpoint: AzureOpenAI for Azure URLs (api-key, api-version). */
function packageClient(options: PackageClientOptions): OpenAI {
  const common = {
    // Retries are ours (exact, testable, never after tokens reached the caller).
    maxRetries: 0,
    // Failures reach the user as LlmErrors; the package must not also print them to the console.
    logLevel: 'off' as const,
    timeout: PACKAGE_TIMEOUT_MS,
    defaultHeaders: options.headers,
    // Explicit nulls keep OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment off the wire.
    organization: null,
    project: null,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const shape = options.shape;
  // The packages refuse an empty key; local servers ignore whatever is sent, Azure answers 401.
  const apiKey = options.apiKey || 'not-needed';
  if (shape.kind === 'azure-deployment') {
    return new CapturingAzureOpenAI({
      ...common,
      baseURL: shape.baseURL,
      apiKey,
      apiVersion: shape.apiVersion,
      ...(shape.deployment ? { deployment: shape.deployment } : {}),
      defaultQuery: shape.query,
    });
  }
  if (shape.kind === 'azure-v1') {
    return new AzureV1OpenAI(shape.apiVersion, { ...common, baseURL: shape.baseURL, apiKey, apiVersion: shape.apiVersion ?? 'v1', defaultQuery: shape.query });
  }
  return new CapturingOpenAI({ ...common, baseURL: shape.baseURL, apiKey, defaultQuery: shape.query });
}

// The package keeps only body.error of an error response; these keep the whole body.
class CapturingOpenAI extends OpenAI {
  protected override makeStatusError(status: number, error: object, message: string | undefined, headers: Headers): APIError {
    const made = super.makeStatusError(status, error, message, headers);
    errorBodies.set(made, message ?? JSON.stringify(error ?? null));
    return made;
  }
}

class CapturingAzureOpenAI extends AzureOpenAI {
  protected override makeStatusError(status: number, error: object, message: string | undefined, headers: Headers): APIError {
    const made = super.makeStatusError(status, error, message, headers);
    errorBodies.set(made, message ?? JSON.stringify(error ?? null));
    return made;
  }
}

/**
 * Azure's /openai/v1/ API: the api-key header as for deployments, but no /deployments/ in the path
 * (AzureOpenAI would insert one: openai-node#1684) and no api-version unless the URL names one.
 */
class AzureV1OpenAI extends CapturingAzureOpenAI {
  constructor(
    private readonly urlApiVersion: string | undefined,
    options: ConstructorParameters<typeof AzureOpenAI>[0],
  ) {
    super(options);
  }

  override buildRequest(...args: Parameters<OpenAI['buildRequest']>): ReturnType<OpenAI['buildRequest']> {
    return OpenAI.prototype.buildRequest.apply(this, args);
  }

  protected override defaultQuery(): Record<string, string | undefined> | undefined {
    const query = { ...super.defaultQuery() };
    if (this.urlApiVersion === undefined) delete query['api-version'];
    return query;
  }
}

/** The first decoded text of a byte stream (to tell SSE from JSON from HTML) and the whole stream again. */
async function peek(source: AsyncIterable<Uint8Array>, onBytes: () => void): Promise<{ head: string; stream: AsyncIterable<Uint8Array> }> {
  const iterator = source[Symbol.asyncIterator]();
  const taken: Uint8Array[] = [];
  let head = '';
  const decoder = new TextDecoder();
  let done = false;
  while (head.trim() === '' && !done) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    onBytes();
    taken.push(next.value);
    head += decoder.decode(next.value, { stream: true });
  }
  const stream: AsyncIterable<Uint8Array> = {
    async *[Symbol.asyncIterator]() {
      yield* taken;
      if (done) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    },
  };
  return { head, stream };
}

async function collectText(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
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
  return new LlmError(error.kind, `${error.message} (gave up after ${attempts} attempts)`, error);
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
