// The speculation tool gate (TOOLS.md): for each tool call the speculative loop wants to run, decide
// allow (run as is), redirect (run against the overlay), sandbox (a shell command run in the
// sandbox over the overlay, SANDBOX.md) or boundary (stop here; the user takes over).
// Fail closed: anything the gate cannot place with certainty is a boundary, with a reason in words.
import type { WorkspaceFs } from '../fs/workspaceFs';
import { PathOutsideWorkspaceError } from '../fs/workspaceFs';
import { describeProtected, type ProtectedPaths } from '../fs/protectedPaths';
import { findProtectedWrite } from '../tools';
import type { Tool } from '../tools/types';
import type { ApprovalMode } from '../chat/approvals';
import type { ToolArgs } from '../messages';
import type { CommandNeed } from '../sandbox/commandNeeds';

export type { ApprovalMode };
export type BoundaryType = 'shell' | 'edit' | 'denied_tool' | 'unknown_tool' | 'path' | 'limit';

/** Why a speculation stopped; shown to the user ("Stopped before run_shell_command: …"). */
export interface Boundary {
  type: BoundaryType;
  tool: string;
  detail: string;
}

export type GateDecision =
  | { decision: 'allow'; reason: string }
  | { decision: 'redirect'; reason: string }
  /** writable: its writes land in the overlay; otherwise the workspace is read-only inside. git: .git too, in the speculation's private git layer (commit ahead). */
  | { decision: 'sandbox'; reason: string; writable: boolean; git?: true }
  | { decision: 'boundary'; reason: string; boundary: Boundary };

export interface GateContext {
  approvalMode: ApprovalMode;
  /** The file system the call would run against (the overlay during speculation). */
  fs: WorkspaceFs;
  /** True once the overlay holds writes that a shell command, reading the real disk, would not see. */
  overlayHasWrites: boolean;
  /** The read-only shell classifier (src/core/shell), for a command run in `directory` (workspace-relative). */
  classifyShell: (command: string, directory?: string) => Promise<{ readOnly: boolean; reason: string }>;
  /** speculate.protectedPaths; TOOLS.md's defaults when absent. A write to one is a boundary in every mode. */
  protectedPaths?: ProtectedPaths;
  /**
   * Shell commands can run in the sandbox here (its probe passed); then `commandNeeds` says which
   * still stop (network, a person, the git repository). Absent or false: today's rules.
   */
  sandboxAvailable?: boolean;
  /**
   * 'none': this machine's sandbox (Landlock + seccomp) contains read-only commands only — it has
   * no overlay, so a command there neither writes nor sees the speculated edits. Absent: 'overlay'.
   */
  sandboxWrites?: 'overlay' | 'none';
  /** Why that sandbox and not the namespaces, for the reasons given (e.g. "user namespaces are switched off …"). */
  sandboxWhy?: string;
  commandNeeds?: (command: string) => Promise<CommandNeed | null>;
  /**
   * The speculation can commit ahead (src/core/git): a git write `commandNeeds` marks `ahead` (add,
   * commit, a new branch or tag, restore --staged) runs in the sandbox with a private .git.
   */
  gitAhead?: boolean;
}

const NEED_WORDS: Record<CommandNeed['kind'], string> = {
  network: 'needs the network',
  person: 'needs you',
  'git-write': 'changes the git repository',
};

/** The shell rule with a sandbox (SANDBOX.md's table): everything runs inside but what needs the outside. */
async function gateSandboxed(toolName: string, command: string, verdict: { readOnly: boolean; reason: string }, context: GateContext): Promise<GateDecision> {
  let need: CommandNeed | null;
  try {
    need = context.commandNeeds ? await context.commandNeeds(command) : null;
  } catch (error) {
    return boundary('shell', toolName, `\`${command}\` could not be checked (${error instanceof Error ? error.message : String(error)})`);
  }
  const writesAllowed = context.approvalMode === 'auto-edit' || context.approvalMode === 'yolo';
  if (need?.kind === 'git-write' && need.ahead && context.gitAhead && context.sandboxWrites !== 'none' && writesAllowed) {
    return { decision: 'sandbox', reason: 'commits ahead: runs in the sandbox, git writing into the speculation\'s private copy of .git; Tab applies it by compare-and-swap', writable: true, git: true };
  }
  if (need) return boundary('shell', toolName, `\`${command}\` ${NEED_WORDS[need.kind]}: ${need.detail}`);
  if (context.sandboxWrites === 'none') {
    const why = context.sandboxWhy ? ` (${context.sandboxWhy})` : '';
    if (verdict.readOnly) return { decision: 'sandbox', reason: `read-only command, run in the Landlock sandbox${why}: the workspace read-only, no network`, writable: false };
    return boundary('shell', toolName, `\`${command}\` may change files (${verdict.reason}). Commands that change files stop speculation here: this machine's sandbox is Landlock${why}, which contains read-only commands only (no overlay to take their writes)`);
  }
  if (writesAllowed) return { decision: 'sandbox', reason: verdict.readOnly ? 'read-only command, run in the sandbox over the speculation' : 'runs in the sandbox; its writes go into the overlay', writable: true };
  if (verdict.readOnly) return { decision: 'sandbox', reason: 'read-only command, run in the sandbox with the workspace read-only', writable: false };
  return boundary('shell', toolName, `\`${command}\` may change files (${verdict.reason}), which needs your approval in ${context.approvalMode} mode`);
}

function boundary(type: BoundaryType, tool: string, detail: string): GateDecision {
  return { decision: 'boundary', reason: detail, boundary: { type, tool, detail } };
}

