// The one typed message protocol between the extension host (src/vscode/chatView.ts) and the chat
// webview (src/webview/); both sides import it. Runtime validators guard each direction.
//
// Conversation order (what the host sends, what it hears back):
//   load        webview → ready;  host → init (full snapshot; resent whenever the webview reloads)
//   a turn      webview → submit{text};  host → userMessage, turnState{busy:true},
//               assistantStart, assistantDelta…, assistantEnd, toolGroupStart, toolCallUpdate…,
//               (approvalRequest → webview → approvalAnswer → host → approvalResolved),
//               toolGroupEnd, [more assistant/tool rounds], turnState{busy:false}
//   suggestion  host → suggestion{id,text}, speculation{state:'running'…} … speculation{state:'ready'}
//   Tab         webview → acceptSuggestion{suggestionId, method:'tab'};  host → suggestionCleared,
//               appendItems{items} (the speculated turn at once), notice, speculation{state:'idle'},
//               and the pipelined suggestion{…}. If files changed meanwhile: conflicts{…} →
//               webview → conflictChoice… → host → conflictResolved per file.
//   preview     while a speculation runs, host → speculationPreview{preview} after each change: its
//               turns, which the webview renders off-screen, and (once known) the pipelined suggestion.
//   Tab, one    when the webview holds a final preview of the shown suggestion, Tab reveals it in the
//   frame       same frame, marked "applying…": webview → acceptRevealed{suggestionId, seq};
//               host → revealAnswer{seq, outcome}: 'applied' (then notice, speculation{idle}, the
//               pipelined suggestion{…}), 'conflicts' (then conflicts{…} as above, and 'applied' once
//               every file is settled) or 'withdrawn' (the block leaves the transcript; what the host
//               does instead follows the usual way: appendItems for a stale preview, a notice and a
//               live turn when the apply failed).
//   dismiss     webview → suggestionDismissed{suggestionId, why};  host aborts the speculation and
//               sends suggestionCleared + speculation{state:'idle'}.
//   MCP         host → mcpServers{view} after ready and on every change of a server; webview →
//               mcpAction{restart | allow (with the definition's hash it showed) | showLog | openSettings}.
// Ids (message, tool group, approval, error, notice, conflict set, suggestion) are chosen by the
// host and unique within one chat; the webview only echoes them back.

// ───────────────────────────── shared value types ─────────────────────────────

/**
 * 'denied': the user said no; 'refused': the approval mode does not allow it (plan mode);
 * 'cancelled': the turn was stopped before or while it ran.
 */
export type ToolCallStatus = 'running' | 'ok' | 'error' | 'denied' | 'refused' | 'cancelled' | 'pending-approval';

/** One tool call as the user sees it (never overlay paths: workspace paths only). */
export interface ToolCallView {
  callId: string;
  /** Tool name as the model called it, e.g. `read_file`. */
  tool: string;
  /** One line describing the arguments, e.g. `src/app.ts` or `npm test`. */
  summary: string;
  status: ToolCallStatus;
  /** What the tool returned (or why it failed); the webview folds long results. */
  result?: string;
  /** A shell command that ran ahead in the sandbox: over the speculation (writable) or read-only, and the paths it changed. */
  sandbox?: { writable: boolean; changed: string[] };
  /** The steps of a long call while and after it runs (a sub-agent's tool calls), shown folded in its card. */
  progress?: string[];
}

export type ApprovalDecision = 'allow' | 'deny' | 'always';

export type ConflictChoice = 'open-diff' | 'overwrite' | 'keep-mine';
/** The choices that settle a conflicted file; 'open-diff' only shows it. */
export type ConflictResolution = 'overwrite' | 'keep-mine';

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
      decision?: ApprovalDecision;
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

