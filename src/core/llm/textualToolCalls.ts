// Spots a tool call the model wrote into its text because the server did not parse it (vLLM
// without --enable-auto-tool-choice, llama.cpp without --jinja): the user gets a hint, not a mystery.

/** Markers the common chat templates use for tool calls (Hermes/Qwen, Llama 3.1, Mistral, DeepSeek). */
const MARKERS = [/<tool_call>\s*\{/, /<\|tool_call\|>|<\|python_tag\|>/, /\[TOOL_CALLS\]/, /<function=[\w.-]+>/, /<｜tool▁calls?▁begin｜>|<\|tool_calls_section_begin\|>/];

/** The hint to show when `text` (an answer without parsed tool calls) holds a tool call as text. */
export function textualToolCallHint(text: string, toolsOffered: boolean): string | undefined {
  if (!toolsOffered || !MARKERS.some((marker) => marker.test(text))) return undefined;
  return (
    'The model wrote a tool call as plain text, so the server is not parsing tool calls. ' +
    'Turn its tool-call parser on: vLLM `--enable-auto-tool-choice --tool-call-parser <parser>`, llama.cpp `--jinja`, ' +
    'SGLang `--tool-call-parser <parser>`; or pick a model whose template supports tools.'
  );
}
