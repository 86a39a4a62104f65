// What an endpoint accepts, known by host for the servers we have read the docs of: which thinking
// switch turns reasoning off for a fork, whether usage is asked for in the stream, whether reasoning
// and tool-call extras must be sent back. Everything else starts generic and is learned (learned.ts).
import { hostOf, type EndpointShape } from './endpointUrl';

/** The body fields that switch reasoning off, one id per convention. */
export const THINKING_SWITCHES = {
  /** vLLM, SGLang, llama.cpp: read by the Qwen3 (and similar) chat templates. */
  chat_template_kwargs: { chat_template_kwargs: { enable_thinking: false } },
  /** OpenAI (gpt-5.1+), Ollama, Groq, Gemini: `none` switches thinking off where the model allows it. */
  reasoning_effort: { reasoning_effort: 'none' },
  /** OpenRouter's unified reasoning object. */
  reasoning: { reasoning: { effort: 'none' } },
  /** Together's hybrid models. */
  reasoning_enabled: { reasoning: { enabled: false } },
  /** DeepSeek, Kimi, GLM. */
  thinking: { thinking: { type: 'disabled' } },
  /** DashScope (Qwen3 hybrid models) and SiliconFlow. */
  enable_thinking: { enable_thinking: false },
} as const satisfies Record<string, Record<string, unknown>>;

export type ThinkingSwitchId = keyof typeof THINKING_SWITCHES;

export function isThinkingSwitchId(value: unknown): value is ThinkingSwitchId {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(THINKING_SWITCHES, value);
}

/** The top-level body field a switch sets (what a server's error names when it refuses it). */
export function switchField(id: ThinkingSwitchId): string {
  return Object.keys(THINKING_SWITCHES[id])[0] ?? id;
}

/**
 * For a server we know nothing about: the switches tried in turn. One that is refused (a 4xx
 * naming it) or has no effect (reasoning still streams) is remembered and the next one is used.
 */
export const GENERIC_THINKING_LADDER: readonly ThinkingSwitchId[] = ['chat_template_kwargs', 'reasoning_effort', 'reasoning', 'thinking', 'enable_thinking'];

export type ProviderId =
  | 'openai'
  | 'azure'
  | 'dashscope'
  | 'ollama'
  | 'lmstudio'
  | 'openrouter'
  | 'groq'
  | 'deepseek'
  | 'moonshot'
  | 'mistral'
  | 'gemini'
  | 'together'
  | 'generic';

export interface ProviderProfile {
  id: ProviderId;
  /** For messages: "Mistral", "Azure OpenAI", "the endpoint". */
  label: string;
  /** Thinking switches for forks, in the order to try; [] = none exists, send nothing. */
  thinkingSwitches: readonly ThinkingSwitchId[];
  /** Send stream_options.include_usage (without it most servers send no usage when streaming). */
  usageInStream: boolean;
  /** Send reasoning_content back on assistant messages (DeepSeek and Kimi thinking modes need it). */
  passReasoning: boolean;
  /** Send a tool call's extra_content back (Gemini 3 requires its thought signatures). */
  passToolExtras: boolean;
}

const GENERIC: ProviderProfile = {
  id: 'generic',
  label: 'the endpoint',
  thinkingSwitches: GENERIC_THINKING_LADDER,
  usageInStream: true,
  passReasoning: false,
  passToolExtras: false,
};

/**
 * The profile for an endpoint and model. Sources, per host:
 * - OpenAI: unknown fields are refused ("Unrecognized request argument supplied"); gpt-5.1+ take
 *   reasoning_effort "none", other models refuse it (learned per model).
 * - Azure OpenAI: stream_options exists from api-version 2024-09-01-preview / 2024-10-21 on; older
 *   versions answer "Unknown parameter: 'stream_options'".
 * - DashScope: top-level enable_thinking; thinking-only models (qwq, *-thinking) refuse false.
 * - Ollama: reasoning_effort "none" (docs/api/openai-compatibility, ollama#14820); ignores
 *   chat_template_kwargs.
 * - OpenRouter: reasoning.effort "none" (docs/use-cases/reasoning-tokens).
 * - Groq: refuses unknown properties ("property 'x' is unsupported"), reasoning_content included.
 * - DeepSeek: thinking.type "disabled"; reasoning_content must go back after tool calls
 *   (api-docs.deepseek.com/guides/thinking_mode).
 * - Kimi (Moonshot): thinking models need reasoning_content back on tool-calling turns.
 * - Mistral: refuses stream_options and reasoning_content (422 extra_forbidden); usage comes anyway.
 * - Gemini: reasoning_effort "none" (2.5 Flash); tool calls carry thought signatures in
 *   extra_content that Gemini 3 wants back.
 * - Together: reasoning.enabled false for hybrid models.
 */
