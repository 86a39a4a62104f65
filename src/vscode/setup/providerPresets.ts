// The endpoints the setup picker offers: each preset fills the base URL (or asks for the one part
// that differs per user, such as an Azure resource name) and says whether the server needs a key.
// Pure data and string helpers, no vscode import, so the list is unit-tested.
import { originOf } from './apiKeys';

export type PresetId = 'openai' | 'azure' | 'openrouter' | 'dashscope' | 'ollama' | 'lmstudio' | 'vllm' | 'llamacpp' | 'custom';

/** Whether the server wants an API key: always (cloud), never (local servers), or if it was started with one. */
export type KeyNeed = 'required' | 'none' | 'optional';

export interface ProviderPreset {
  id: PresetId;
  label: string;
  /** The base URL to offer; '' for custom. Contains `{resource}` when `urlPart` is asked for. */
  baseUrl: string;
  key: KeyNeed;
  /** Where to get a key, shown in the key prompt. */
  keyHint?: string;
  /** One line in the picker: what it is and where it runs. */
  detail: string;
  /** The one part of the URL the user must type (Azure's resource name). */
  urlPart?: { placeholder: string; prompt: string; pattern: RegExp; invalid: string };
  /** Settings worth setting along with the endpoint (DashScope's own prefix caching). */
  settings?: Record<string, string>;
  /** Local servers: what to check when nothing answers. */
  notRunningHint?: string;
}

export const PROVIDER_PRESETS: readonly ProviderPreset[] = [
  {
    id: 'openai',
    label: 'OpenAI',
    baseUrl: 'https://api.openai.com/v1',
    key: 'required',
    keyHint: 'Create one at platform.openai.com → API keys.',
    detail: 'GPT models from OpenAI; needs an API key.',
  },
  {
    id: 'azure',
    label: 'Azure OpenAI',
    baseUrl: 'https://{resource}.openai.azure.com/openai/v1',
    key: 'required',
    keyHint: 'Azure portal → your Azure OpenAI resource → Keys and Endpoint.',
    detail: 'Your Azure OpenAI resource (the v1 API); the model is your deployment name. Needs the resource key.',
    urlPart: {
      placeholder: 'my-resource',
      prompt: 'The name of your Azure OpenAI resource: the first part of https://<name>.openai.azure.com',
      pattern: /^[a-z0-9][a-z0-9-]{0,62}$/i,
      invalid: 'A resource name has letters, digits and hyphens only, e.g. contoso-openai',
    },
  },
  {
    id: 'openrouter',
    label: 'OpenRouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    key: 'required',
    keyHint: 'Create one at openrouter.ai → Keys.',
    detail: 'Many providers\u2019 models behind one key.',
  },
  {
    id: 'dashscope',
    label: 'DashScope (Qwen)',
    baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    key: 'required',
    keyHint: 'Model Studio console → API keys. In mainland China use https://dashscope.aliyuncs.com/compatible-mode/v1.',
    detail: 'Alibaba Cloud Model Studio\u2019s OpenAI-compatible mode; also turns on DashScope\u2019s prefix caching.',
    settings: { prefixCaching: 'dashscope' },
  },
  {
    id: 'ollama',
    label: 'Ollama',
    baseUrl: 'http://localhost:11434/v1',
    key: 'none',
    detail: 'Models on this machine; no key. Pull a model with tools support first (ollama pull qwen3).',
    notRunningHint: 'Start it with `ollama serve` (or the Ollama app).',
  },
  {
    id: 'lmstudio',
    label: 'LM Studio',
    baseUrl: 'http://localhost:1234/v1',
    key: 'none',
    detail: 'Models on this machine; no key. Start the server in LM Studio\u2019s Developer tab.',
    notRunningHint: 'Start the server in LM Studio\u2019s Developer tab (or `lms server start`).',
  },
  {
    id: 'vllm',
    label: 'vLLM',
    baseUrl: 'http://localhost:8000/v1',
    key: 'optional',
    keyHint: 'Only if the server was started with --api-key; otherwise leave it empty.',
    detail: 'Your vLLM server; start it with --enable-auto-tool-choice and a --tool-call-parser so the agent can use tools.',
    notRunningHint: 'Start it with `vllm serve <model> --enable-auto-tool-choice --tool-call-parser <parser>`.',
  },
  {
    id: 'llamacpp',
    label: 'llama.cpp server',
    baseUrl: 'http://localhost:8080/v1',
    key: 'optional',
    keyHint: 'Only if llama-server was started with --api-key; otherwise leave it empty.',
    detail: 'llama-server on this machine; start it with --jinja so the agent can use tools.',
    notRunningHint: 'Start it with `llama-server -m <model.gguf> --jinja`.',
  },
  {
    id: 'custom',
    label: 'Another OpenAI-compatible endpoint',
    baseUrl: '',
    key: 'optional',
    keyHint: 'Leave it empty if the server needs no key.',
    detail: 'Any server that speaks the OpenAI chat completions API; type its URL.',
  },
];

export function presetById(id: string): ProviderPreset | undefined {
  return PROVIDER_PRESETS.find((preset) => preset.id === id);
}

/** The preset's base URL with the user's part filled in (Azure's resource name). */
export function presetUrl(preset: ProviderPreset, part?: string): string {
  return preset.urlPart ? preset.baseUrl.replace('{resource}', (part ?? '').trim().toLowerCase()) : preset.baseUrl;
}

/** Why a typed base URL cannot be used, in words for the input box; undefined when it is fine. */
export function baseUrlProblem(value: string): string | undefined {
  const text = value.trim();
  if (text === '') return 'Enter the endpoint\u2019s URL, e.g. http://localhost:11434/v1';
  if (!originOf(text)) return 'Enter an http(s) URL, e.g. https://api.openai.com/v1';
  const url = new URL(text);
  if (url.username || url.password) return 'Leave credentials out of the URL: the key is stored separately and sent only to this endpoint';
  if (url.search || url.hash) return 'Enter the API root without ?query or #fragment, e.g. https://api.openai.com/v1';
  return undefined;
}

/** The URL as it is stored: trimmed, without a trailing slash (the client appends /chat/completions). */
export function normalizeBaseUrl(value: string): string {
  return value.trim().replace(/\/+$/, '');
}

/** The preset a stored base URL came from, for "current" marks in the picker. */
export function presetForUrl(baseUrl: string): ProviderPreset | undefined {
  const url = normalizeBaseUrl(baseUrl);
  if (!url) return undefined;
  return PROVIDER_PRESETS.find((preset) => {
    if (!preset.baseUrl) return false;
    if (!preset.urlPart) return preset.baseUrl === url;
    const [before, after] = preset.baseUrl.split('{resource}');
    return url.startsWith(before) && url.endsWith(after) && preset.urlPart.pattern.test(url.slice(before.length, url.length - after.length));
  });
}