export interface SpeculationStatus {
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
  speculation: SpeculationStatus;
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

// ───────────────────────────── host → webview ─────────────────────────────

export type HostToWebview =
  /** Full snapshot; replaces everything on screen. Send on `ready`, and again whenever useful. */
  | { type: 'init'; state: ChatSnapshot }
  /** Model label or settings changed while the view is open. */
  | { type: 'config'; model: ModelInfo; settings: ChatSettings; folder?: FolderView }
  | { type: 'userMessage'; id: string; text: string; speculated?: boolean; attachments?: AttachmentView[] }
  | { type: 'assistantStart'; id: string; speculated?: boolean }
  /** Appends markdown to the message `id` (the webview re-renders only that message). */
  | { type: 'assistantDelta'; id: string; text: string }
  /** Appends reasoning text to the message `id` (folded "Thinking" section). */
  | { type: 'reasoningDelta'; id: string; text: string }
  | { type: 'assistantEnd'; id: string }
  | { type: 'toolGroupStart'; id: string; calls: ToolCallView[]; speculated?: boolean }
  /** Adds or replaces (by callId) one call of group `groupId`. */
  | { type: 'toolCallUpdate'; groupId: string; call: ToolCallView }
  | { type: 'toolGroupEnd'; id: string }
  /** Shows Allow / Deny / Always inline; focus moves to Allow unless the user is typing. */
  | { type: 'approvalRequest'; id: string; tool: string; summary: string; detail: string; callId?: string }
  /** The approval was answered (here or elsewhere) or cancelled by Stop: buttons go away. */
  | { type: 'approvalResolved'; id: string; decision: ApprovalDecision }
  | { type: 'error'; id: string; message: string; retryable: boolean; actions?: ChatAction[] }
  | { type: 'turnState'; busy: boolean }
  /** A quiet line in the transcript, e.g. "Speculated 4 tool calls · 3.2 s saved". */
  | { type: 'notice'; id: string; text: string; tone?: NoticeTone; actions?: ChatAction[] }
  /** Ghost text in the empty input. Replaces any earlier suggestion. */
  | { type: 'suggestion'; id: string; text: string }
  | { type: 'suggestionCleared' }
  | { type: 'speculation'; status: SpeculationStatus }
  /** Several items at once, e.g. an accepted speculation's turns. */
  | { type: 'appendItems'; items: TranscriptItem[] }
  /** Files that changed in the workspace since the overlay copied them; the user picks per file. */
  | { type: 'conflicts'; id: string; files: ConflictFile[] }
  | { type: 'conflictResolved'; id: string; path: string; resolution: ConflictResolution }
  /** A new version of the running suggestion's speculated turns; null: there is none (any more). */
  | { type: 'speculationPreview'; preview: SpeculationPreview | null }
  /** How the accept of the revealed preview `seq` went. */
  | { type: 'revealAnswer'; seq: number; outcome: RevealOutcome; notApplied: string[] }
  /** New chat: empty transcript, no suggestion, speculation idle. */
  | { type: 'clear' }
  | { type: 'focusInput' }
  /** Edit & resend, Regenerate: every item after `afterId` goes (all of them without it). */
  | { type: 'truncate'; afterId?: string }
  | { type: 'chatUsage'; usage: UsageLine | null }
  /** The title bar's History button: the history view opens. */
  | { type: 'showHistory' }
  /** The answer to `historyQuery` (and a refresh after rename or delete). */
  | { type: 'history'; query: string; entries: HistoryEntry[] }
  | { type: 'chatTitle'; title: string }
  /** The answer to `mentionQuery` number `requestId`. */
  | { type: 'mentions'; requestId: number; items: MentionItem[] }
  /** A chip for the input: from the `@` list, the attach button or a dropped file. */
  | { type: 'attachmentAdded'; attachment: AttachmentView }
  /** The endpoint's models for a picker (the answer to `listModels`). */
  | { type: 'models'; role: ModelRole; models: string[]; current: string; error?: string }
  /** A checkpoint was undone or redone: every line showing it updates. */
  | { type: 'checkpointUpdate'; checkpoint: CheckpointView }
  | { type: 'undoConflictResolved'; id: string; path: string; resolution: UndoConflictResolution }
  /** The files of the speculation on screen (null: none to review). */
  | { type: 'speculationFiles'; files: SpeculationFiles | null }
  /** The MCP servers of the window and their state (sent on ready and on every change). */
  | { type: 'mcpServers'; view: McpServersView };

export type HostMessageType = HostToWebview['type'];

// ───────────────────────────── webview → host ─────────────────────────────

export type AcceptMethod = 'tab' | 'enter' | 'click';

/**
 * Why the ghost text went away without being accepted. The host aborts the speculation in every
 * case. 'edit' means Right-arrow moved the suggestion into the input as editable text: the user is
 * about to change it, so the running speculation no longer describes what will be sent (a later
 * `submit` carries whatever the user sends).
 */
export type DismissReason = 'typed' | 'escape' | 'paste' | 'edit';

export type WebviewToHost =
  /** The webview's script is running; answer with `init`. */
  | { type: 'ready' }
  /** `attachments`: ids of the chips above the input (attachmentAdded). */
  | { type: 'submit'; text: string; attachments?: string[] }
  | { type: 'acceptSuggestion'; suggestionId: string; method: AcceptMethod }
  /** Accept, with the preview `seq` already on screen: the host applies exactly that version or refuses. */
  | { type: 'acceptRevealed'; suggestionId: string; seq: number; method: AcceptMethod }
  | { type: 'suggestionDismissed'; suggestionId: string; why: DismissReason }
  /** The input became non-empty (hasText true) or empty again; sent on each change of the two. */
  | { type: 'typing'; hasText: boolean }
  | { type: 'approvalAnswer'; id: string; decision: ApprovalDecision }
  | { type: 'stopTurn' }
  /** Retry button of the error block `errorId`. */
  | { type: 'retry'; errorId: string }
  /** Diff of one written file, or of all of them (multi-file diff) when path is absent. */
  | { type: 'previewChanges'; path?: string }
  | { type: 'abortSpeculation' }
  | { type: 'conflictChoice'; conflictId: string; path: string; choice: ConflictChoice }
  | { type: 'newChat' }
  /**
   * A workspace file link in a message or a tool group. `path` is what the model wrote (relative
   * or absolute, never trusted): the host must place it inside the workspace before opening it.
   */
  | { type: 'openFile'; path: string; line?: number }
  /** An http(s) link; the host opens it with vscode.env.openExternal (the webview never navigates). */
  | { type: 'openLink'; url: string }
  /** Copy button of a code block; the host writes `text` to the clipboard. */
  | { type: 'copyText'; text: string }
  /**
   * Edit & resend of the user message `id`: the chat from there is replaced. `restoreFiles`: the
   * user chose to undo the file changes made after it first (Restore to here); else files stay.
   */
  | { type: 'editMessage'; id: string; text: string; restoreFiles?: boolean }
  /** Regenerate the last answer. */
  | { type: 'regenerate' }
  | { type: 'historyQuery'; query: string }
  | { type: 'historyOpen'; id: string }
  | { type: 'historyRename'; id: string; title: string }
  | { type: 'historyDelete'; id: string }
  /** What follows an `@` in the input (maybe ''); answered by `mentions` with the same requestId. */
  | { type: 'mentionQuery'; requestId: number; query: string }
  /** Attach a file (a workspace path or a dropped file: URI), the selection or the problems. */
  | { type: 'attach'; kind: AttachmentKind; path?: string }
  | { type: 'removeAttachment'; id: string }
  /** Opens the attach picker (the paperclip button). */
  | { type: 'pickAttachment' }
  | { type: 'listModels'; role: ModelRole }
  /** '' for the fast model means "same as the main model". */
  | { type: 'selectModel'; role: ModelRole; model: string }
  /** A notice's button (ChatAction). */
  | { type: 'chatAction'; action: ChatActionId; setting?: string }
  /** Undo / Redo / Changes on a turn's line. */
  | { type: 'checkpointAction'; checkpointId: string; action: 'undo' | 'redo' | 'changes' }
  /** Restore to here on the line `turnEndId`: the files (and, if the user agrees, the chat) go back to that point. */
  | { type: 'restoreTo'; turnEndId: string }
  | { type: 'undoConflictChoice'; conflictId: string; path: string; choice: 'open-diff' | UndoConflictResolution }
  /** Review before Tab: leave a file out of the accept (or put it back). */
  | { type: 'excludeFile'; runId: string; path: string; excluded: boolean }
  /** The folder button in the chat header: the host asks which open folder the chat works on. */
  | { type: 'pickFolder' }
  /** A button of the MCP server list; `server` and `source` name the row (not needed for showLog / openSettings). */
  | { type: 'mcpAction'; action: McpActionId; server?: string; source?: string; definition?: string };

export type WebviewMessageType = WebviewToHost['type'];

// ───────────────────────────── validators ─────────────────────────────
// Small hand-written type guards. Extra fields are tolerated; missing or mistyped ones are not.

type Guard<T> = (value: unknown) => value is T;
type Guarded<G> = G extends Guard<infer T> ? T : never;

const isString: Guard<string> = (v): v is string => typeof v === 'string';
const isBoolean: Guard<boolean> = (v): v is boolean => typeof v === 'boolean';
const isCount: Guard<number> = (v): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function oneOf<const T extends string>(values: readonly T[]): Guard<T> {
  return (v): v is T => typeof v === 'string' && (values as readonly string[]).includes(v);
}

function optional<T>(guard: Guard<T>): Guard<T | undefined> {
  return (v): v is T | undefined => v === undefined || guard(v);
}

function arrayOf<T>(guard: Guard<T>): Guard<T[]> {
  return (v): v is T[] => Array.isArray(v) && v.every((item) => guard(item));
}

function nullable<T>(guard: Guard<T>): Guard<T | null> {
  return (v): v is T | null => v === null || guard(v);
}

function shape<S extends Record<string, Guard<unknown>>>(fields: S): Guard<{ [K in keyof S]: Guarded<S[K]> }> {
  return (v): v is { [K in keyof S]: Guarded<S[K]> } =>
    isRecord(v) && Object.keys(fields).every((key) => (fields[key] as Guard<unknown>)(v[key]));
}

const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

const isToolCallView: Guard<ToolCallView> = shape({
  callId: isId,
  tool: isString,
  summary: isString,
  status: oneOf(['running', 'ok', 'error', 'denied', 'refused', 'cancelled', 'pending-approval'] as const),
  result: optional(isString),
  sandbox: optional(shape({ writable: isBoolean, changed: arrayOf(isString) })),
  progress: optional(arrayOf(isString)),
});

const isApprovalDecision = oneOf(['allow', 'deny', 'always'] as const);
const isConflictResolution = oneOf(['overwrite', 'keep-mine'] as const);

const isChatActionId = oneOf(['manageTrust', 'openUserSettings', 'setApiKey', 'selectModel', 'runLive', 'setUpEndpoint'] as const);
const isSettingKey = (v: unknown): v is string => typeof v === 'string' && /^speculate(\.[A-Za-z][\w-]*)+$/.test(v);
const isChatAction: Guard<ChatAction> = shape({ action: isChatActionId, label: isString, setting: optional(isSettingKey) });
const isNoticeTone = oneOf(['info', 'warning'] as const);

const isConflictFile: Guard<ConflictFile> = shape({
  path: isString,
  reason: isString,
  resolution: optional(isConflictResolution),
});

const isAttachmentKind = oneOf(['file', 'selection', 'problems'] as const);
const isLineNumber = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;
const isAttachmentView: Guard<AttachmentView> = shape({ id: isId, kind: isAttachmentKind, label: isString, path: isString, line: optional(isLineNumber) });
const isMentionItem: Guard<MentionItem> = shape({ kind: isAttachmentKind, label: isString, detail: isString, path: optional(isString) });
const isHistoryEntry: Guard<HistoryEntry> = shape({ id: isId, title: isString, updatedAt: isCount, workspace: isString, model: isString, current: isBoolean });
const isUsageLine: Guard<UsageLine> = shape({ text: isString, detail: isString });
const isModelRole = oneOf(['main', 'fast'] as const);

const isFileChange = oneOf(['modified', 'created', 'deleted'] as const);
const isCheckpointView: Guard<CheckpointView> = shape({
  checkpointId: isId,
  state: oneOf(['applied', 'undone'] as const),
  files: arrayOf(shape({ path: isString, change: isFileChange })),
});
const isUndoDirection = oneOf(['undo', 'redo'] as const);
const isUndoConflictResolution = oneOf(['restore', 'keep-mine'] as const);
const isUndoConflictFile: Guard<UndoConflictFile> = shape({ path: isString, reason: isString, canRestore: isBoolean, resolution: optional(isUndoConflictResolution) });
const isSpeculationFiles: Guard<SpeculationFiles> = shape({
  runId: isId,
  files: arrayOf(shape({ path: isString, change: isFileChange, added: isCount, removed: isCount, binary: optional(isBoolean), excluded: isBoolean, hunks: optional(shape({ kept: isCount, total: isCount })) })),
});

const isMcpServersView: Guard<McpServersView> = shape({
  servers: arrayOf(
    shape({
      name: isString,
      source: isString,
      fromWorkspace: isBoolean,
      transport: oneOf(['stdio', 'http', 'sse'] as const),
      target: isString,
      state: oneOf(['not-started', 'starting', 'running', 'restarting', 'error', 'stopped', 'awaiting-approval', 'blocked'] as const),
      error: optional(isString),
      restartAt: optional(isCount),
      runAhead: isBoolean,
      tools: arrayOf(shape({ name: isString, description: isString, readOnly: isBoolean })),
      changed: optional(isBoolean),
      detail: optional(isString),
      definition: optional(isString),
    }),
  ),
  notes: arrayOf(isString),
});

const transcriptItemGuards: { [K in TranscriptItemKind]: Guard<Extract<TranscriptItem, { kind: K }>> } = {
  user: shape({ kind: oneOf(['user'] as const), id: isId, text: isString, speculated: optional(isBoolean), attachments: optional(arrayOf(isAttachmentView)) }),
  assistant: shape({
    kind: oneOf(['assistant'] as const),
    id: isId,
    text: isString,
    reasoning: optional(isString),
    streaming: optional(isBoolean),
    speculated: optional(isBoolean),
  }),
  toolGroup: shape({
    kind: oneOf(['toolGroup'] as const),
    id: isId,
    calls: arrayOf(isToolCallView),
    done: isBoolean,
    speculated: optional(isBoolean),
  }),
  approval: shape({
    kind: oneOf(['approval'] as const),
    id: isId,
    tool: isString,
    summary: isString,
    detail: isString,
    callId: optional(isString),
    decision: optional(isApprovalDecision),
  }),
  error: shape({ kind: oneOf(['error'] as const), id: isId, message: isString, retryable: isBoolean, actions: optional(arrayOf(isChatAction)) }),
  notice: shape({
    kind: oneOf(['notice'] as const),
    id: isId,
    text: isString,
    tone: optional(isNoticeTone),
    actions: optional(arrayOf(isChatAction)),
  }),
  conflicts: shape({ kind: oneOf(['conflicts'] as const), id: isId, files: arrayOf(isConflictFile) }),
  usage: shape({ kind: oneOf(['usage'] as const), id: isId, text: isString, detail: isString }),
  turnEnd: shape({ kind: oneOf(['turnEnd'] as const), id: isId, text: isString, checkpoint: optional(isCheckpointView), speculated: optional(isBoolean), historyLength: optional(isCount) }),
  undoConflicts: shape({ kind: oneOf(['undoConflicts'] as const), id: isId, checkpointId: isId, direction: isUndoDirection, files: arrayOf(isUndoConflictFile) }),
};

export function isTranscriptItem(v: unknown): v is TranscriptItem {
  if (!isRecord(v) || typeof v.kind !== 'string' || !Object.hasOwn(transcriptItemGuards, v.kind)) return false;
  return transcriptItemGuards[v.kind as TranscriptItemKind](v);
}

const isSpeculationStatus: Guard<SpeculationStatus> = shape({
  state: oneOf(['idle', 'running', 'ready', 'boundary', 'failed'] as const),
  toolCalls: isCount,
  filesWritten: arrayOf(isString),
  suggestionId: optional(isString),
  boundary: optional(shape({ type: isString, tool: isString, detail: isString, text: optional(isString) })),
  error: optional(isString),
  commitAhead: optional(shape({ moves: arrayOf(isString), log: isString, note: isString })),
});

const isModelInfo: Guard<ModelInfo> = shape({ label: isString, demo: isBoolean, unconfigured: optional(isBoolean), fast: optional(isString) });

const isFolderView: Guard<FolderView> = shape({ name: isString, path: isString, others: isCount });
const isChatSettings: Guard<ChatSettings> = shape({ enterAcceptsSuggestion: isBoolean, tabMovesFocus: optional(isBoolean) });
const isSuggestion: Guard<Suggestion> = shape({ id: isId, text: isString });

const isSpeculationPreview: Guard<SpeculationPreview> = shape({
  seq: isCount,
  suggestionId: isId,
  final: isBoolean,
  from: isCount,
  items: arrayOf(isTranscriptItem),
  next: nullable(isSuggestion),
});

const isChatSnapshot: Guard<ChatSnapshot> = shape({
  folder: optional(isFolderView),
  transcript: arrayOf(isTranscriptItem),
  busy: isBoolean,
  draft: optional(isString),
  suggestion: nullable(isSuggestion),
  speculation: isSpeculationStatus,
  model: isModelInfo,
  settings: isChatSettings,
  usage: optional(nullable(isUsageLine)),
  title: optional(isString),
  preview: optional(isSpeculationPreview),
  speculationFiles: optional(nullable(isSpeculationFiles)),
});

function literal<const T extends string>(value: T): Guard<T> {
  return (v): v is T => v === value;
}

const hostGuards: { [K in HostMessageType]: Guard<Extract<HostToWebview, { type: K }>> } = {
  init: shape({ type: literal('init'), state: isChatSnapshot }),
  config: shape({ type: literal('config'), model: isModelInfo, settings: isChatSettings, folder: optional(isFolderView) }),
  userMessage: shape({ type: literal('userMessage'), id: isId, text: isString, speculated: optional(isBoolean), attachments: optional(arrayOf(isAttachmentView)) }),
  assistantStart: shape({ type: literal('assistantStart'), id: isId, speculated: optional(isBoolean) }),
  assistantDelta: shape({ type: literal('assistantDelta'), id: isId, text: isString }),
  reasoningDelta: shape({ type: literal('reasoningDelta'), id: isId, text: isString }),
  assistantEnd: shape({ type: literal('assistantEnd'), id: isId }),
  toolGroupStart: shape({
    type: literal('toolGroupStart'),
    id: isId,
    calls: arrayOf(isToolCallView),
    speculated: optional(isBoolean),
  }),
  toolCallUpdate: shape({ type: literal('toolCallUpdate'), groupId: isId, call: isToolCallView }),
  toolGroupEnd: shape({ type: literal('toolGroupEnd'), id: isId }),
  approvalRequest: shape({
    type: literal('approvalRequest'),
    id: isId,
    tool: isString,
    summary: isString,
    detail: isString,
    callId: optional(isString),
  }),
  approvalResolved: shape({ type: literal('approvalResolved'), id: isId, decision: isApprovalDecision }),
  error: shape({ type: literal('error'), id: isId, message: isString, retryable: isBoolean, actions: optional(arrayOf(isChatAction)) }),
  turnState: shape({ type: literal('turnState'), busy: isBoolean }),
  notice: shape({ type: literal('notice'), id: isId, text: isString, tone: optional(isNoticeTone), actions: optional(arrayOf(isChatAction)) }),
  suggestion: shape({ type: literal('suggestion'), id: isId, text: isString }),
  suggestionCleared: shape({ type: literal('suggestionCleared') }),
  speculation: shape({ type: literal('speculation'), status: isSpeculationStatus }),
  appendItems: shape({ type: literal('appendItems'), items: arrayOf(isTranscriptItem) }),
  conflicts: shape({ type: literal('conflicts'), id: isId, files: arrayOf(isConflictFile) }),
  conflictResolved: shape({
    type: literal('conflictResolved'),
    id: isId,
    path: isString,
    resolution: isConflictResolution,
  }),
  speculationPreview: shape({ type: literal('speculationPreview'), preview: nullable(isSpeculationPreview) }),
  revealAnswer: shape({
    type: literal('revealAnswer'),
    seq: isCount,
    outcome: oneOf(['applied', 'conflicts', 'withdrawn'] as const),
    notApplied: arrayOf(isString),
  }),
  clear: shape({ type: literal('clear') }),
  focusInput: shape({ type: literal('focusInput') }),
  truncate: shape({ type: literal('truncate'), afterId: optional(isId) }),
  chatUsage: shape({ type: literal('chatUsage'), usage: nullable(isUsageLine) }),
  showHistory: shape({ type: literal('showHistory') }),
  history: shape({ type: literal('history'), query: isString, entries: arrayOf(isHistoryEntry) }),
  chatTitle: shape({ type: literal('chatTitle'), title: isString }),
  mentions: shape({ type: literal('mentions'), requestId: isCount, items: arrayOf(isMentionItem) }),
  attachmentAdded: shape({ type: literal('attachmentAdded'), attachment: isAttachmentView }),
  models: shape({ type: literal('models'), role: isModelRole, models: arrayOf(isString), current: isString, error: optional(isString) }),
  checkpointUpdate: shape({ type: literal('checkpointUpdate'), checkpoint: isCheckpointView }),
  undoConflictResolved: shape({ type: literal('undoConflictResolved'), id: isId, path: isString, resolution: isUndoConflictResolution }),
  speculationFiles: shape({ type: literal('speculationFiles'), files: nullable(isSpeculationFiles) }),
  mcpServers: shape({ type: literal('mcpServers'), view: isMcpServersView }),
};

const isLine = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;

const webviewGuards: { [K in WebviewMessageType]: Guard<Extract<WebviewToHost, { type: K }>> } = {
  ready: shape({ type: literal('ready') }),
  submit: shape({ type: literal('submit'), text: (v): v is string => typeof v === 'string' && v.trim().length > 0, attachments: optional(arrayOf(isId)) }),
  acceptSuggestion: shape({
    type: literal('acceptSuggestion'),
    suggestionId: isId,
    method: oneOf(['tab', 'enter', 'click'] as const),
  }),
  acceptRevealed: shape({
    type: literal('acceptRevealed'),
    suggestionId: isId,
    seq: isCount,
    method: oneOf(['tab', 'enter', 'click'] as const),
  }),
  suggestionDismissed: shape({
    type: literal('suggestionDismissed'),
    suggestionId: isId,
    why: oneOf(['typed', 'escape', 'paste', 'edit'] as const),
  }),
  typing: shape({ type: literal('typing'), hasText: isBoolean }),
  approvalAnswer: shape({ type: literal('approvalAnswer'), id: isId, decision: isApprovalDecision }),
  stopTurn: shape({ type: literal('stopTurn') }),
  retry: shape({ type: literal('retry'), errorId: isId }),
  previewChanges: shape({ type: literal('previewChanges'), path: optional(isString) }),
  abortSpeculation: shape({ type: literal('abortSpeculation') }),
  conflictChoice: shape({
    type: literal('conflictChoice'),
    conflictId: isId,
    path: isId,
    choice: oneOf(['open-diff', 'overwrite', 'keep-mine'] as const),
  }),
  newChat: shape({ type: literal('newChat') }),
  openFile: shape({ type: literal('openFile'), path: isId, line: optional(isLine) }),
  openLink: shape({ type: literal('openLink'), url: (v): v is string => typeof v === 'string' && /^https?:\/\//i.test(v) }),
  copyText: shape({ type: literal('copyText'), text: isString }),
  editMessage: shape({ type: literal('editMessage'), id: isId, text: (v): v is string => typeof v === 'string' && v.trim().length > 0, restoreFiles: optional(isBoolean) }),
  regenerate: shape({ type: literal('regenerate') }),
  historyQuery: shape({ type: literal('historyQuery'), query: isString }),
  historyOpen: shape({ type: literal('historyOpen'), id: isId }),
  historyRename: shape({ type: literal('historyRename'), id: isId, title: (v): v is string => typeof v === 'string' && v.trim().length > 0 }),
  historyDelete: shape({ type: literal('historyDelete'), id: isId }),
  mentionQuery: shape({ type: literal('mentionQuery'), requestId: isCount, query: isString }),
  attach: shape({ type: literal('attach'), kind: isAttachmentKind, path: optional(isId) }),
  removeAttachment: shape({ type: literal('removeAttachment'), id: isId }),
  pickAttachment: shape({ type: literal('pickAttachment') }),
  listModels: shape({ type: literal('listModels'), role: isModelRole }),
  selectModel: shape({ type: literal('selectModel'), role: isModelRole, model: isString }),
  chatAction: shape({ type: literal('chatAction'), action: isChatActionId, setting: optional(isSettingKey) }),
  checkpointAction: shape({ type: literal('checkpointAction'), checkpointId: isId, action: oneOf(['undo', 'redo', 'changes'] as const) }),
  restoreTo: shape({ type: literal('restoreTo'), turnEndId: isId }),
  undoConflictChoice: shape({ type: literal('undoConflictChoice'), conflictId: isId, path: isId, choice: oneOf(['open-diff', 'restore', 'keep-mine'] as const) }),
  excludeFile: shape({ type: literal('excludeFile'), runId: isId, path: isId, excluded: isBoolean }),
  pickFolder: shape({ type: literal('pickFolder') }),
  mcpAction: shape({ type: literal('mcpAction'), action: oneOf(['restart', 'allow', 'showLog', 'openSettings'] as const), server: optional(isId), source: optional(isId), definition: optional(isId) }),
};

/** What the host does with every message event: anything malformed comes back undefined, ignore it. */
export function parseWebviewMessage(raw: unknown): WebviewToHost | undefined {
  if (!isRecord(raw) || typeof raw.type !== 'string' || !Object.hasOwn(webviewGuards, raw.type)) return undefined;
  const guard = webviewGuards[raw.type as WebviewMessageType] as Guard<WebviewToHost>;
  return guard(raw) ? raw : undefined;
}

/** The webview's counterpart: a host message it cannot trust the shape of is ignored. */
export function parseHostMessage(raw: unknown): HostToWebview | undefined {
  if (!isRecord(raw) || typeof raw.type !== 'string' || !Object.hasOwn(hostGuards, raw.type)) return undefined;
  const guard = hostGuards[raw.type as HostMessageType] as Guard<HostToWebview>;
  return guard(raw) ? raw : undefined;
}

/** The wording of the notice after an accepted speculation, kept here so every front says it alike. */
export function speculationNoticeText(toolCalls: number, savedMs: number): string {
  const calls = `Speculated ${toolCalls} tool call${toolCalls === 1 ? '' : 's'}`;
  const seconds = Math.max(0, savedMs) / 1000;
  return `${calls} · ${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s saved`;
}
