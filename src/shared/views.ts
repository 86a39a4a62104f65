// The values the chat shows, as the host sends them to the webview: transcript items, tool calls,
// the speculation's status line, checkpoints, history, attachments, usage, MCP servers. No logic.

/**
 * A tool call's state on its card (core's chat ToolCallStatus, kept equal on purpose: the presenter's
 * viewStatus checks it at compile time; this floor imports nothing of core).
 * 'denied': the user said no; 'refused': the approval mode does not allow it (plan mode);
 * 'cancelled': the turn was stopped before or while it ran.
 */
export type ToolCallStatusView = 'running' | 'ok' | 'error' | 'denied' | 'refused' | 'cancelled' | 'pending-approval';

/** One tool call as the user sees it (never overlay paths: workspace paths only). */
export interface ToolCallView {
  callId: string;
  /** Tool name as the model called it, e.g. `read_file`. */
  tool: string;
  /** One line describing the arguments, e.g. `src/app.ts` or `npm test`. */
  summary: string;
  status: ToolCallStatusView;
  /** What the tool returned (or why it failed); the webview folds long results. */
  result?: string;
  /** A shell command that ran ahead in the sandbox: over the speculation (writable) or read-only, and the paths it changed. */
  sandbox?: { writable: boolean; changed: string[] };
  /** The steps of a long call while and after it runs (a sub-agent's tool calls), shown folded in its card. */
  progress?: string[];
}

/** The user's answer on an approval card ('always': for this kind of call from now on). Not core's ApprovalDecision, the gate's. */
export type ApprovalChoice = 'allow' | 'deny' | 'always';

/** The choices that settle a conflicted file (core's ConflictChoice). */
export type ConflictResolution = 'overwrite' | 'keep-mine';
/** The buttons of a conflicted file: a resolution, or 'open-diff', which only shows it. */
export type ConflictAction = 'open-diff' | ConflictResolution;

export interface ConflictFile {
  /** Workspace-relative path. */
  path: string;
  /** Why it conflicts, in words: "changed in the editor since Speculate copied it". */
  reason: string;
  /** Set once the user has settled it (from a snapshot or conflictResolved). */
  resolution?: ConflictResolution;
}

/**
 * A button under a notice or an error. The host maps each id to one fixed command: the webview never names a
 * command of its own. `setting` (for openUserSettings) is a `speculate.*` setting to show.
 */
export type ChatActionId = 'manageTrust' | 'openUserSettings' | 'setApiKey' | 'selectModel' | 'runLive' | 'setUpEndpoint';
export interface ChatAction {
  action: ChatActionId;
  label: string;
  setting?: string;
}

/** The standard label of each action's button. */
export const CHAT_ACTION_LABELS: { [K in ChatActionId]: string } = {
  manageTrust: 'Manage Workspace Trust',
  openUserSettings: 'Open User Settings',
  setApiKey: 'Set API Key',
  selectModel: 'Select Model',
  runLive: 'Run It Live',
  setUpEndpoint: 'Set Up Endpoint',
};

/** Notices are quiet by default; 'warning' is for what limits the chat (untrusted folder, ignored settings). */
export type NoticeTone = 'info' | 'warning';

/** Everything the transcript can show; `init.transcript` and `appendItems` carry these. */
export type TranscriptItem =
  | { kind: 'user'; id: string; text: string; /** came from an accepted speculation */ speculated?: boolean; attachments?: AttachmentView[] }
  | {
      kind: 'assistant';
      id: string;
      /** Markdown, rendered safely by the webview. */
      text: string;
      /** The model's reasoning ("thinking"), shown folded above the answer. */
      reasoning?: string;
      /** true while deltas are still expected (a snapshot taken mid-stream). */
      streaming?: boolean;
      speculated?: boolean;
    }
  | { kind: 'toolGroup'; id: string; calls: ToolCallView[]; done: boolean; speculated?: boolean }
  | {
      kind: 'approval';
      id: string;
      tool: string;
      summary: string;
      /** The full command, diff summary or URL the user is asked about. */
      detail: string;
      /** The tool call waiting on this approval, when there is one. */
      callId?: string;
      /** Absent while waiting for the user. */
      decision?: ApprovalChoice;
    }
  /** `actions`: the buttons that fix the cause (Set API Key, Select Model, Open Settings), before Retry. */
  | { kind: 'error'; id: string; message: string; retryable: boolean; actions?: ChatAction[] }
  | { kind: 'notice'; id: string; text: string; tone?: NoticeTone; actions?: ChatAction[] }
  | { kind: 'conflicts'; id: string; files: ConflictFile[] }
  /** What one answer cost, shown quietly under it: "12.3k in (9k cached) · 350 out · $0.004". */
  | { kind: 'usage'; id: string; text: string; detail: string }
  /**
   * The end of a turn or an accept: "Speculated 2 tool calls · 1.3 s saved" or "Changed src/a.ts",
   * with Undo / Changes when it changed files, and Restore to here on earlier ones.
   */
  | { kind: 'turnEnd'; id: string; text: string; checkpoint?: CheckpointView; speculated?: boolean; /** messages in the chat at this point (host's own use) */ historyLength?: number }
  /** Files changed since a checkpoint, found by Undo: the user picks per file (Restore / Keep mine). */
  | { kind: 'undoConflicts'; id: string; checkpointId: string; direction: UndoDirection; files: UndoConflictFile[] };

