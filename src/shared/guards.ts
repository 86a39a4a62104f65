// Runtime validators for both directions of the chat protocol: whatever arrives is checked against
// the types before either side acts on it (a compromised webview, or a stale host message).
import type { ToolCallView, ConflictFile, ChatAction, TranscriptItem, TranscriptItemKind, SpeculationStatusView, ModelInfo, FolderView, ChatSettings, Suggestion, SpeculationPreview, ChatSnapshot, CheckpointView, UndoConflictFile, SpeculationFiles, AttachmentView, MentionItem, HistoryEntry, UsageLine, McpServersView } from './views';
import type { HostToWebview, HostMessageType, WebviewToHost, WebviewMessageType } from './messages';

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

const isSpeculationStatus: Guard<SpeculationStatusView> = shape({
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
