// The messages each way between the extension host and the chat webview (the conversation order is
// in protocol.ts), one union per direction, each member named by its `type`.
import type { ToolCallView, ApprovalChoice, ConflictResolution, ConflictAction, ConflictFile, ChatActionId, ChatAction, NoticeTone, TranscriptItem, SpeculationStatusView, ModelInfo, FolderView, ChatSettings, SpeculationPreview, RevealOutcome, ChatSnapshot, CheckpointView, UndoConflictResolution, SpeculationFiles, AttachmentKind, AttachmentView, MentionItem, HistoryEntry, UsageLine, ModelRole, McpServersView, McpActionId } from './views';

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
  | { type: 'approvalResolved'; id: string; decision: ApprovalChoice }
  | { type: 'error'; id: string; message: string; retryable: boolean; actions?: ChatAction[] }
  | { type: 'turnState'; busy: boolean }
  /** A quiet line in the transcript, e.g. "Speculated 4 tool calls · 3.2 s saved". */
  | { type: 'notice'; id: string; text: string; tone?: NoticeTone; actions?: ChatAction[] }
  /** Ghost text in the empty input. Replaces any earlier suggestion. */
  | { type: 'suggestion'; id: string; text: string }
  | { type: 'suggestionCleared' }
  | { type: 'speculation'; status: SpeculationStatusView }
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

/** How the user accepted in the webview (core's AcceptMethod counts Tab, Enter and the right arrow for its statistics). */
export type AcceptGesture = 'tab' | 'enter' | 'click';

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
  | { type: 'acceptSuggestion'; suggestionId: string; method: AcceptGesture }
  /** Accept, with the preview `seq` already on screen: the host applies exactly that version or refuses. */
  | { type: 'acceptRevealed'; suggestionId: string; seq: number; method: AcceptGesture }
  | { type: 'suggestionDismissed'; suggestionId: string; why: DismissReason }
  /** The input became non-empty (hasText true) or empty again; sent on each change of the two. */
  | { type: 'typing'; hasText: boolean }
  | { type: 'approvalAnswer'; id: string; decision: ApprovalChoice }
  | { type: 'stopTurn' }
  /** Retry button of the error block `errorId`. */
  | { type: 'retry'; errorId: string }
  /** Diff of one written file, or of all of them (multi-file diff) when path is absent. */
  | { type: 'previewChanges'; path?: string }
  | { type: 'abortSpeculation' }
  | { type: 'conflictChoice'; conflictId: string; path: string; choice: ConflictAction }
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