export type TranscriptItemKind = TranscriptItem['kind'];


export type SpeculationState = 'idle' | 'running' | 'ready' | 'boundary' | 'failed';

export interface SpeculationBoundary {
  /** The gate's BoundaryType: 'shell' | 'edit' | 'denied_tool' | 'unknown_tool' | 'path' | 'limit'. */
  type: string;
  /** The tool the speculation stopped before, e.g. `run_shell_command`. */
  tool: string;
  /** Words for the user; inline code in backticks is rendered: "`npm install` changes files". */
  detail: string;
  /**
   * The whole sentence for the status line, in the user's words (inline markdown), e.g.
   * "Stopped before `npm test`: it may change files. Tab runs it with your approval."
   */
  text?: string;
}

/** The speculation's status line (core's SpeculationStatus is only the run's state; this is what the chat shows of it). */
export interface SpeculationStatusView {
  state: SpeculationState;
  /** Tool calls completed so far in the speculation. */
  toolCalls: number;
  /** Workspace-relative paths written into the overlay (never overlay paths). */
  filesWritten: string[];
  /** The suggestion this speculation runs; lets the webview ignore a stale status. */
  suggestionId?: string;
  /** Present when state is 'boundary'. */
  boundary?: SpeculationBoundary;
  /**
   * Short words when state is 'failed'; shown quietly. A 'failed' status without `suggestionId`
   * says that running ahead is not working at all ("Couldn't run ahead: <the server's reason>").
   */
  error?: string;
  /**
   * Present when the run committed ahead: what Tab would commit — the refs it moves ("main: 1a2b3c4 →
   * 5d6e7f8"), the new commits' log (message, author, files) and the note that their dates are the speculation's.
   */
  commitAhead?: { moves: string[]; log: string; note: string };
}

export interface ModelInfo {
  /** Shown in the input toolbar, e.g. "qwen3-coder-plus". */
  label: string;
  /** true for the built-in demo model: the webview shows a "demo model" badge. */
  demo: boolean;
  /** No endpoint is set up yet: the welcome offers Set Up Endpoint. */
  unconfigured?: boolean;
  /** The fast model for suggestions and speculation; '' (or absent) = the main model. */
  fast?: string;
}

/** The workspace folder the chat works on, shown in its header when more than one is open. */
export interface FolderView {
  name: string;
  /** Its path, for the tooltip. */
  path: string;
  /** How many other folders are open in the window (0: the header shows no folder). */
  others: number;
}

export interface ChatSettings {
  /** `speculate.enterAcceptsSuggestion`: Enter on an empty input accepts the suggestion too. */
  enterAcceptsSuggestion: boolean;
  /**
   * VS Code's "Tab Moves Focus" (Ctrl+M) is on: Tab moves the focus and Ctrl+Enter accepts the
   * suggestion instead.
   */
  tabMovesFocus?: boolean;
}

export interface Suggestion {
  id: string;
  text: string;
}

/**
 * The speculated turns of the running suggestion, as the webview will show them once accepted. The
 * webview renders them off-screen so that Tab only has to reveal them (no round trip first).
 */
export interface SpeculationPreview {
  /** Increases with every version the host sends; Tab echoes it so the host can refuse an old one. */
  seq: number;
  /** The suggestion this speculation runs. */
  suggestionId: string;
  /** The run has stopped (ready, or at a boundary): this version is what Tab applies. */
  final: boolean;
  /** Items before this index are unchanged since the previous version; `items` replaces the rest. */
  from: number;
  items: TranscriptItem[];
  /** The suggestion predicted after this run, with the id the host will give it; shown at once on Tab. */
  next: Suggestion | null;
}

/** The host's answer to an accepted reveal. */
export type RevealOutcome =
  /** Applied and injected; `notApplied` lists the files the user kept their own version of. */
  | 'applied'
  /** Files changed under the speculation (`notApplied`): nothing of them is applied until the user chooses. */
  | 'conflicts'
  /** The revealed block is not what happened (stale preview, failed apply, accept cancelled): it goes. */
  | 'withdrawn';

/** The full state the webview renders after (re)loading. */
export interface ChatSnapshot {
  /** The folder the chat works on (multi-root windows show it in the header). */
  folder?: FolderView;
  transcript: TranscriptItem[];
  /** A turn is running: the send button is a Stop button. */
  busy: boolean;
  /** A draft the host kept; the webview's own saved draft (getState) wins over it. */
  draft?: string;
  suggestion: Suggestion | null;
  speculation: SpeculationStatusView;
  model: ModelInfo;
  settings: ChatSettings;
  /** What this chat spent so far (null before its first answer). */
  usage?: UsageLine | null;
  /** The chat's title in the history (its first prompt unless renamed). */
  title?: string;
  /** The running suggestion's speculated turns in full (from 0), when there are any. */
  preview?: SpeculationPreview;
  /** The files of the speculation on screen, for review before Tab. */
  speculationFiles?: SpeculationFiles | null;
}

