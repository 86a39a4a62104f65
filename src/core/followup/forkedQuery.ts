// Cache-aware forks of the main conversation. CacheSafeParams is the snapshot of what the main chat
// last sent; a fork (suggestion, speculation) replays it byte for byte so the provider's prefix cache hits.
import type { AssistantMessage, ChatMessage, ToolDefinition } from '../messages';
import { LlmError, type ChatRequest, type LlmClient, type LlmEvent, type StopKind, type Usage } from '../llm/llmClient';
import { isCutInsideToolCall } from '../chat/lengthRecovery';

export const MAX_HISTORY_FOR_CACHE = 40;

export interface GenerationConfig {
  systemPrompt: string;
  tools: ToolDefinition[];
  temperature?: number;
}

/** A deep, frozen snapshot of what the main chat last sent; forks reuse it byte for byte. */
export interface CacheSafeParams {
  generationConfig: GenerationConfig;
  /**
   * The history (no system message) exactly as the main chat sent it, plus the reply it got.
   * See CacheSafeParamsStore for why this is not cut to MAX_HISTORY_FOR_CACHE.
   */
  history: ChatMessage[];
  model: string;
  /** Bumps only when the JSON of system prompt or tools changes. */
  version: number;
}

export interface SaveCacheSafeParamsInput {
  systemPrompt: string;
  tools: ToolDefinition[];
  temperature?: number;
  /** What the main chat's last request sent after the system message, plus the reply it got. */
  history: readonly ChatMessage[];
  model: string;
}

/**
 * Holds the CacheSafeParams of one chat session (one store per session, never a global).
 *
 * Why the history is kept whole instead of cut to the last MAX_HISTORY_FOR_CACHE messages: a
 * prefix cache only hits when the fork's prompt starts with the very tokens the main chat sent.
 * The main chat sends its whole history (dropping old turns from the main request would make the
 * model forget them, and a window that slides every turn would break the main chat's own cache
 * hits). A fork cut to the last 40 messages would therefore start differently from everything the
 * provider has cached as soon as a chat passes 40 messages — a full-price miss on every suggestion
 * and speculation, exactly when the prompt is longest. Keeping what was sent keeps forks cheap and
 * identical; the cost is that a fork's prompt is as long as the main chat's, which the cache pays
 * for. `curateHistory` applies the 40-message window where no cache can hit anyway (a history that
 * this process never sent, such as one loaded from a file).
 */
export class CacheSafeParamsStore {
  private current: CacheSafeParams | undefined;
  private lastConfigJson: string | undefined;
  private version = 0;

  /** Saves a deep, frozen snapshot (later turns cannot change it) and returns it. */
  save(input: SaveCacheSafeParamsInput): CacheSafeParams {
    const configJson = JSON.stringify({ systemPrompt: input.systemPrompt, tools: input.tools });
    if (configJson !== this.lastConfigJson) {
      this.version++;
      this.lastConfigJson = configJson;
    }
    const generationConfig: GenerationConfig = { systemPrompt: input.systemPrompt, tools: structuredClone(input.tools) };
    if (input.temperature !== undefined) generationConfig.temperature = input.temperature;
    this.current = deepFreeze({
      generationConfig,
      history: structuredClone([...input.history]),
      model: input.model,
      version: this.version,
    });
    return this.current;
  }

  get(): CacheSafeParams | undefined {
    return this.current;
  }

  /** New chat / reset: no fork may start from the old conversation. The version keeps counting. */
  clear(): void {
    this.current = undefined;
  }
}

/**
 * The last `max` messages, moved forward so the window starts at a user message: a window that
 * began inside a tool call/result pair (or with an orphaned assistant turn) would be an invalid or
 * misleading conversation. When the last `max` messages hold no user message at all (one very long
 * tool-using turn), the window reaches back to that turn's user message instead: the model must
 * know what it was asked.
 */
export function curateHistory(history: readonly ChatMessage[], max: number = MAX_HISTORY_FOR_CACHE): ChatMessage[] {
  const withoutSystem = history.filter((m) => m.role !== 'system');
  if (withoutSystem.length <= max) return structuredClone(withoutSystem);
  const cut = withoutSystem.length - max;
  let start = withoutSystem.findIndex((m, i) => i >= cut && m.role === 'user');
  if (start < 0) {
    for (let i = cut - 1; i >= 0 && start < 0; i--) if (withoutSystem[i].role === 'user') start = i;
  }
  return structuredClone(withoutSystem.slice(Math.max(0, start)));
}

