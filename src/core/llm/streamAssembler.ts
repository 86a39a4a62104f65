// Folds the chunks of a streamed chat completion into LlmEvents and the final assistant message:
// text and reasoning deltas pass through, tool-call fragments are assembled by index (or by id for
// servers that send no index or the same index for every call), errors inside the stream surface.
import type { AssistantMessage, ToolCall } from '../messages';
import { fromJson, isErrorChunk, type ServerError } from './errorBody';
import type { LlmEvent, Usage } from './llmClient';

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
  started: boolean;
  extra?: Record<string, unknown>;
}

export interface AssembledCompletion {
  message: AssistantMessage;
  usage: Usage;
  finishReason: string | null;
  /** All reasoning text that streamed (also when no tool call keeps it on the message). */
  reasoning: string;
}

/** Thrown for a chunk that no OpenAI-compatible server would send; the client maps it to bad_response. */
export class MalformedChunkError extends Error {}

/** The server reported an error inside the stream (an `error` chunk or event). */
export class StreamErrorReport extends Error {
  constructor(readonly server: ServerError) {
    super(server.text);
    this.name = 'StreamErrorReport';
  }
}

export class StreamAssembler {
  private text = '';
  private reasoning = '';
  /** Calls in the order they started; `slot` maps a server index to the call it currently feeds. */
  private readonly calls: PartialToolCall[] = [];
  private readonly slot = new Map<number, PartialToolCall>();
  private usage: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  private finish: string | null = null;
  private sawFinish = false;

  constructor(private readonly newCallId: (index: number) => string) {}