/** Checks every path-valued argument; the first that cannot be placed inside the workspace is returned. */
async function firstOutsidePath(tool: Tool, args: ToolArgs, fs: WorkspaceFs): Promise<string | undefined> {
  for (const name of tool.pathArgs) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return `argument ${name} is not a path`;
    try {
      await fs.resolve(value);
    } catch (error) {
      if (error instanceof PathOutsideWorkspaceError) return error.message;
      return `cannot place ${name} "${value}" inside the workspace: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return undefined;
}

const INTERACTION_DETAIL: Record<string, string> = {
  ask_user_question: 'it asks you a question',
  todo_write: 'it updates the visible task list',
  save_memory: 'it saves a memory',
  agent: 'it starts a sub-agent',
  skill: 'it runs a skill',
  exit_plan_mode: 'it asks to leave plan mode',
};

/**
 * MCP (TOOLS.md): a server is a program of the user's, so its calls wait for them, unless the user
 * marked the server "may run ahead" and the tool declares it only reads (readOnlyHint: true) a closed
 * world (openWorldHint: false; the protocol's default for an absent hint is an open world).
 */
function gateMcpCall(toolName: string, tool: Tool, context: GateContext): GateDecision {
  const info = tool.mcp;
  if (!info) return boundary('unknown_tool', toolName, `${toolName} is an MCP tool without its server's details, so it cannot run ahead of you`);
  const who = `${info.tool} of MCP server "${info.server}"`;
  if (!info.runAhead) return boundary('denied_tool', toolName, `${who} waits for you: the server is not marked "may run ahead" (speculate.runAhead)`);
  if (info.readOnlyHint !== true) return boundary('denied_tool', toolName, `${who} waits for you: it does not declare itself read-only (readOnlyHint)`);
  if (info.openWorldHint !== false) return boundary('denied_tool', toolName, `${who} waits for you: it may reach outside the machine (openWorldHint${info.openWorldHint === undefined ? ' not declared false' : ''})`);
  // The server reads the real files, not the speculated edits: its answer would be stale.
  if (context.overlayHasWrites) return boundary('denied_tool', toolName, `${who} would not see the speculated edits`);
  return { decision: 'allow', reason: `the server may run ahead and ${info.tool} only reads` };
}

export async function gateToolCall(toolName: string, tool: Tool | undefined, args: ToolArgs, context: GateContext): Promise<GateDecision> {
  if (!tool || tool.name !== toolName) {
    return boundary('unknown_tool', toolName, `${toolName} is not a built-in tool, so it cannot run ahead of you`);
  }
  if (tool.kind === 'mcp') return gateMcpCall(toolName, tool, context);
  // Network and interaction tools stop before anything else: they need the user whatever the paths.
  if (tool.kind === 'network') {
    return boundary('denied_tool', toolName, `${toolName} reaches the network, which needs your consent`);
  }
  // A sub-agent reads only; each of its calls is put to this gate as it comes (speculation.ts), and the first that would not pass makes the agent call a boundary.
  if (toolName === 'agent') return { decision: 'allow', reason: "the sub-agent's calls each pass this gate, or the call stops at the first that does not" };
  if (tool.kind === 'interaction') {
    return boundary('denied_tool', toolName, `${toolName} needs you: ${INTERACTION_DETAIL[toolName] ?? 'it interacts with you'}`);
  }
  const outside = await firstOutsidePath(tool, args, context.fs);
  if (outside) return boundary('path', toolName, outside);
  // Before the mode: not even yolo lets a speculation write what makes tools run programs or holds secrets.
  const guarded = await findProtectedWrite(tool, args, { fs: context.fs, protectedPaths: context.protectedPaths });
  if (guarded) return boundary('edit', toolName, `${describeProtected(guarded)}; writing it needs your approval`);

  switch (tool.kind) {
    case 'read':
      return { decision: 'allow', reason: 'reads see the overlay' };
    case 'write':
      if (context.approvalMode === 'auto-edit' || context.approvalMode === 'yolo') {
        return { decision: 'redirect', reason: 'the write goes into the overlay' };
      }
      return boundary('edit', toolName, `edits need your approval in ${context.approvalMode} mode`);
    case 'shell': {
      const command = args.command;
      if (typeof command !== 'string' || command.trim() === '') {
        return boundary('shell', toolName, 'the command is missing');
      }
      if ((!context.sandboxAvailable || context.sandboxWrites === 'none') && context.overlayHasWrites) {
        // The command would read the real files, not the speculated edits: its answer would be stale.
        return boundary('shell', toolName, `\`${command}\` would not see the speculated edits${context.sandboxAvailable ? ' (the Landlock sandbox here has no overlay to show them)' : ''}`);
      }
      let verdict: { readOnly: boolean; reason: string };
      try {
        verdict = await context.classifyShell(command, typeof args.directory === 'string' ? args.directory : undefined);
      } catch (error) {
        verdict = { readOnly: false, reason: `classifier failed: ${error instanceof Error ? error.message : String(error)}` };
      }
      if (context.sandboxAvailable) return gateSandboxed(toolName, command, verdict, context);
      if (verdict.readOnly) return { decision: 'allow', reason: 'read-only command' };
      return boundary('shell', toolName, `\`${command}\` may change files (${verdict.reason})`);
    }
  }
}

/** The gate's word on a nested call (a sub-agent's): only what it would allow as it is runs. */
export async function gateNestedCall(toolName: string, tool: Tool | undefined, args: ToolArgs, context: GateContext): Promise<{ pass: true } | { pass: false; detail: string }> {
  const decision = await gateToolCall(toolName, tool, args, context);
  if (decision.decision === 'allow') return { pass: true };
  return { pass: false, detail: decision.decision === 'boundary' ? decision.boundary.detail : `it would need the ${decision.decision} path` };
}
