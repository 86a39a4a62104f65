// Folds the chunks of a streamed chat completion into LlmEvents and the final assistant message:
// text and reasoning deltas pass through, tool-call fragments are assembled by their index.
import type { AssistantMessage, ToolCall } from '../messages';
import type { LlmEvent, Usage } from './llmClient';

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
  started: boolean;
}

export interface AssembledCompletion {
  message: AssistantMessage;
  usage: Usage;
  finishReason: string | null;
}

/** Thrown for a chunk that no OpenAI-compatible server would send; the client maps it to bad_response. */
export class MalformedChunkError extends Error {}

export class StreamAssembler {
  private text = '';
  private readonly calls = new Map<number, PartialToolCall>();
  private usage: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  private finish: string | null = null;
  private sawFinish = false;

  constructor(private readonly newCallId: (index: number) => string) {}

  /** Events to emit for one parsed chunk (the JSON of one `data:` line). */
  push(chunk: unknown): LlmEvent[] {
    if (!isRecord(chunk)) throw new MalformedChunkError('a stream chunk is not a JSON object');
    const events: LlmEvent[] = [];
    if (isRecord(chunk.usage)) this.usage = readUsage(chunk.usage);
    const choices = chunk.choices;
    if (choices === undefined || choices === null) return events;
    if (!Array.isArray(choices)) throw new MalformedChunkError('"choices" in a stream chunk is not an array');
    // We never ask for n > 1, so only the first choice matters.
    const choice: unknown = choices[0];
    if (!isRecord(choice)) return events;
    if (typeof choice.finish_reason === 'string') {
      this.finish = choice.finish_reason;
      this.sawFinish = true;
    }
    const delta = choice.delta;
    if (!isRecord(delta)) return events;
    // DashScope, vLLM and DeepSeek name it reasoning_content; Ollama and OpenRouter name it reasoning.
    const reasoning = stringOr(delta.reasoning_content) ?? stringOr(delta.reasoning);
    if (reasoning) events.push({ type: 'reasoning', delta: reasoning });
    const content = stringOr(delta.content);
    if (content) {
      this.text += content;
      events.push({ type: 'text', delta: content });
    }
    if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
      if (!Array.isArray(delta.tool_calls)) throw new MalformedChunkError('"tool_calls" in a stream chunk is not an array');
      delta.tool_calls.forEach((fragment: unknown, position: number) => {
        const started = this.pushToolFragment(fragment, position);
        if (started) events.push(started);
      });
    }
    return events;
  }

  /** True once a choice carried a finish_reason: the answer is complete, not cut off. */
  get finished(): boolean {
    return this.sawFinish;
  }

  /** True when nothing at all was received yet (safe to retry without the caller noticing). */
  get empty(): boolean {
    return this.text === '' && this.calls.size === 0;
  }

  result(): AssembledCompletion {
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ id: call.id || this.newCallId(index), type: 'function', function: { name: call.name, arguments: call.arguments } }));
    const message: AssistantMessage = {
      role: 'assistant',
      content: this.text === '' && toolCalls.length > 0 ? null : this.text,
    };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, usage: this.usage, finishReason: this.finish };
  }

  private pushToolFragment(fragment: unknown, position: number): LlmEvent | undefined {
    if (!isRecord(fragment)) throw new MalformedChunkError('a tool call fragment is not an object');
    // A few servers leave out `index` when they send each call whole; the position stands in.
    const index = typeof fragment.index === 'number' ? fragment.index : position;
    let call = this.calls.get(index);
    if (!call) {
      call = { id: '', name: '', arguments: '', started: false };
      this.calls.set(index, call);
    }
    if (typeof fragment.id === 'string' && fragment.id !== '' && call.id === '') call.id = fragment.id;
    const fn = fragment.function;
    if (isRecord(fn)) {
      // The name arrives whole in the first fragment; some servers repeat it later, so keep the first.
      if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name;
      if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
      // Ollama and a few others send parsed arguments instead of a JSON string.
      else if (isRecord(fn.arguments)) call.arguments += JSON.stringify(fn.arguments);
    }
    if (!call.started && call.name !== '') {
      call.started = true;
      // Local servers sometimes omit ids; the loop needs one to pair the tool result with the call.
      if (call.id === '') call.id = this.newCallId(index);
      return { type: 'tool_call_start', index, id: call.id, name: call.name };
    }
    return undefined;
  }
}

function readUsage(raw: Record<string, unknown>): Usage {
  const details = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const cached = numberOr(details.cached_tokens) ?? numberOr(raw.prompt_cache_hit_tokens) ?? 0; // the latter: DeepSeek
  return {
    promptTokens: numberOr(raw.prompt_tokens) ?? 0,
    completionTokens: numberOr(raw.completion_tokens) ?? 0,
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
