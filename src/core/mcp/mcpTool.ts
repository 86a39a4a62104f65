// An MCP server's tool as one of the agent's tools: kind `mcp`, its schema normalised for providers,
// its annotations kept for the approvals and the speculation gate, its result as text.
import type { ToolArgs } from '../messages';
import type { McpToolName, Tool, ToolResult } from '../tools/types';
import type { McpListedTool } from './serverConnection';
import { normalizeToolSchema } from './schema';
import { mcpResultText, type McpCallResult } from './toolResult';

/** Long enough for real descriptions; a server cannot fill the prompt with one tool's prose. */
const MAX_DESCRIPTION_CHARS = 4000;

export interface McpToolTarget {
  server: string;
  runAhead: boolean;
  call(tool: string, args: ToolArgs, signal?: AbortSignal): Promise<McpCallResult>;
}

export function createMcpTool(name: McpToolName, listed: McpListedTool, target: McpToolTarget): Tool {
  const annotations = listed.annotations ?? {};
  const about = (listed.description ?? listed.title ?? annotations.title ?? '').trim();
  const description = `${about === '' ? `The ${listed.name} tool` : about.slice(0, MAX_DESCRIPTION_CHARS)}\n(MCP server "${target.server}", tool "${listed.name}".)`;
  return {
    name,
    kind: 'mcp',
    mcp: {
      server: target.server,
      tool: listed.name,
      runAhead: target.runAhead,
      ...(typeof annotations.readOnlyHint === 'boolean' ? { readOnlyHint: annotations.readOnlyHint } : {}),
      ...(typeof annotations.openWorldHint === 'boolean' ? { openWorldHint: annotations.openWorldHint } : {}),
      ...(typeof annotations.destructiveHint === 'boolean' ? { destructiveHint: annotations.destructiveHint } : {}),
    },
    definition: { type: 'function', function: { name, description, parameters: normalizeToolSchema(listed.inputSchema) } },
    pathArgs: [],
    summarize: (args) => summarizeMcpCall(target.server, listed.name, args),
    async execute(args, context): Promise<ToolResult> {
      try {
        const result = await target.call(listed.name, args ?? {}, context.signal);
        const output = mcpResultText(result);
        return { ok: output.ok, output: output.text };
      } catch (error) {
        if (context.signal?.aborted) return { ok: false, output: 'The call was cancelled.' };
        return { ok: false, output: `The MCP call failed: ${error instanceof Error ? error.message : String(error)}` };
      }
    },
  };
}

/** "everything › echo message=hi", short enough for a tool card's header. */
export function summarizeMcpCall(server: string, tool: string, args: ToolArgs | null): string {
  const parts = Object.entries(args ?? {}).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const text = parts.join(' ').replace(/\s+/g, ' ');
  return `${server} › ${tool}${text ? ` ${text.length > 80 ? `${text.slice(0, 79)}…` : text}` : ''}`;
}
