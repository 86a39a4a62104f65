// What a tool is: its fixed definition (TOOLS.md), its kind for approvals and the speculation
// gate, and an execute function over the ports in ToolContext. Tools never touch node:fs directly.
import type { ToolArgs, ToolDefinition } from '../messages';
import type { ProtectedPaths } from '../fs/protectedPaths';
import type { WorkspaceFs } from '../fs/workspaceFs';
import type { ProcessRunner } from '../process/processRunner';
import type { SandboxChange, SandboxGitAccess, SandboxLayer, SandboxSession, ShellSandbox } from '../sandbox/shellSandbox';

export type ToolKind = 'read' | 'write' | 'shell' | 'network' | 'interaction' | 'mcp';

/** Names fixed by TOOLS.md; prompts, recorded sessions and the gate rely on them. */
export type ToolName =
  | 'read_file'
  | 'list_directory'
  | 'glob'
  | 'grep_search'
  | 'lsp'
  | 'edit'
  | 'write_file'
  | 'run_shell_command'
  | 'web_fetch'
  | 'web_search'
  | 'todo_write'
  | 'ask_user_question'
  | 'save_memory'
  | 'agent'
  | 'skill'
  | 'exit_plan_mode';

/** An MCP server's tool, offered as `mcp__<server>__<tool>` (src/core/mcp). */
export type McpToolName = `mcp__${string}`;

/** What the approvals and the speculation gate know of an MCP tool (its server's annotations are hints). */
export interface McpToolInfo {
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  readOnlyHint?: boolean;
  openWorldHint?: boolean;
  destructiveHint?: boolean;
  /** The user marked the server "may run ahead" (its config's `speculate.runAhead`). */
  runAhead: boolean;
}

export interface ToolResult {
  /** false when the call failed; `output` then explains the failure to the model. */
  ok: boolean;
  /** What the model receives as the tool message content. */
  output: string;
  /** Workspace-relative paths this call wrote, renamed or deleted. */
  filesChanged?: string[];
  /**
   * Set when the call ran in the sandbox but its run is not a result (it failed because of the
   * sandbox, or changed what a speculation may not carry): the speculation stops at this call, in
   * words why, and the live agent runs it after the user takes over.
   */
  boundary?: string;
  /** Set when a shell command ran in the sandbox: whether the workspace was writable, and what it changed there. */
  sandboxed?: { writable: boolean; changed: string[] };
  /** Tokens the call spent on model requests of its own (a sub-agent); they count toward the turn. */
  usage?: TokenUsage;
}

/** Token counts as the model reported them (the llm floor's Usage, restated here to keep tools below it). */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** save_memory's store: the user's own memory file, outside every workspace. */
export interface MemoryStore {
  /** Where the file lives, for messages. */
  readonly location: string;
  /** Appends one fact; throws when the file cannot be written (nothing is half-written). */
  append(fact: string): Promise<void>;
}

/** The skills the skill tool loads (Agent Skills folders in `.agents/skills/`). */
export interface SkillLibrary {
  /**
   * The skill's SKILL.md in full, with the files beside it listed. Workspace skills are read
   * through `fs` (the overlay during speculation); the user's own from their home folder.
   */
  load(name: string, fs: WorkspaceFs): Promise<{ ok: true; text: string } | { ok: false; error: string }>;
}

/** Runs the agent tool's nested conversation (src/core/chat/subAgent.ts). */
export interface SubAgentRunner {
  run(task: { description: string; prompt: string }, context: ToolContext): Promise<ToolResult>;
}

/** The chat's way out of plan mode, for exit_plan_mode (the session owns the mode). */
export interface PlanModeSwitch {
  /** The chat's approval mode now. */
  mode(): string;
  /** Switches this chat from plan to auto-edit; a reason when it may not (Restricted Mode). */
  leave(): { ok: true; mode: string } | { ok: false; reason: string };
}

/** What the speculation gate says about one nested call (a sub-agent's), set per call during speculation. */
export type NestedGate = (toolName: string, args: ToolArgs) => Promise<{ pass: true } | { pass: false; detail: string }>;

/** Where a sandboxed command's writes go (the speculation's overlay) and what it sees of it. */
export interface SandboxTarget {
  /** The speculation's earlier writes and deletions, shown to the command. */
  layer(): Promise<SandboxLayer>;
  /** Takes the command's changes as ordinary overlay changes; returns the paths changed. */
  apply(changes: readonly SandboxChange[], startedAt: number): Promise<string[]>;
}

/** Commit ahead: the speculation's private .git for one git command (src/core/git). */
export interface SandboxGitTarget {
  /**
   * The sandbox option for this command, or why the repository cannot be taken on (a boundary). A
   * read-only view (`readOnly`) is given to the speculation's other commands once it has committed
   * ahead; null: nothing to show them.
   */
  access(): Promise<SandboxGitAccess | { refused: string } | null>;
  /** Takes the finished command's .git writes into the speculation, or says why not (a boundary). */
  absorb(upper: string): Promise<{ ok: true } | { ok: false; detail: string }>;
}

