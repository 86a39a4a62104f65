// Everything the engine needs for one workspace folder, built the same way for the extension and
// the headless CLI: the real file system, the tools, the process runner, the shell classifier,
// the system prompt and a factory for speculation overlays.
import { buildSystemPrompt } from './chat/systemPrompt';
import type { ToolRegistry } from './chat/toolRegistry';
import { OverlayFs } from './followup/overlayFs';
import type { SpeculationOverlay } from './followup/speculation';
import { NodeWorkspaceFs } from './fs/nodeWorkspaceFs';
import { DEFAULT_PROTECTED_PATHS, ProtectedPaths } from './fs/protectedPaths';
import { NodeProcessRunner } from './process/nodeProcessRunner';
import { toAbsolute } from './fs/paths';
import { isShellCommandReadOnly } from './shell';
import { createToolRegistry } from './tools';
import type { ToolContext } from './tools/types';

export interface WorkspaceServices {
  fs: NodeWorkspaceFs;
  tools: ToolRegistry;
  toolContext: ToolContext;
  systemPrompt: string;
  /** Whether `command`, run in `directory` (workspace-relative; default the root), is read-only. */
  classifyShell: (command: string, directory?: string) => Promise<{ readOnly: boolean; reason: string }>;
  createOverlay: () => Promise<SpeculationOverlay>;
  /** speculate.protectedPaths as the tools, the gate and the overlays see it; update() applies a changed setting. */
  protectedPaths: ProtectedPaths;
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
  /** speculate.protectedPaths (globs); TOOLS.md's list by default. */
  protectedPaths?: readonly string[];
}

export async function openWorkspaceServices(root: string, options: WorkspaceServicesOptions = {}): Promise<WorkspaceServices> {
  const fs = await NodeWorkspaceFs.open(root);
  const registry = createToolRegistry();
  const protectedPaths = new ProtectedPaths(options.protectedPaths ?? DEFAULT_PROTECTED_PATHS);
  const toolContext: ToolContext = { processRunner: new NodeProcessRunner(), todos: { items: [] }, protectedPaths, ...options.toolContext, fs };
  return {
    protectedPaths,
    fs,
    tools: registry,
    toolContext,
    systemPrompt: buildSystemPrompt({ workspaceRoot: fs.root, platform: process.platform }),
    classifyShell: (command, directory) => classifyIn(fs, command, directory),
    createOverlay: () =>
      OverlayFs.create({
        base: fs,
        ...(options.tmpRoot ? { tmpRoot: options.tmpRoot } : {}),
        ...(options.fallbackTmpRoots ? { fallbackTmpRoots: options.fallbackTmpRoots } : {}),
        ...(options.otherWorkspaces ? { avoidRoots: options.otherWorkspaces } : {}),
        protectedPaths,
      }),
  };
}

/** The classifier for a command run in `directory`: a folder that cannot be placed inside the workspace is a refusal. */
async function classifyIn(fs: NodeWorkspaceFs, command: string, directory: string | undefined): Promise<{ readOnly: boolean; reason: string }> {
  let cwd = fs.root;
  if (directory !== undefined && directory.trim() !== '') {
    try {
      cwd = toAbsolute(fs.root, await fs.resolve(directory));
    } catch (error) {
      return { readOnly: false, reason: `path: the directory ${directory} cannot be placed inside the workspace (${error instanceof Error ? error.message : String(error)})` };
    }
  }
  return isShellCommandReadOnly(command, { workspaceRoot: fs.root, cwd });
}
