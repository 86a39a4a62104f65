// Everything the engine needs for one workspace folder, built the same way for the extension and
// the headless CLI: the real file system, the tools, the process runner, the shell classifier,
// the system prompt and a factory for speculation overlays.
import { buildSystemPrompt } from './chat/systemPrompt';
import type { ToolRegistry } from './chat/toolRegistry';
import { OverlayFs } from './followup/overlayFs';
import type { SpeculationOverlay } from './followup/speculation';
import { defaultStateDir } from './checkpoints/stateDir';
import { FolderRoutingFs } from './fs/folderRoutingFs';
import { NodeWorkspaceFs } from './fs/nodeWorkspaceFs';
import { FileWorkspaceLock, processLock, type WorkspaceLock } from './fs/workspaceLock';
import { DEFAULT_PROTECTED_PATHS, ProtectedPaths } from './fs/protectedPaths';
import { NodeProcessRunner } from './process/nodeProcessRunner';
import { toAbsolute } from './fs/paths';
import { isShellCommandReadOnly } from './shell';
import { createToolRegistry, type ExtraToolSource } from './tools';
import type { ToolContext } from './tools/types';
import { sharedShellSandbox } from './sandbox';

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
  /** The workspace lock every accept and live write of this folder takes (shared with the user's other processes). */
  lock: WorkspaceLock;
  /** Said once to the user or the log: e.g. the state folder could not hold the lock, so it is this process's only. */
  warnings: string[];
}

export interface WorkspaceServicesOptions {
  /** Where `speculate-<uid>/<pid>/<id>/` overlays live; the OS temp folder by default (never inside a workspace). */
  tmpRoot?: string;
  /** Tried when tmpRoot lies inside a workspace (tests pass their own instead of the machine's). */
  fallbackTmpRoots?: readonly string[];
  /**
   * Other folders open beside this one (a multi-root window): overlays never go inside them, and
   * the live chat's tools may use paths into them (`../beta/x`) as those folders' own paths.
   */
  otherWorkspaces?: readonly string[];
  /** Extra tool ports (LSP from the editor, a question prompter). */
  toolContext?: Partial<Omit<ToolContext, 'fs'>>;
  /** speculate.protectedPaths (globs); TOOLS.md's list by default. */
  protectedPaths?: readonly string[];
  /** The engine's private state folder (its `locks/` hold the workspace locks); $XDG_STATE_HOME/speculate by default. */
  stateDir?: string;
  /** The speculation sandbox (SANDBOX.md) as the settings say; absent: none (tests, hosts without the setting). */
  sandbox?: SandboxSettings;
  /** Tools known only at run time (the window's MCP servers), offered after the built-ins. */
  extraTools?: ExtraToolSource;
}

/**
 * The lock shared with every process of the user; where the state folder cannot hold it, this
 * process's own (two windows are then not held apart, which the warning says).
 */
async function openLock(root: string, stateDir: string, warnings: string[]): Promise<WorkspaceLock> {
  try {
    return await FileWorkspaceLock.open({ stateDir, root });
  } catch (error) {
    warnings.push(`Speculate could not keep its workspace lock in ${stateDir} (${error instanceof Error ? error.message : String(error)}); accepts in another window on this folder are not held apart from this one's.`);
    return processLock(root);
  }
}

export interface SandboxSettings {
  enabled: boolean;
  timeoutMs: number;
  maxWriteBytes: number;
}

/** Puts this process's sandbox (or none) and its limits into a tool context; again whenever the settings change. */
export function applySandboxSettings(toolContext: ToolContext, settings: SandboxSettings): void {
  if (settings.enabled) toolContext.shellSandbox = sharedShellSandbox();
  else delete toolContext.shellSandbox;
  toolContext.sandboxLimits = { timeoutMs: settings.timeoutMs, maxWriteBytes: settings.maxWriteBytes };
}

export async function openWorkspaceServices(root: string, options: WorkspaceServicesOptions = {}): Promise<WorkspaceServices> {
  const warnings: string[] = [];
  const stateDir = options.stateDir ?? defaultStateDir();
  const lock = await openLock(root, stateDir, warnings);
  const fs = await NodeWorkspaceFs.open(root, { lock });
  // Each other folder's live writes take that folder's own lock (another window may have it open alone).
  const others = await Promise.all((options.otherWorkspaces ?? []).map(async (folder) => NodeWorkspaceFs.open(folder, { lock: await openLock(folder, stateDir, warnings) })));
  const registry = createToolRegistry(options.extraTools ? { extraTools: options.extraTools } : {});
  const protectedPaths = new ProtectedPaths(options.protectedPaths ?? DEFAULT_PROTECTED_PATHS);
  // The overlay stays on `fs` alone: a speculation that reaches into another folder stops there.
  const toolFs = others.length > 0 ? new FolderRoutingFs(fs, others) : fs;
  const toolContext: ToolContext = { processRunner: new NodeProcessRunner(), todos: { items: [] }, protectedPaths, ...options.toolContext, fs: toolFs };
  if (options.sandbox) applySandboxSettings(toolContext, options.sandbox);
  return {
    protectedPaths,
    lock,
    warnings,
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
        lock,
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
