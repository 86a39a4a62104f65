// The approval scheduler of the main chat: given the approval mode and a tool call, decides whether
// it runs, asks the user first, or is refused (TOOLS.md "Approval modes"), and remembers "always".
import { protectedPathsOr, type ProtectedMatch } from '../fs/protectedPaths';
import { findProtectedWrite } from '../tools';
import type { Tool, ToolContext, ToolKind } from '../tools/types';
import { unifiedDiff } from '../tools/unifiedDiff';
import type { ToolArgs } from '../messages';

/** TOOLS.md's approval modes, from most to least careful. */
export const APPROVAL_MODES = ['plan', 'default', 'auto-edit', 'yolo'] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

/**
 * `readOnly` on run: the call runs without the user's approval only because the shell classifier
 * judged the command read-only, so it must run in the environment that verdict assumes
 * (ToolContext.approvedAsReadOnly).
 */
export type ApprovalDecision = { action: 'run'; readOnly?: true } | { action: 'ask'; change?: ProposedChange } | { action: 'refuse'; reason: string };

/** What a write call would change, for the user to judge before allowing it. */
export interface ProposedChange {
  /** Workspace-relative path of the file it writes. */
  path: string;
  /** Unified diff of the file as it is now against the call's result ('--- /dev/null' for a new file). */
  diff: string;
  /** Set when the file is a protected path (speculate.protectedPaths): which glob, and why it matters. */
  protected?: { pattern: string; why: string };
}

export type ApprovalAnswer = 'allow' | 'deny' | 'allow_always';

export interface ApprovalRequest {
  callId: string;
  tool: string;
  kind: ToolKind;
  args: ToolArgs;
  /** The one-line summary the UI shows, e.g. "src/app.ts" or the shell command. */
  summary: string;
  /** Write calls: the change itself (a diff), and whether it touches a protected path. */
  change?: ProposedChange;
  /** Aborted when the turn is cancelled while the question is open. */
  signal?: AbortSignal;
}

/**
 * "Allow" for part of an edit: the user dropped some of its hunks in the diff. `content` is written
 * instead of what the tool would write, if the file is still `expected` (undefined: absent), and
 * `note` is the call's result, so the model is told which parts were applied.
 */
export interface PartialApproval {
  answer: 'allow';
  partial: { path: string; expected: Uint8Array | undefined; content: Uint8Array; note: string };
}

/** Asks the user (the chat view shows a prompt; the CLI answers by policy). */
export interface ApprovalPrompter {
  request(request: ApprovalRequest): Promise<ApprovalAnswer | PartialApproval>;
}

/** Injected so core/chat does not depend on the shell parser (src/core/shell owns it). */
export type IsReadOnlyCommand = (command: string, directory?: string) => Promise<boolean>;

export interface ApprovalSchedulerOptions {
  mode: ApprovalMode;
  isReadOnly: IsReadOnlyCommand;
}

interface ToolIdentity {
  name: string;
  kind: ToolKind;
}

/** A tool as decide() can use it: its name and kind, and for write tools the paths and a preview. */
type DecidedTool = ToolIdentity & Partial<Pick<Tool, 'pathArgs' | 'preview' | 'mcp'>>;

/** Where the call would run: the workspace (to place paths and preview writes) and its protected paths. */
export type ApprovalContext = Pick<ToolContext, 'fs' | 'protectedPaths'>;

export class ApprovalScheduler {
  private currentMode: ApprovalMode;
  private readonly isReadOnly: IsReadOnlyCommand;
  /** Grants from "allow always", for the life of this scheduler (one chat session). */
  private readonly always = new Set<string>();

  constructor(options: ApprovalSchedulerOptions) {
    this.currentMode = options.mode;
    this.isReadOnly = options.isReadOnly;
  }

  get mode(): ApprovalMode {
    return this.currentMode;
  }

  setMode(mode: ApprovalMode): void {
    this.currentMode = mode;
  }