/** [system, ...history, ...extraMessages]: the fork's messages, the shared prefix untouched. */
export function buildForkMessages(params: CacheSafeParams, extraMessages: readonly ChatMessage[]): ChatMessage[] {
  return [{ role: 'system', content: params.generationConfig.systemPrompt }, ...params.history, ...extraMessages];
}

export interface ForkedQueryOptions {
  params: CacheSafeParams;
  llm: LlmClient;
  /** Appended after the shared prefix, e.g. the suggestion prompt as a user message. */
  extraMessages: readonly ChatMessage[];
  /** Defaults to params.model. A different model (the fast model) has a cache of its own. */
  model?: string;
  signal?: AbortSignal;
  /**
   * Defaults to (and should stay) params.generationConfig.tools: the tools are part of the cached
   * prefix, so sending another list makes the fork miss the cache. A fork that must not act just
   * says so in its prompt and ignores any tool call in the reply.
   */
  tools?: ToolDefinition[];
  /** Every streamed event, for callers that show progress. */
  onEvent?: (event: LlmEvent) => void;
  /**
   * An answer cut at the output limit inside a tool call is returned (cutOff) instead of thrown,
   * for a caller that recovers from it (the speculative loop, as the main chat does).
   */
  recoverCutToolCalls?: boolean;
  /** The output limit to ask for (the retry after a cut-off); dropped if the server refuses the request with it. */
  maxTokens?: number;
}

export interface ForkedQueryResult {
  message: AssistantMessage;
  usage: Usage;
  finishReason: string | null;
  /** Set (with recoverCutToolCalls) when the answer stopped at the output limit inside a tool call. */
  cutOff?: true;
}

/**
 * One model call forked from the main chat: [system, ...history, ...extraMessages] with the main
 * chat's tools and temperature, thinking off (a fork wants a short, fast answer; the switch is a
 * body field outside the prompt, so the prefix stays identical). Throws LlmError (kind 'aborted'
 * when the signal fires). The suggestion generator and the speculative loop build on this.
 */
export async function runForkedQuery(options: ForkedQueryOptions): Promise<ForkedQueryResult> {
  if (options.maxTokens === undefined) return runForkedOnce(options);
  try {
    return await runForkedOnce(options);
  } catch (error) {
    if (!(error instanceof LlmError) || error.kind !== 'bad_request' || options.signal?.aborted) throw error;
    const { maxTokens: _refused, ...without } = options;
    return runForkedOnce(without);
  }
}

async function runForkedOnce(options: ForkedQueryOptions): Promise<ForkedQueryResult> {
  const { params } = options;
  const request: ChatRequest = {
    model: options.model ?? params.model,
    messages: buildForkMessages(params, options.extraMessages),
    tools: options.tools ?? params.generationConfig.tools,
    thinking: false,
  };
  if (params.generationConfig.temperature !== undefined) request.temperature = params.generationConfig.temperature;
  if (options.signal) request.signal = options.signal;
  if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens;
  for await (const event of options.llm.stream(request)) {
    options.onEvent?.(event);
    if (event.type !== 'done') continue;
    if (options.recoverCutToolCalls && isCutInsideToolCall(event.stop, event.message)) {
      return { message: event.message, usage: event.usage, finishReason: event.finishReason, cutOff: true };
    }
    // A fork's result is used as it is (a suggestion shown, a speculation injected): one that did
    // not finish, or that only looks finished, must fail instead.
    if (event.stop !== 'complete') throw stoppedEarly(event.stop, event.finishReason);
    if (event.hint) throw new LlmError('bad_response', event.hint, { reason: 'the server does not parse tool calls (its tool-call parser is off)' });
    return { message: event.message, usage: event.usage, finishReason: event.finishReason };
  }
  if (options.signal?.aborted) throw new LlmError('aborted', 'The request was cancelled.');
  throw new LlmError('bad_response', 'The model stream ended without a final message.');
}

function stoppedEarly(stop: Exclude<StopKind, 'complete'>, finishReason: string | null): LlmError {
  if (stop === 'length') {
    return new LlmError('output_limit', `The model's answer was cut off at its output limit (finish_reason "${finishReason}"), so none of it is used.`, {
      reason: 'the answer was cut off at the output limit',
    });
  }
  if (stop === 'content_filter') {
    return new LlmError('content_filter', `The provider's content filter stopped the answer (finish_reason "${finishReason}"), so none of it is used.`, {
      reason: "the provider's content filter stopped the answer",
    });
  }
  return new LlmError('server', `The endpoint stopped the answer with an error (finish_reason "${finishReason}").`, { reason: 'the endpoint stopped the answer with an error' });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
