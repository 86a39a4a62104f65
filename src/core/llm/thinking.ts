// Which extra body fields switch a model's reasoning off, per kind of endpoint. Forks send them on
// every request; they sit outside `messages`/`tools`, so they never change the cached prompt prefix.

/**
 * - DashScope compatible mode documents a top-level `enable_thinking: false` for Qwen3 models.
 * - api.openai.com rejects unknown request fields with HTTP 400, and its reasoning models have no
 *   universal "off" switch, so nothing is sent there.
 * - Everything else (vLLM, SGLang, LM Studio, Ollama, OpenRouter, llama.cpp): vLLM and SGLang
 *   document `chat_template_kwargs: {enable_thinking: false}` (the Qwen3 chat template reads it);
 *   the others ignore fields they do not know, so this is harmless there.
 * The setting can be overridden through the client options for servers that need something else.
 */
export function defaultThinkingOffFields(baseURL: string): Record<string, unknown> {
  const host = hostOf(baseURL);
  if (host === 'api.openai.com') return {};
  if (host === 'dashscope.aliyuncs.com' || host.endsWith('.aliyuncs.com')) return { enable_thinking: false };
  return { chat_template_kwargs: { enable_thinking: false } };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}