  /** Events to emit for one parsed chunk (the JSON of one `data:` line). */
  push(chunk: unknown): LlmEvent[] {
    // vLLM < 0.10.1, SGLang, TensorRT-LLM send {"object":"error",…}; OpenRouter an `error` beside
    // its choices; Gemini an array. None of them is a chunk to fold in.
    if (isErrorChunk(chunk)) throw new StreamErrorReport(fromJson(chunk));
    if (!isRecord(chunk)) throw new MalformedChunkError('a stream chunk is not a JSON object');
    const events: LlmEvent[] = [];
    if (isRecord(chunk.usage)) this.usage = readUsage(chunk.usage, chunk);
    // Groq reports usage in x_groq of the last chunk.
    else if (isRecord(chunk.x_groq) && isRecord(chunk.x_groq.usage)) this.usage = readUsage(chunk.x_groq.usage, chunk);
    const choices = chunk.choices;
    if (choices === undefined || choices === null) return events;
    if (!Array.isArray(choices)) throw new MalformedChunkError('"choices" in a stream chunk is not an array');
    // We never ask for n > 1, so only the first choice matters.
    const choice: unknown = choices[0];
    if (!isRecord(choice)) return events;
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
      this.finish = choice.finish_reason;
      this.sawFinish = true;
    }
    // Some servers (TGI, older llama.cpp) put the whole message in `message` even when streaming.
    const delta = isRecord(choice.delta) ? choice.delta : isRecord(choice.message) ? choice.message : undefined;
    if (!delta) return events;
    // DashScope, vLLM and DeepSeek name it reasoning_content; Ollama and OpenRouter name it reasoning.
    const reasoning = stringOr(delta.reasoning_content) ?? stringOr(delta.reasoning);
    if (reasoning) {
      this.reasoning += reasoning;
      events.push({ type: 'reasoning', delta: reasoning });
    }
    const content = stringOr(delta.content);
    if (content) {
      this.text += content;
      events.push({ type: 'text', delta: content });
    }
    if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
      if (!Array.isArray(delta.tool_calls)) throw new MalformedChunkError('"tool_calls" in a stream chunk is not an array');
      for (const fragment of delta.tool_calls as unknown[]) {
        const started = this.pushToolFragment(fragment);
        if (started) events.push(started);
      }
    }
    return events;
  }

  /** True once a choice carried a finish_reason: the answer is complete, not cut off. */
  get finished(): boolean {
    return this.sawFinish;
  }

  /** True when nothing at all was received yet (safe to retry without the caller noticing). */
  get empty(): boolean {
    return this.text === '' && this.reasoning === '' && this.calls.length === 0;
  }

  /** Reasoning streamed so far (a fork asked for thinking off: did the switch work?). */
  get reasoningSeen(): boolean {
    return this.reasoning.trim() !== '';
  }

  result(): AssembledCompletion {
    const toolCalls: ToolCall[] = this.calls.map((call, index) => {
      const assembled: ToolCall = { id: call.id || this.newCallId(index), type: 'function', function: { name: call.name, arguments: call.arguments } };
      if (call.extra) assembled.extra_content = structuredClone(call.extra);
      return assembled;
    });
    const message: AssistantMessage = {
      role: 'assistant',
      content: this.text === '' && toolCalls.length > 0 ? null : this.text,
    };
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls;
      // Thinking models that call tools need their reasoning back on later rounds (DeepSeek, Kimi).
      if (this.reasoning !== '') message.reasoning_content = this.reasoning;
    }
    return { message, usage: this.usage, finishReason: this.finish, reasoning: this.reasoning };
  }

  /**
   * One fragment of a tool call. By the OpenAI stream format, fragments with the same `index`
   * belong to one call. Gemini sends no index, and one-api / new-api gateways send index 0 for
   * every call of a turn; there a fragment that brings a new `id` starts a new call, and one
   * without id or index continues the call before it.
   */
  private pushToolFragment(fragment: unknown): LlmEvent | undefined {
    if (!isRecord(fragment)) throw new MalformedChunkError('a tool call fragment is not an object');
    const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : undefined;
    const index = typeof fragment.index === 'number' && Number.isInteger(fragment.index) ? fragment.index : undefined;
    const fn = fragment.function;
    const name = isRecord(fn) && typeof fn.name === 'string' && fn.name !== '' ? fn.name : undefined;
    let call = index !== undefined ? this.slot.get(index) : this.calls[this.calls.length - 1];
    const isNewCall =
      !call ||
      (id !== undefined && call.id !== '' && call.id !== id) ||
      // Without index or id, a second name can only be a second call (whole calls, Ollama style).
      (index === undefined && id === undefined && name !== undefined && call.name !== '');
    if (isNewCall) {
      call = { id: '', name: '', arguments: '', started: false };
      this.calls.push(call);
      if (index !== undefined) this.slot.set(index, call);
    }
    const current = call!;
    if (id !== undefined && current.id === '') current.id = id;
    if (isRecord(fn)) {
      // The name arrives whole in the first fragment; some servers repeat it later, so keep the first.
      if (name !== undefined && current.name === '') current.name = name;
      if (typeof fn.arguments === 'string') current.arguments += fn.arguments;
      // Ollama and a few others send parsed arguments instead of a JSON string.
      else if (isRecord(fn.arguments)) current.arguments += JSON.stringify(fn.arguments);
    }
    // Gemini's thought signature rides along here and must go back with the call.
    if (isRecord(fragment.extra_content)) current.extra = { ...current.extra, ...fragment.extra_content };
    if (!current.started && current.name !== '') {
      current.started = true;
      const position = this.calls.indexOf(current);
      // Local servers sometimes omit ids; the loop needs one to pair the tool result with the call.
      if (current.id === '') current.id = this.newCallId(position);
      return { type: 'tool_call_start', index: position, id: current.id, name: current.name };
    }
    return undefined;
  }
}

/**
 * Usage as the servers report it. Cached prompt tokens: OpenAI, vLLM, DashScope, Gemini, Groq,
 * OpenRouter in prompt_tokens_details.cached_tokens; DeepSeek in prompt_cache_hit_tokens; Kimi in
 * cached_tokens; llama.cpp in timings.cache_n.
 */
export function readUsage(raw: Record<string, unknown>, chunk: Record<string, unknown> = {}): Usage {
  const details = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const timings = isRecord(chunk.timings) ? chunk.timings : {};
  const cached = numberOr(details.cached_tokens) ?? numberOr(raw.prompt_cache_hit_tokens) ?? numberOr(raw.cached_tokens) ?? numberOr(timings.cache_n) ?? 0;
  return {
    promptTokens: numberOr(raw.prompt_tokens) ?? numberOr(raw.input_tokens) ?? 0,
    completionTokens: numberOr(raw.completion_tokens) ?? numberOr(raw.output_tokens) ?? 0,
    cachedTokens: cached,
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