export function providerProfile(shape: EndpointShape, model: string): ProviderProfile {
  if (shape.kind !== 'openai') return azureProfile(shape);
  const host = hostOf(shape.baseURL);
  const port = portOf(shape.baseURL);
  if (host === 'api.openai.com') return { ...GENERIC, id: 'openai', label: 'OpenAI', thinkingSwitches: ['reasoning_effort'] };
  if (/(^|\.)dashscope(-intl|-us)?\.aliyuncs\.com$/.test(host) || /\/compatible-mode\/v1$/.test(shape.baseURL)) {
    return { ...GENERIC, id: 'dashscope', label: 'DashScope', thinkingSwitches: isThinkingOnlyQwen(model) ? [] : ['enable_thinking'] };
  }
  if (port === '11434' || host === 'ollama.com' || host.endsWith('.ollama.com')) {
    return { ...GENERIC, id: 'ollama', label: 'Ollama', thinkingSwitches: ['reasoning_effort', 'reasoning'] };
  }
  if (port === '1234') return { ...GENERIC, id: 'lmstudio', label: 'LM Studio' };
  if (host === 'openrouter.ai') return { ...GENERIC, id: 'openrouter', label: 'OpenRouter', thinkingSwitches: ['reasoning'] };
  if (host === 'api.groq.com') return { ...GENERIC, id: 'groq', label: 'Groq', thinkingSwitches: ['reasoning_effort'] };
  if (host === 'api.deepseek.com') return { ...GENERIC, id: 'deepseek', label: 'DeepSeek', thinkingSwitches: ['thinking'], passReasoning: true };
  if (host === 'api.moonshot.ai' || host === 'api.moonshot.cn') {
    return { ...GENERIC, id: 'moonshot', label: 'Kimi (Moonshot)', thinkingSwitches: ['thinking'], passReasoning: true };
  }
  if (host === 'api.mistral.ai' || host === 'codestral.mistral.ai') {
    return { ...GENERIC, id: 'mistral', label: 'Mistral', thinkingSwitches: [], usageInStream: false };
  }
  if (host === 'generativelanguage.googleapis.com') {
    return { ...GENERIC, id: 'gemini', label: 'Gemini', thinkingSwitches: ['reasoning_effort'], passToolExtras: true };
  }
  if (host === 'api.together.xyz' || host === 'api.together.ai') {
    return { ...GENERIC, id: 'together', label: 'Together', thinkingSwitches: ['reasoning_enabled', 'chat_template_kwargs'] };
  }
  return GENERIC;
}

function azureProfile(shape: Exclude<EndpointShape, { kind: 'openai' }>): ProviderProfile {
  const version = shape.kind === 'azure-deployment' ? shape.apiVersion : shape.apiVersion;
  // stream_options arrived with 2024-09-01-preview; dated versions compare as strings.
  const usageInStream = version === undefined || !/^\d{4}-\d{2}-\d{2}/.test(version) || version.slice(0, 10) >= '2024-09-01';
  return { ...GENERIC, id: 'azure', label: 'Azure OpenAI', thinkingSwitches: ['reasoning_effort'], usageInStream };
}

/** DashScope's thinking-only models refuse enable_thinking: false ("restricted to True"). */
function isThinkingOnlyQwen(model: string): boolean {
  return /(^|[-/])(qwq|qvq)|thinking|deepseek-r1/i.test(model);
}

function portOf(url: string): string {
  try {
    return new URL(url).port;
  } catch {
    return '';
  }
}
