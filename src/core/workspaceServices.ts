// Everything the engine needs for one workspace folder, built the same way for the extension and
// the headless CLI: the real file system, the tools, the process runner, the shell classifier,
// the system prompt and a factory for speculation overlays.
import { buildSystemPrompt } from './chat/systemPrompt';
import type { ToolRegistry } from './chat/toolRegistry';
import { OverlayFs } from './followup/overlayFs';
import type { SpeculationOverlay } from './followup/speculation';
import { NodeWorkspaceFs } from './fs/nodeWorkspaceFs';
import { NodeProcessRunner } from './process/nodeProcessRunner';
import { isShellCommandReadOnly } from './shell';
import { createToolRegistry } from './tools';
import type { ToolContext } from './tools/types';

export interface WorkspaceServices {
  fs: NodeWorkspaceFs;
  tools: ToolRegistry;
  toolContext: ToolContext;
  systemPrompt: string;
  classifyShell: (command: string) => Promise<{ readOnly: boolean; reason: string }>;
  createOverlay: () => Promise<SpeculationOverlay>;
}

export interface WorkspaceServicesOptions {
  /** Where `speculate-<uid>/<pid>/<id>/` overlays live; the OS temp folder by default (never inside a workspace). */
  tmpRoot?: string;
  /** Tried when tmpRoot lies inside a workspace (tests pass their own instead of the machine's). */
  fallbackTmpRoots?: readonly string[];
  /** Other folders open beside this one: overlays never go inside them either. */
  otherWorkspaces?: readonly string[];
  /** Extra tool ports (LSP from the editor, a question prompter). */
  toolContext?: Partial<Omit<ToolContext, 'fs'>>;
}

export async function openWorkspaceServices(root: string, options: WorkspaceServicesOptions = {}): Promise<WorkspaceServices> {
  const fs = await NodeWorkspaceFs.open(root);
  const registry = createToolRegistry();
  const toolContext: ToolContext = { processRunner: new NodeProcessRunner(), todos: { items: [] }, ...options.toolContext, fs };
  return {
    fs,
    tools: registry,
    toolContext,
    systemPrompt: buildSystemPrompt({ workspaceRoot: fs.root, platform: process.platform }),
    classifyShell: isShellCommandReadOnly,
    createOverlay: () =>
      OverlayFs.create({
        base: fs,
        ...(options.tmpRoot ? { tmpRoot: options.tmpRoot } : {}),
        ...(options.fallbackTmpRoots ? { fallbackTmpRoots: options.fallbackTmpRoots } : {}),
        ...(options.otherWorkspaces ? { avoidRoots: options.otherWorkspaces } : {}),
      }),
  };
}