/** How one call runs in the sandbox; set per call by whoever decided it (the speculation gate). */
export interface SandboxRun {
  /** True: writes land in `target`. False: the workspace is read-only inside. */
  writable: boolean;
  target?: SandboxTarget;
  /** Set when the gate let a git write run ahead: .git is writable for this command, in the speculation's git layer. */
  git?: SandboxGitTarget;
  /** The speculation the command belongs to: its commands may share one sandbox (SandboxSession). */
  session?: SandboxSession;
}

/** Language features answered by the editor (VS Code side); absent in the CLI. */
export interface LspProvider {
  query(request: {
    operation: 'definition' | 'references' | 'hover' | 'symbols';
    path: string;
    line?: number;
    character?: number;
    query?: string;
  }, signal?: AbortSignal): Promise<string>;
}

/** Asks the user a question (ask_user_question); absent means "not available here". */
export interface UserPrompter {
  ask(question: string, options: string[] | undefined, signal?: AbortSignal): Promise<string>;
}

/** A search backend for web_search, configured explicitly by the user. */
export interface WebSearchProvider {
  search(query: string, signal?: AbortSignal): Promise<string>;
  /** False while the user has not set it up; the tool then says how to, sending nothing. */
  configured?(): boolean;
}

export interface ToolContext {
  fs: WorkspaceFs;
  signal?: AbortSignal;
  processRunner?: ProcessRunner;
  lsp?: LspProvider;
  prompter?: UserPrompter;
  webSearch?: WebSearchProvider;
  /** fetch for web_fetch; defaults to global fetch. */
  fetch?: typeof fetch;
  /** Extra environment for shell commands. */
  shellEnv?: Record<string, string>;
  /** Runs shell commands in namespaces over the overlay (SANDBOX.md); absent where it is turned off. */
  shellSandbox?: ShellSandbox;
  /** The sandbox's limits (speculate.sandbox.* settings); defaults: the shell's timeout, 256 MB written. */
  sandboxLimits?: { timeoutMs: number; maxWriteBytes: number };
  /** Set per call when the speculation gate decided `sandbox`. */
  sandboxRun?: SandboxRun;
  /**
   * Set per call by whoever let the call run: true when it runs without the user's approval because
   * the shell classifier judged the command read-only (speculation; auto-edit and yolo in the main
   * chat). run_shell_command then runs it in the environment that verdict assumes: git's configured
   * programs off, no PATH entry in the workspace — and, where a sandbox is available, inside it with
   * the workspace read-only and no network. A command the user approved runs as they know it.
   */
  approvedAsReadOnly?: boolean;
  /**
   * The protected paths of this session (speculate.protectedPaths); the defaults of TOOLS.md when
   * absent. Writes to them ask in every approval mode but yolo and stop a speculation.
   */
  protectedPaths?: ProtectedPaths;
  /** Time limit of each file tool call (tests shorten it); FILE_TOOL_TIME_LIMIT_MS by default. */
  toolTimeLimitMs?: number;
  /** Holds the todo list between calls of todo_write. */
  todos?: { items: unknown[] };
  /** save_memory's file; absent where there is none (the tool then says so). */
  memory?: MemoryStore;
  /** The skill tool's skills; absent: none installed. */
  skills?: SkillLibrary;
  /** The agent tool's sub-agents; absent where no model is at hand. */
  subAgent?: SubAgentRunner;
  /** exit_plan_mode's switch; absent outside a chat session. */
  planMode?: PlanModeSwitch;
  /** Set per call by the loop: progress lines of a long call (a sub-agent's steps) for its tool card. */
  progress?: (line: string) => void;
  /** Set per call during speculation: a nested call (a sub-agent's) runs only when this passes it. */
  speculationGate?: NestedGate;
}

export interface Tool {
  readonly name: ToolName | McpToolName;
  readonly kind: ToolKind;
  /** Set on MCP tools (kind `mcp`) only. */
  readonly mcp?: McpToolInfo;
  readonly definition: ToolDefinition;
  /** Path-valued argument names, so the gate can check them before a call runs. */
  readonly pathArgs: readonly string[];
  /** One line for the UI's tool group header, e.g. "src/app.ts (lines 1-40)". */
  summarize(args: ToolArgs): string;
  execute(args: ToolArgs, context: ToolContext): Promise<ToolResult>;
  /**
   * Write tools: what the call would write, computed without writing (for the approval's diff).
   * Undefined when the call would fail or write nothing.
   */
  preview?(args: ToolArgs, context: ToolContext): Promise<WritePreview | undefined>;
  /** What the model is told when the user declines the call, where the generic refusal would mislead. */
  readonly deniedText?: string;
}

/** The bytes a write would replace and put in their place; `before` undefined = a new file. */
export interface WritePreview {
  path: string;
  before: Uint8Array | undefined;
  after: Uint8Array;
}
