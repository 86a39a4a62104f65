// What a finish_reason means for the caller: the answer is complete, it was cut at the output limit,
// a content filter stopped it, or the server gave up. Servers spell these several ways.

export type StopKind = 'complete' | 'length' | 'content_filter' | 'error';

/**
 * - OpenAI / vLLM / most: stop, tool_calls, length, content_filter (function_call is the old name).
 * - Anthropic through gateways (LiteLLM, OpenRouter): end_turn, max_tokens, tool_use.
 * - Gemini through gateways: STOP, MAX_TOKENS, SAFETY, RECITATION, PROHIBITED_CONTENT.
 * - OpenRouter: "error" when the upstream failed mid-answer.
 * - llama.cpp / TGI: eos, stop_sequence.
 */
export function stopKind(finishReason: string | null): StopKind {
  const reason = (finishReason ?? '').toLowerCase();
  if (reason === 'length' || reason === 'max_tokens' || reason === 'max_output_tokens' || reason === 'model_length') return 'length';
  if (reason === 'content_filter' || reason === 'safety' || reason === 'recitation' || reason === 'prohibited_content' || reason === 'blocklist' || reason === 'spii') {
    return 'content_filter';
  }
  if (reason === 'error') return 'error';
  return 'complete';
}
