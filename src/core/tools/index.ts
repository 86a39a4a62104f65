// The tool set the agent offers (TOOLS.md), in its fixed order, and the path check the speculation
// gate runs before letting a call execute.
import type { ToolArgs, ToolDefinition } from '../messages';
import { PathOutsideWorkspaceError, type WorkspaceFs } from '../fs/workspaceFs';
import { protectedPathsOr, type ProtectedMatch } from '../fs/protectedPaths';
import { agentTool } from './agent';
import { askUserQuestionTool } from './askUserQuestion';
import { editTool } from './edit';
import { exitPlanModeTool } from './exitPlanMode';
import { globTool } from './glob';
import { grepSearchTool } from './grepSearch';
import { listDirectoryTool } from './listDirectory';
import { lspTool } from './lsp';
import { readFileTool } from './readFile';
import { createShellTool, type ShellToolOptions } from './runShellCommand';
import { saveMemoryTool } from './saveMemory';
import { skillTool } from './skill';
import { todoWriteTool } from './todoWrite';
import type { Tool, ToolContext, ToolName } from './types';
import { createWebFetchTool, type WebFetchOptions } from './webFetch';
import { webSearchTool } from './webSearch';
import { writeFileTool } from './writeFile';

export type { Tool, ToolContext, ToolKind, ToolName, ToolResult } from './types';
export type { ShellToolOptions } from './runShellCommand';
export type { WebFetchOptions } from './webFetch';

export interface ToolRegistryOptions {
  shell?: ShellToolOptions;
  webFetch?: WebFetchOptions;
  /** Tools that come and go at run time (MCP servers' tools), offered after the built-ins. */
  extraTools?: ExtraToolSource;
}

/** A source of tools known only at run time; their names never collide with a built-in's (`mcp__…`). */
export interface ExtraToolSource {
  tools(): readonly Tool[];
  /** Makes tools() complete (starts what it lazily starts); resolves, never rejects, within its own timeouts. */
  prepare?(signal?: AbortSignal): Promise<void>;
}

/** The tools a workspace offers (the built-ins and the run-time extras); chat/toolRegistry.ts is the part the chat needs of it. */
export interface WorkspaceToolSet {
  /** The 16 tools in TOOLS.md order (definitions are sent in this order, byte-stable for caching). */
  readonly tools: readonly Tool[];
  get(name: string): Tool | undefined;
  definitions(): ToolDefinition[];
  /** Readies the run-time tools (ToolRegistryOptions.extraTools) before a turn takes its definitions. */
  prepare?(signal?: AbortSignal): Promise<void>;
}

export function createToolRegistry(options: ToolRegistryOptions = {}): WorkspaceToolSet {
  const tools: readonly Tool[] = [
    readFileTool,
    listDirectoryTool,
    globTool,
    grepSearchTool,
    lspTool,
    editTool,
    writeFileTool,
    createShellTool(options.shell),
    createWebFetchTool(options.webFetch),
    webSearchTool,
    todoWriteTool,
    askUserQuestionTool,
    saveMemoryTool,
    agentTool,
    skillTool,
    exitPlanModeTool,
  ];
  const byName = new Map<string, Tool>(tools.map((tool) => [tool.name, tool]));
  const extra = options.extraTools;
  if (!extra) {
    return {
      tools,
      get: (name) => byName.get(name),
      definitions: () => tools.map((tool) => tool.definition),
    };
  }
  // The built-ins first and unchanged, so their definitions stay the same bytes whatever servers run.
  return {
    tools,
    get: (name) => byName.get(name) ?? extra.tools().find((tool) => tool.name === name && !byName.has(tool.name)),
    definitions: () => [...tools.map((tool) => tool.definition), ...extra.tools().filter((tool) => !byName.has(tool.name)).map((tool) => tool.definition)],
    prepare: async (signal) => {
      await extra.prepare?.(signal);
    },
  };
}

/** The tools with default options. */
export const ALL_TOOLS: readonly Tool[] = createToolRegistry().tools;

export const TOOL_NAMES: readonly ToolName[] = ALL_TOOLS.map((tool) => tool.name as ToolName);

export type ToolPathCheck = { ok: true; paths: Record<string, string> } | { ok: false; arg: string; error: PathOutsideWorkspaceError };

/**
 * Places every path argument of a call inside the workspace without running it, so the speculation
 * gate can turn an escaping path into a boundary up front. `paths` maps each given path argument to
 * its workspace-relative form. A path argument that is not a string, or cannot be checked, fails too.
 */
export async function resolveToolPaths(tool: Pick<Tool, 'pathArgs'>, args: ToolArgs, fs: WorkspaceFs): Promise<ToolPathCheck> {
  const paths: Record<string, string> = {};
  for (const arg of tool.pathArgs) {
    const value = args?.[arg];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return { ok: false, arg, error: new PathOutsideWorkspaceError(String(value), `(argument ${arg}) is not a path`) };
    try {
      paths[arg] = await fs.resolve(value);
    } catch (error) {
      if (error instanceof PathOutsideWorkspaceError) return { ok: false, arg, error };
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return { ok: false, arg, error: new PathOutsideWorkspaceError(value, `cannot be checked (${code})`) };
    }
  }
  return { ok: true, paths };
}

/**
 * The first protected path a write call would write (its path arguments as spelled and as
 * resolved), or undefined. Paths that cannot be placed are left to the path check.
 */
export async function findProtectedWrite(tool: Pick<Tool, 'kind' | 'pathArgs'>, args: ToolArgs, context: Pick<ToolContext, 'fs' | 'protectedPaths'>): Promise<ProtectedMatch | undefined> {
  if (tool.kind !== 'write') return undefined;
  const matcher = protectedPathsOr(context.protectedPaths);
  for (const arg of tool.pathArgs) {
    const value = args?.[arg];
    if (typeof value !== 'string') continue;
    let resolved: string;
    try {
      resolved = await context.fs.resolve(value);
    } catch {
      continue;
    }
    const hit = matcher.matchWrite(context.fs.root, value, resolved);
    if (hit) return hit;
  }
  return undefined;
}

export {
  agentTool,
  askUserQuestionTool,
  editTool,
  exitPlanModeTool,
  globTool,
  grepSearchTool,
  listDirectoryTool,
  lspTool,
  readFileTool,
  saveMemoryTool,
  skillTool,
  todoWriteTool,
  webSearchTool,
  writeFileTool,
};
export { createShellTool, createWebFetchTool };
