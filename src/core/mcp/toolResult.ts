// An MCP tools/call result as the model receives it: text, with each non-text part described in
// words (tool messages carry text only here), cut with a note when it is huge, isError as a failure.

/** The result shape of tools/call (CallToolResult), loosely: a server may send parts we do not know. */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  /** Pre-2025 servers answer `{toolResult}` instead of content. */
  toolResult?: unknown;
}

/** About 12k tokens: room for a useful answer without one call crowding out the conversation. */
export const MCP_RESULT_MAX_CHARS = 50_000;

export interface McpToolOutput {
  ok: boolean;
  text: string;
}

export function mcpResultText(result: McpCallResult, maxChars: number = MCP_RESULT_MAX_CHARS): McpToolOutput {
  const parts: string[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  for (const part of content) parts.push(partText(part));
  if (content.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent, null, 2));
  if (content.length === 0 && result.toolResult !== undefined) parts.push(typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult, null, 2));
  let text = parts.join('\n\n');
  if (text === '') text = result.isError ? 'The tool failed without saying why.' : '(The tool returned no content.)';
  return { ok: result.isError !== true, text: cut(text, maxChars) };
}

function partText(part: unknown): string {
  if (typeof part !== 'object' || part === null) return String(part);
  const p = part as Record<string, unknown>;
  switch (p.type) {
    case 'text':
      return typeof p.text === 'string' ? p.text : '';
    case 'image':
    case 'audio':
      return `[${p.type}: ${String(p.mimeType ?? 'unknown type')}, ${sizeOfBase64(p.data)} — not shown: tool results reach the model as text only]`;
    case 'resource': {
      const resource = (p.resource ?? {}) as Record<string, unknown>;
      const uri = String(resource.uri ?? '');
      if (typeof resource.text === 'string') return `[resource ${uri}]\n${resource.text}`;
      return `[resource ${uri}: ${String(resource.mimeType ?? 'binary')}, ${sizeOfBase64(resource.blob)} — binary content not shown]`;
    }
    case 'resource_link':
      return `[resource link: ${String(p.name ?? '')} ${String(p.uri ?? '')}${typeof p.description === 'string' ? ` — ${p.description}` : ''}]`;
    default:
      return JSON.stringify(part);
  }
}

function sizeOfBase64(data: unknown): string {
  if (typeof data !== 'string') return 'no data';
  const bytes = Math.floor((data.replace(/=+$/, '').length * 3) / 4);
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} kB`;
}

/** Keeps the head and the tail (errors and summaries sit at either end) and says how much is left out. */
function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.floor(maxChars * 0.8);
  const tail = maxChars - head;
  const omitted = text.length - head - tail;
  return `${text.slice(0, head)}\n\n[… ${omitted} characters of the tool's result were left out (it returned ${text.length}); ask for less, e.g. a narrower query or a page of the results …]\n\n${text.slice(text.length - tail)}`;
}