// ── checkpoints: undo, changes, restore to here, review before Tab (issue 15) ──

export type FileChange = 'modified' | 'created' | 'deleted';

export interface CheckpointView {
  checkpointId: string;
  /** 'undone': its Undo became Redo. */
  state: 'applied' | 'undone';
  files: { path: string; change: FileChange }[];
}

export type UndoDirection = 'undo' | 'redo';
/** 'restore': take the checkpoint's version anyway; 'keep-mine': leave the file as it is. */
export type UndoConflictResolution = 'restore' | 'keep-mine';

export interface UndoConflictFile {
  path: string;
  /** What happened to it since, in words. */
  reason: string;
  /** false when restoring it is not safe (a folder or a symlink is there now): Keep mine only. */
  canRestore: boolean;
  resolution?: UndoConflictResolution;
}

/** One file of the speculation on screen: what Tab would change, and whether it is left out. */
export interface SpeculationFileView {
  path: string;
  change: FileChange;
  /** Lines added and removed against the workspace file (0 and 0 for a binary file). */
  added: number;
  removed: number;
  binary?: boolean;
  /** Left out of the accept by the user. */
  excluded: boolean;
  /** Set once the user dropped some of its changes before Tab: how many are still kept, of how many. */
  hunks?: { kept: number; total: number };
}

export interface SpeculationFiles {
  runId: string;
  files: SpeculationFileView[];
}

// ── chat history, context, models and usage (issue 18) ──

export type AttachmentKind = 'file' | 'selection' | 'problems';

/** A context chip: above the input before sending, on the user's message after. */
export interface AttachmentView {
  /** Chosen by the host; the webview sends it back with `submit`. */
  id: string;
  kind: AttachmentKind;
  /** e.g. "greet.ts", "greet.ts:3-5", "problems in greet.ts (2)". */
  label: string;
  /** Workspace-relative path the chip opens. */
  path: string;
  /** First line, for a selection. */
  line?: number;
}

/** One entry of the `@` completion list. */
export interface MentionItem {
  kind: AttachmentKind;
  label: string;
  /** The folder of a file, or what the item attaches ("the selection in greet.ts, lines 3–5"). */
  detail: string;
  /** For a file: its workspace-relative path. */
  path?: string;
}

/** A past chat in the history list. */
export interface HistoryEntry {
  id: string;
  title: string;
  /** Last change, ms since the epoch. */
  updatedAt: number;
  /** The workspace folder the chat belongs to. */
  workspace: string;
  model: string;
  /** The chat open right now. */
  current: boolean;
}

/** A usage line in words, with the breakdown for its tooltip. */
export interface UsageLine {
  text: string;
  detail: string;
}

export type ModelRole = 'main' | 'fast';

// ── MCP servers (issue 26): the chat view's server list ──

/**
 * A server's state as the list shows it. 'awaiting-approval': a workspace's .vscode/mcp.json names it
 * and the user has not allowed this exact definition; 'blocked': the same in Restricted Mode, where
 * it is not offered at all. 'restarting': it crashed and starts again at `restartAt`.
 */
export type McpServerStateView = 'not-started' | 'starting' | 'running' | 'restarting' | 'error' | 'stopped' | 'awaiting-approval' | 'blocked';

export interface McpServerRowView {
  name: string;
  /** Where it is defined: "settings" (speculate.mcpServers) or "<folder>/.vscode/mcp.json". */
  source: string;
  fromWorkspace: boolean;
  transport: 'stdio' | 'http' | 'sse';
  /** The exact command line or URL that runs. */
  target: string;
  state: McpServerStateView;
  /** The last error, in words. */
  error?: string;
  /** While restarting: when the next try is due (ms since the epoch). */
  restartAt?: number;
  /** The user marked it "may run ahead" (its entry's speculate.runAhead). */
  runAhead: boolean;
  tools: { name: string; description: string; readOnly: boolean }[];
  /** Awaiting approval because its definition changed since the user allowed it. */
  changed?: boolean;
  /** Awaiting approval: everything the definition runs (command, environment, folder), one line each, to confirm. */
  detail?: string;
  /** Awaiting approval: the hash of that definition; Allow echoes it, so a definition changed meanwhile is not allowed. */
  definition?: string;
}

export interface McpServersView {
  servers: McpServerRowView[];
  /** Sentences about the configuration: skipped entries, servers not offered in Restricted Mode. */
  notes: string[];
}

/** The buttons of the server list; the host decides what each does for the named server. */
export type McpActionId = 'restart' | 'allow' | 'showLog' | 'openSettings';