  async decide(tool: DecidedTool, args: ToolArgs, context?: ApprovalContext): Promise<ApprovalDecision> {
    const mode = this.currentMode;
    if (tool.kind === 'read') return RUN;
    if (mode === 'plan') {
      // The one way out of plan mode is to present the plan; the user approves it like any call.
      if (tool.name === 'exit_plan_mode') return ASK;
      // A sub-agent has the read tools only, so it investigates as plan mode allows.
      if (tool.name === 'agent') return RUN;
      return {
        action: 'refuse',
        reason:
          `Plan mode is on, so only read tools run; ${tool.name} was not run. ` +
          'Investigate with read tools and present your plan with exit_plan_mode; the user decides when changes start.',
      };
    }
    if (tool.kind === 'write' && mode !== 'yolo') {
      // A protected file asks whatever the mode or an earlier "always": it can make tools run programs.
      const guarded = await protectedTarget(tool, args, context);
      if (guarded) return { action: 'ask', change: await proposedChange(tool, args, context, guarded) };
    }
    if (mode === 'yolo') return tool.kind === 'shell' ? this.shellInYolo(args) : RUN;
    switch (tool.kind) {
      case 'write': {
        if (mode === 'auto-edit' || this.always.has(grantKey(tool, args))) return RUN;
        const change = await proposedChange(tool, args, context, undefined);
        return change ? { action: 'ask', change } : ASK;
      }
      case 'shell': {
        if (this.always.has(grantKey(tool, args))) return RUN;
        if (mode === 'default') return ASK;
        // A classifier failure counts as "not read-only": asking is the safe side.
        return (await this.commandIsReadOnly(args)) ? RUN_READ_ONLY : ASK;
      }
      case 'network':
        // Fetching from the internet sends data out of the machine: consent first, outside yolo.
        return this.always.has(grantKey(tool, args)) ? RUN : ASK;
      case 'mcp':
        // A server is a program of the user's: in default mode every call asks, its arguments shown;
        // auto-edit runs what declares itself read-only and closed-world, as it runs read-only commands.
        if (this.always.has(grantKey(tool, args))) return RUN;
        return mode === 'auto-edit' && tool.mcp?.readOnlyHint === true && tool.mcp.openWorldHint === false ? RUN : ASK;
      case 'interaction':
        // These either are a conversation with the user already (ask_user_question,
        // exit_plan_mode) or only touch the session's own state (todo_write, save_memory); a
        // sub-agent's own tool calls go through approvals of their own.
        return RUN;
    }
  }

  /**
   * yolo runs every command; one the classifier calls read-only still runs in the read-only
   * environment, so `git status` behaves the same whichever mode let it run.
   */
  private async shellInYolo(args: ToolArgs): Promise<ApprovalDecision> {
    return (await this.commandIsReadOnly(args)) ? RUN_READ_ONLY : RUN;
  }

  private async commandIsReadOnly(args: ToolArgs): Promise<boolean> {
    const command = typeof args.command === 'string' ? args.command : '';
    const directory = typeof args.directory === 'string' ? args.directory : undefined;
    return command !== '' && (await this.isReadOnly(command, directory).catch(() => false));
  }

  /** Records an "allow always" answer: later calls with the same grant key run without asking. */
  grantAlways(tool: ToolIdentity, args: ToolArgs): void {
    this.always.add(grantKey(tool, args));
  }

  /** Forgets every "allow always" (new chat). */
  resetGrants(): void {
    this.always.clear();
  }
}

/** The protected path a write call targets: placed through the workspace when known, else as spelled. */
async function protectedTarget(tool: DecidedTool, args: ToolArgs, context: ApprovalContext | undefined): Promise<ProtectedMatch | undefined> {
  const pathArgs = tool.pathArgs ?? ['file_path'];
  if (context) return findProtectedWrite({ kind: tool.kind, pathArgs }, args, context);
  const matcher = protectedPathsOr(undefined);
  for (const arg of pathArgs) {
    const value = args[arg];
    if (typeof value === 'string' && !value.startsWith('/')) {
      const hit = matcher.match(value.replace(/^(\.\/)+/, ''));
      if (hit) return hit;
    }
  }
  return undefined;
}

/** The diff a write call would make, computed without writing; undefined when it cannot be previewed. */
async function proposedChange(tool: DecidedTool, args: ToolArgs, context: ApprovalContext | undefined, guarded: ProtectedMatch | undefined): Promise<ProposedChange | undefined> {
  const preview = context && tool.preview ? await tool.preview(args, context as ToolContext) : undefined;
  const marks = guarded ? { protected: { pattern: guarded.pattern, why: guarded.why } } : {};
  if (preview) return { path: preview.path, diff: unifiedDiff(preview.path, preview.before, preview.after), ...marks };
  // A protected write still says so when its change cannot be shown (the call will fail when run).
  return guarded ? { path: guarded.path, diff: '', ...marks } : undefined;
}

const RUN: ApprovalDecision = { action: 'run' };
const RUN_READ_ONLY: ApprovalDecision = { action: 'run', readOnly: true };
const ASK: ApprovalDecision = { action: 'ask' };

/**
 * What an "always" covers: a write tool as a whole (like switching edits to auto), a shell
 * command only verbatim (allowing `npm test` must not allow `rm -rf`), a network tool as a whole.
 */
function grantKey(tool: ToolIdentity, args: ToolArgs): string {
  if (tool.kind === 'shell') return `${tool.name}\u0000${typeof args.command === 'string' ? args.command : ''}`;
  return tool.name;
}
