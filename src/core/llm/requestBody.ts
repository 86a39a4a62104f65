// Builds the JSON body of a streamed /chat/completions request from a ChatRequest: our stored
// messages are copied (never mutated), provider extras (cache marks, thinking switch, usage,
// reasoning sent back) added here as the request shape says.
import type { ChatMessage, ToolDefinition } from '../messages';
import type { ChatRequest } from './llmClient';
import { THINKING_SWITCHES } from './providerProfile';
import type { RequestShape, SentOptional } from './requestShape';

export type PrefixCaching = 'none' | 'dashscope';

export interface CacheControl {
  type: 'ephemeral';
}

export interface TextPart {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

/** A message as it goes on the wire: like ChatMessage, but content may be the array-of-parts form. */
export type WireMessage =
  | { role: 'system'; content: string | TextPart[] }
  | { role: 'user'; content: string | TextPart[] }
  | WireAssistantMessage
  | { role: 'tool'; tool_call_id: string; content: string | TextPart[] };

export interface WireAssistantMessage {
  role: 'assistant';
  content: string | TextPart[] | null;
  tool_calls?: WireToolCall[];
  reasoning_content?: string;
}

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  extra_content?: Record<string, unknown>;
}

export type WireTool = ToolDefinition & { cache_control?: CacheControl };

export interface ChatCompletionBody {
  model: string;
  messages: WireMessage[];
  stream: true;
  stream_options?: { include_usage: true };
  tools?: WireTool[];
  temperature?: number;
  /** Provider-specific fields (the thinking switch); they are not part of the prompt. */
  [extra: string]: unknown;
}

export interface BodyOptions {
  prefixCaching: PrefixCaching;
  shape: RequestShape;
}

/** Everything a plain OpenAI server accepts: the shape of a request with no extras. */
export const PLAIN_SHAPE: RequestShape = { usageInStream: true, thinkingSwitch: null, passReasoning: false, passToolExtras: false };

const EPHEMERAL: CacheControl = { type: 'ephemeral' };

export interface BuiltBody {
  body: ChatCompletionBody;
  /** Which optional fields went on the wire (a refusal can only be about these). */
  sent: SentOptional;
}

export function buildChatCompletionBody(request: ChatRequest, options: BodyOptions): BuiltBody {
  const { shape } = options;
  const sent: SentOptional = { usage: false, thinkingSwitch: null, reasoning: false, toolExtras: false, couldSendReasoning: false };
  const messages = request.messages.map((message) => toWire(message, shape, sent));
  const tools: WireTool[] | undefined = request.tools && request.tools.length > 0 ? request.tools.map((t) => structuredClone(t)) : undefined;
  if (options.prefixCaching === 'dashscope') addDashScopeCacheMarks(messages, tools);
  const body: ChatCompletionBody = { model: request.model, messages, stream: true };
  // Without this most servers send no final usage chunk (and with it no cached_tokens).
  if (shape.usageInStream) {
    body.stream_options = { include_usage: true };
    sent.usage = true;
  }
  if (tools) body.tools = tools;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.thinking === false && shape.thinkingSwitch) {
    Object.assign(body, structuredClone(THINKING_SWITCHES[shape.thinkingSwitch]));
    sent.thinkingSwitch = shape.thinkingSwitch;
  }
  return { body, sent };
}

function toWire(message: ChatMessage, shape: RequestShape, sent: SentOptional): WireMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
    case 'assistant': {
      const wire: WireAssistantMessage = { role: 'assistant', content: message.content };
      // Several servers reject an empty tool_calls array, so it is left out rather than sent empty.
      if (message.tool_calls && message.tool_calls.length > 0) {
        sent.couldSendReasoning = true;
        wire.tool_calls = message.tool_calls.map((c) => {
          const call: WireToolCall = { id: c.id, type: 'function', function: { name: c.function.name, arguments: wireArguments(c.function.arguments) } };
          if (shape.passToolExtras && c.extra_content) {
            call.extra_content = structuredClone(c.extra_content);
            sent.toolExtras = true;
          }
          return call;
        });
      }
      // DeepSeek and Kimi want it on every assistant message once tools were called; "" is what
      // they accept where the model produced none.
      if (shape.passReasoning) {
        wire.reasoning_content = message.reasoning_content ?? '';
        sent.reasoning = true;
      }
      return wire;
    }
  }
}

/**
 * What a tool call's arguments go back as. A cut-off or empty string stays in our history (the
 * tool result quotes it for the model), but vLLM, llama.cpp and Ollama refuse every later request
 * that carries it, so the wire gets `{}` instead.
 */
export function wireArguments(raw: string): string {
  if (raw.trim() === '') return '{}';
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? raw : '{}';
  } catch {
    return '{}';
  }
}

/**
 * DashScope's explicit cache: a `cache_control` mark ends a block the server caches, and a later
 * request whose prompt starts with the same tokens up to a mark reads it at a discount. The marks
 * change only the wire form (string content becomes one text part), never the tokens, so a main
 * request and a fork still share their prefix token for token.
 */
function addDashScopeCacheMarks(messages: WireMessage[], tools: WireTool[] | undefined): void {
  // The system prompt is the same for every request of every chat in this workspace: the widest,
  // longest-lived block, shared by the main chat and all of its forks.
  const system = messages.findIndex((m) => m.role === 'system');
  if (system >= 0) markContent(messages[system]);
  // Tools are rendered right after the system prompt and never change between a chat and its
  // forks; marking the last definition caches the whole tools block as one piece.
  if (tools && tools.length > 0) tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: EPHEMERAL };
  // The latest message closes this request's prompt: the next main turn and every fork (suggestion,
  // speculation) extend exactly this prefix, so caching up to here is what makes them hit.
  // An assistant message without text (tool calls only) has no part to carry the mark; the one
  // before it (the user message or tool result it answered) is then the end worth marking.
  for (let i = messages.length - 1; i > system; i--) {
    if (markContent(messages[i])) break;
  }
}

function markContent(message: WireMessage): boolean {
  const content = message.content;
  if (content === null || content === '') return false;
  const parts: TextPart[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content.map((p) => ({ ...p }));
  parts[parts.length - 1] = { ...parts[parts.length - 1], cache_control: EPHEMERAL };
  message.content = parts;
  return true;
}
