// What a speculation is made with and what it reports: its options, the overlay it writes into,
// its tool call records, snapshots and events, and what an accept applied.
import type { ChatMessage, ToolArgs } from '../messages';
import type { WorkspaceFs } from '../fs/workspaceFs';
import type { WorkspaceLock } from '../fs/workspaceLock';
import type { GitPreview } from '../git/gitPreview';
import type { LlmClient, Usage } from '../llm/llmClient';
import type { SandboxChange, SandboxLayer } from '../sandbox/shellSandbox';
import type { Tool, ToolContext } from '../tools/types';
import type { CommittedAhead } from './commitAhead';
import type { CacheSafeParams } from './forkedQuery';
import type { BeforeReplaceHook } from './overlay/applyOverlay';
import type { ApprovalMode, Boundary } from './speculationToolGate';

export const MAX_SPECULATION_TURNS = 20;
export const MAX_SPECULATION_MESSAGES = 100;

export type SpeculationStatus = 'running' | 'completed' | 'boundary' | 'aborted' | 'failed';

/** The overlay as the engine needs it; OverlayFs implements it. */
export interface SpeculationOverlay extends WorkspaceFs {
  readonly id: string;
  writtenFiles(): { path: string; kind: 'modified' | 'created' | 'deleted' }[];
  applyToReal(options?: { overwrite?: readonly string[]; skip?: readonly string[]; beforeReplace?: BeforeReplaceHook; redoDir?: string }): Promise<ApplyResult>;
  cleanup(): Promise<void>;
  /** What a sandboxed command sees of the speculation, and how its changes come back (SANDBOX.md). */
  sandboxLayer(): Promise<SandboxLayer>;
  applySandboxChanges(changes: readonly SandboxChange[], startedAt: number): Promise<string[]>;
  /** The workspace's writer lock; commit ahead moves refs under it. Absent: this process's own lock of the root. */
  readonly writerLock?: WorkspaceLock;
}

export interface ApplyResult {
  applied: string[];
  /** Set when the accept applied a commit made ahead (refs moved, index or not). */
  git?: CommittedAhead;
  /** `reason` is a short code; `message` (when the overlay gives one) says it in words. */
  conflicts: { path: string; reason: string; message?: string }[];
}

export interface ToolCallRecord {
  /** Position among all the run's tool calls; two calls of one tool are two records. */
  index: number;
  id: string;
  name: string;
  args: ToolArgs | null;
  rawArgs: string;
  summary: string;
  decision: 'allow' | 'redirect' | 'sandbox' | 'boundary';
  executed: boolean;
  ok: boolean | null;
  result: string | null;
  /** Set when the call ran ahead in the sandbox: writable (over the overlay) or read-only, and the paths it changed. */
  sandboxed?: { writable: boolean; changed: string[] };
}

export interface SpeculationSnapshot {
  id: string;
  suggestion: string;
  status: SpeculationStatus;
  boundary: Boundary | null;
  toolCalls: ToolCallRecord[];
  filesWritten: { path: string; kind: 'modified' | 'created' | 'deleted' }[];
  /** The speculated messages: the suggestion as a user message, then assistant and tool messages. */
  messages: ChatMessage[];
  pipelinedSuggestion: string | null;
  /** What went wrong, in full (what to do included). */
  error: string | null;
  /** The same in a few words, for the quiet status line ("Couldn't run ahead: <reason>"). */
  errorReason: string | null;
  startedAt: number;
  finishedAt: number | null;
  usage: Usage;
  turns: number;
  /** What Tab would commit (message, author, files and diff, the branch it moves), when the run committed ahead. */
  commitAhead?: GitPreview | null;
}

/** Fine-grained progress, for a run promoted to the foreground while it still streams. */
export type SpeculationEvent =
  | { type: 'text'; delta: string }
  | { type: 'assistant_start' }
  | { type: 'tool_start'; record: ToolCallRecord }
  | { type: 'tool_end'; record: ToolCallRecord }
  | { type: 'status'; snapshot: SpeculationSnapshot };

export interface SpeculationOptions {
  llm: LlmClient;
  params: CacheSafeParams;
  /** The fast model when set; the main model otherwise. */
  model?: string;
  tools: { get(name: string): Tool | undefined };
  approvalMode: ApprovalMode;
  createOverlay: () => Promise<SpeculationOverlay>;
  classifyShell: (command: string, directory?: string) => Promise<{ readOnly: boolean; reason: string }>;
  /** Ports for tools (process runner, lsp, shell env, the sandbox); fs and signal are the engine's. */
  toolContext?: Omit<ToolContext, 'fs' | 'signal'>;
  maxTurns?: number;
  maxMessages?: number;
  /** Predicts the input after this run (same prefix + the speculated turns); null = none. */
  generatePipelinedSuggestion?: (conversation: ChatMessage[], signal: AbortSignal) => Promise<string | null>;
  now?: () => number;
  onEvent?: (event: SpeculationEvent) => void;
  log?: (line: string) => void;
}
