// Small fake tools for the chat tests: each records its calls; behaviour is passed in per test.
import type { ToolArgs, ToolDefinition } from '../../../src/core/messages';
import type { Tool, ToolContext, ToolKind, ToolName, ToolResult } from '../../../src/core/tools/types';
import type { WorkspaceFs } from '../../../src/core/fs/workspaceFs';

export interface FakeTool extends Tool {
  calls: ToolArgs[];
}

export function fakeTool(
  name: ToolName,
  kind: ToolKind,
  execute: (args: ToolArgs, context: ToolContext) => Promise<ToolResult> | ToolResult = () => ({ ok: true, output: `${name} ran` }),
): FakeTool {
  const calls: ToolArgs[] = [];
  const definition: ToolDefinition = {
    type: 'function',
    function: { name, description: `fake ${name}`, parameters: { type: 'object', properties: { file_path: { type: 'string' }, command: { type: 'string' } } } },
  };
  return {
    name,
    kind,
    definition,
    pathArgs: ['file_path'],
    calls,
    summarize: (args) => String(args.file_path ?? args.command ?? args.url ?? name),
    execute: async (args, context) => {
      calls.push(args);
      return execute(args, context);
    },
  };
}

/** A WorkspaceFs nobody should touch: the fake tools keep their own state. */
export const unusedFs = new Proxy({} as WorkspaceFs, {
  get(_target, property) {
    throw new Error(`the fake tools do not use the file system (${String(property)})`);
  },
});
