// The extension-host service that owns the engine for the open workspace: the chat session, the
// presenter feeding the webview, the speculation: file system, the status bar and the context keys.
import * as vscode from 'vscode';
import type { ChatSession, SessionEvent } from '../core/session';
import { SpeculateStats } from '../core/stats/speculateStats';
import { applySandboxSettings, type WorkspaceServices, type WorkspaceServicesOptions } from '../core/workspaceServices';
import type { HostToWebview, WebviewToHost } from '../shared/protocol';
import type { ApiKeyStore, LegacyKeyOutcome } from './setup/apiKeys';
import { chatAction } from './chat/chatActions';
import { FileLearnedProfileStore, LearnedProfiles } from '../core/llm/learnedProfiles';
import { ApprovalDiffs, approvalWithDiff, registerApprovalHunks } from './chat/approvalDiff';
import { ChatPresenter } from './chat/chatPresenter';
import type { ChatViewProvider } from './chat/chatView';
import { CheckpointActions, isCheckpointMessage } from './checkpoints/checkpointActions';
import type { CheckpointDocumentProvider } from './checkpoints/checkpointDocuments';
import { ChatFolder, folderView, type FolderChange } from './chat/chatFolder';
import { setContextKey } from './common/contextKeys';
import { SettingsLlmClient, type Endpoint } from './setup/endpoint';
import { HostSettings } from './setup/hostSettings';
import { IgnoredSettingsWatcher } from './setup/ignoredSettings';
import { ignoredWorkspaceSettingsText, trustedNowText, UNTRUSTED_WORKSPACE_TEXT, type UserOnlySetting } from './setup/settingPolicy';
import type { SpeculationFileSystemProvider } from './speculation/speculationFs';
import { isSpeculationMessage, SpeculationMessages } from './speculation/speculationMessages';
import { SpeculationMirror } from './speculation/speculationMirror';
import { ChatMessages, isChatViewMessage } from './chat/chatMessages';
import { unhandledMessage } from './common/unhandledMessage';
import { SpeculationStatusBar } from './speculation/statusBar';
import { reportSandbox } from './speculation/sandboxReport';
import { ChatHistory } from './history/chatHistory';
import { ContextAttachments } from './chat/contextAttachments';
import { HistoryActions, isHistoryMessage } from './history/historyActions';
import { UsageTotals } from './chat/usageTotals';
import { SpeculationReview } from './speculation/speculationReview';
import { registerHunkLenses, type SpeculationHunkLenses } from './speculation/hunkLenses';
import { registerCheckpointHunks, type CheckpointHunkReview } from './checkpoints/checkpointHunks';
import { openMemoryFile } from './chat/memoryFile';
import { startChatSession } from './chat/sessionStart';

const STATS_KEY = 'speculate.stats';
/** Session events after which the open chat is saved (streaming deltas are not: the turn's end is). */
const SAVED_AFTER: ReadonlySet<SessionEvent['type']> = new Set(['user_message', 'busy', 'speculation_accepted', 'history_truncated', 'usage', 'notice', 'conflicts']);

/** Whether the user trusts the open folder (vscode.workspace fits). */
export interface WorkspaceTrust {
  readonly isTrusted: boolean;
  readonly onDidGrantWorkspaceTrust: vscode.Event<void>;
}

export interface ControllerDeps {
  context: vscode.ExtensionContext;
  chatView: ChatViewProvider;
  fsProvider: SpeculationFileSystemProvider;
  apiKeys: ApiKeyStore;
  output: vscode.LogOutputChannel;
  trust: WorkspaceTrust;
  /** Saved copies (checkpoint blobs) and proposed writes, for diffs. */
  documents: CheckpointDocumentProvider;
  /** Settles when the start-up recovery of crashed accepts is done (checkpoint recovery waits for it). */
  housekeeping: Promise<void>;
  /** Which workspace folder the chat works on (the active editor's, or the one picked in the header). */
  folder: ChatFolder;
  /** VS Code's "Tab Moves Focus": the chat input then accepts with Ctrl+Enter, not Tab. */
  tabFocus: { readonly tabMovesFocus: boolean; onDidChange: vscode.Event<boolean> };
  /** The window's MCP servers' tools (src/vscode/mcpServers.ts), offered after the built-ins. */
  mcpTools?: WorkspaceServicesOptions['extraTools'];
}

export class SpeculateController implements vscode.Disposable {
  readonly stats: SpeculateStats;
  /** The settings as the folder's trust lets them count (an untrusted folder: plan mode, no speculation). */
  private readonly host: HostSettings;
  /** Tokens of all chats, for the statistics view; kept in the extension's global state. */
  private readonly usageTotals: UsageTotals;
  private readonly history: ChatHistory;
  private readonly historyActions: HistoryActions;
  private readonly attachments: ContextAttachments;
  private readonly presenter: ChatPresenter;
  private readonly statusBar = new SpeculationStatusBar();
  private readonly disposables: vscode.Disposable[] = [];
  private session: ChatSession | undefined;
  /** The folder the session works on; a chat that has begun keeps it (its history's paths are that folder's). */
  private sessionFolder: vscode.WorkspaceFolder | undefined;
  private services: WorkspaceServices | undefined;
  private starting: Promise<ChatSession | undefined> | undefined;
  private readonly llm: SettingsLlmClient;
  /** The sandbox's probe answer goes to the log once per window. */
  private sandboxReported = false;
  private readonly postEmitter = new vscode.EventEmitter<HostToWebview>();
  /** Every protocol message sent to the chat webview (tests observe the chat through it). */
  readonly onDidPostToWebview = this.postEmitter.event;
  readonly checkpoints: CheckpointActions;
  private readonly review: SpeculationReview;
  private readonly mirror: SpeculationMirror;
  private readonly speculation: SpeculationMessages;
  private readonly chatMessages: ChatMessages;
  private readonly hunkLenses: SpeculationHunkLenses;
  private readonly checkpointHunks: CheckpointHunkReview;
  private readonly approvalDiffs: ApprovalDiffs;

  constructor(private readonly deps: ControllerDeps) {
    this.host = new HostSettings(deps.trust.isTrusted, deps.apiKeys, deps.output);
    this.stats = SpeculateStats.restore(deps.context.globalState.get(STATS_KEY));
    this.disposables.push({ dispose: this.stats.onChange(() => void deps.context.globalState.update(STATS_KEY, this.stats.toJSON())) });
    this.usageTotals = new UsageTotals(deps.context.globalState);
    // What endpoints taught us (fields they refuse, thinking switches that work) lives in the
    // extension's global storage: never in workspace settings, which a repository could write.
    const storage = deps.context.globalStorageUri;
    const learned = new LearnedProfiles(storage.scheme === 'file' ? new FileLearnedProfileStore(storage.fsPath) : undefined, (line) => deps.output.warn(line));
    this.llm = new SettingsLlmClient({ current: () => ({ endpoint: this.endpoint(), settings: this.host.settings }), keys: deps.apiKeys, learned, log: (line) => this.log(line) });
    this.presenter = new ChatPresenter({
      post: (message) => {
        deps.chatView.post(message);
        this.postEmitter.fire(message);
      },
      model: () => {
        const endpoint = this.endpoint();
        return {
          label: endpoint ? endpoint.model || 'no model selected' : 'no endpoint configured',
          demo: endpoint?.demo ?? false,
          fast: this.host.settings.fastModel,
          ...(endpoint ? {} : { unconfigured: true }),
        };
      },
      settings: () => ({ enterAcceptsSuggestion: this.host.settings.enterAcceptsSuggestion, tabMovesFocus: deps.tabFocus.tabMovesFocus }),
      prices: () => this.host.chat.prices,
      logError: (message) => deps.output.error(message),
      folder: () => folderView(this.workingFolder()),
    });
    this.history = new ChatHistory({
      context: deps.context,
      workspaceName: () => vscode.workspace.workspaceFolders?.[0]?.name ?? '',
      maxBytes: () => this.host.chat.historyMaxBytes,
      titleChanged: (title) => this.presenter.setTitle(title),
      content: () =>
        this.session && { messages: this.session.messages, usage: this.session.usageSnapshot, view: this.presenter.exportView(), model: this.host.sessionConfig().model },
      log: (line) => this.log(line),
    });
    this.attachments = new ContextAttachments({ folder: () => this.workingFolder(), fs: () => this.services?.fs });
    this.historyActions = new HistoryActions({
      history: this.history,
      presenter: this.presenter,
      session: () => this.ensureSession(),
      onChatSwitched: () => this.attachments.clear(),
      log: (line) => this.log(line),
    });
    // The folder of the session: its checkpoints and approvals name that folder's files.
    const workspace = () => (this.sessionFolder ?? this.workingFolder())?.uri;
    this.checkpoints = new CheckpointActions({
      session: () => this.session,
      presenter: this.presenter,
      workspace,
      revealChat: () => deps.chatView.reveal(true),
      log: (line) => this.log(line),
      changesOpened: (checkpointId, paths, state) => {
        if (state === 'applied') void this.checkpointHunks.opened(checkpointId, paths);
      },
    });
    this.checkpointHunks = registerCheckpointHunks(deps.context, { session: () => this.session, workspace, log: (line) => this.log(line) });
    this.review = new SpeculationReview({ session: () => this.session, workspaceFs: () => this.services?.fs, presenter: this.presenter, log: (line) => this.log(line) });
    this.hunkLenses = registerHunkLenses(deps.context, { session: () => this.session, onDropped: () => this.review.refreshNow(), log: (line) => this.log(line) });
    this.approvalDiffs = new ApprovalDiffs({ services: () => this.services, workspace, documents: deps.documents, log: (line) => this.log(line) });
    registerApprovalHunks(deps.context, this.approvalDiffs);
    this.mirror = new SpeculationMirror(deps.fsProvider, this.statusBar);
    this.chatMessages = new ChatMessages({
      session: () => this.session,
      ensureSession: () => this.ensureSession(),
      services: () => this.services,
      workingFolder: () => this.workingFolder(),
      endpoint: () => this.endpoint(),
      fastModel: () => this.host.settings.fastModel,
      trusted: () => this.host.trusted,
      llm: this.llm,
      presenter: this.presenter,
      attachments: this.attachments,
      checkpoints: this.checkpoints,
      history: this.historyActions,
      folder: deps.folder,
      chatView: deps.chatView,
    });
    this.speculation = new SpeculationMessages({
      session: () => this.session,
      sessionFolder: () => this.sessionFolder,
      presenter: this.presenter,
      review: this.review,
      chatView: deps.chatView,
      openFile: (path) => this.chatMessages.openFile(path),
    });
    this.disposables.push(
      this.statusBar,
      this.postEmitter,
      this.history,
      this.attachments,
      deps.chatView.onMessage((message) => void this.handleWebviewMessage(message)),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('speculate')) this.onSettingsChanged();
      }),
      deps.apiKeys.onDidChange(() => this.onSettingsChanged()),
      deps.tabFocus.onDidChange(() => this.presenter.sendConfig()),
      deps.folder.onDidChange((change) => void this.onFolderChanged(change)),
      deps.trust.onDidGrantWorkspaceTrust(() => this.onTrustGranted()),
      new IgnoredSettingsWatcher((keys) => this.reportIgnoredSettings(keys)),
    );
    if (!this.host.trusted) {
      this.deps.output.warn(UNTRUSTED_WORKSPACE_TEXT);
      this.presenter.pinNotice(UNTRUSTED_WORKSPACE_TEXT, { tone: 'warning', actions: [chatAction('manageTrust')] });
    }
    setContextKey('speculate.endpointConfigured', this.host.settings.baseUrl !== '');
    void this.migrateLegacyKey();
  }

  endpoint(): Endpoint | undefined {
    return this.host.endpoint();
  }

  /** Whether the open folder is trusted (the agent then runs as the user's settings say). */
  get workspaceTrusted(): boolean {
    return this.host.trusted;
  }

  get llmClient(): SettingsLlmClient {
    return this.llm;
  }

  private log(line: string): void {
    this.deps.output.info(line);
  }

  /** A line in the Speculate output channel (commands log what they did). */
  logLine(line: string): void {
    this.log(line);
  }

  /** speculate.baseUrl as the user set it ('' when unset; the demo model does not count). */
  get userBaseUrl(): string {
    return this.host.settings.baseUrl;
  }

  /** Says once in the log (and in the status bar's tooltip) which sandbox runs commands here, or why none does. */
  private reportSandbox(): void {
    const sandbox = this.services?.toolContext.shellSandbox;
    if (!sandbox || this.sandboxReported) return;
    this.sandboxReported = true;
    void reportSandbox(sandbox, this.statusBar, (line) => this.log(line));
  }

  private onSettingsChanged(): void {
    this.host.reload();
    this.services?.protectedPaths.update(this.host.settings.protectedPaths);
    if (this.services) {
      applySandboxSettings(this.services.toolContext, this.host.sandboxSettings());
      this.reportSandbox();
    }
    setContextKey('speculate.endpointConfigured', this.host.settings.baseUrl !== '');
    this.session?.updateConfig(this.host.sessionConfig());
    this.presenter.sendConfig();
    void this.migrateLegacyKey();
  }

  private onTrustGranted(): void {
    if (!this.host.grantTrust()) return;
    this.presenter.unpinNotices();
    this.onSettingsChanged();
    const text = trustedNowText(this.host.settings.approvalMode, this.host.settings.speculationEnabled);
    this.log(text);
    this.presenter.notice(text);
  }

  private reportIgnoredSettings(keys: UserOnlySetting[]): void {
    const text = ignoredWorkspaceSettingsText(keys);
    this.deps.output.warn(text);
    this.presenter.notice(text, { tone: 'warning', actions: [chatAction('openUserSettings', keys.length === 1 ? keys[0] : undefined)] });
  }

  /** The key of earlier versions, moved to the user's endpoint once there is one (tests call it). */
  migrateLegacyKey(): Promise<LegacyKeyOutcome | undefined> {
    return this.host.migrateLegacyKey();
  }

  /** The folder the chat works on: the session's once the chat has begun, else the one it would start in. */
  workingFolder(): vscode.WorkspaceFolder | undefined {
    if (this.session && this.sessionFolder && this.session.messages.length > 0) return this.sessionFolder;
    return this.deps.folder.current;
  }

  /**
   * The active editor, the header's pick or the open folders changed. A chat that has not begun
   * moves to the new folder; one that has keeps its folder unless the user picked another, which
   * starts a new chat there.
   */
  private async onFolderChanged(change: FolderChange): Promise<void> {
    const next = this.deps.folder.current;
    const gone = this.sessionFolder && !ChatFolder.folders().some((f) => f.uri.toString() === this.sessionFolder?.uri.toString());
    const moved = this.sessionFolder !== undefined && next?.uri.toString() !== this.sessionFolder.uri.toString();
    if (this.session && moved && (this.session.messages.length === 0 || change === 'picked' || gone)) {
      if (this.session.messages.length > 0) {
        await this.session.newChat();
        this.presenter.clear();
      }
      await this.closeSession();
      this.log(`The chat works on ${next?.name ?? 'no folder'} now.`);
    }
    this.presenter.sendConfig();
  }

  private async closeSession(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    this.services = undefined;
    this.sessionFolder = undefined;
    this.starting = undefined;
    this.onSpeculationChanged();
    await session?.dispose();
  }

  /** The session for the chat's folder, created on first use. */
  async ensureSession(): Promise<ChatSession | undefined> {
    if (this.session) return this.session;
    this.starting ??= this.createSession();
    return this.starting;
  }

  private async createSession(): Promise<ChatSession | undefined> {
    const folder = this.deps.folder.current;
    if (!folder) {
      this.presenter.error('Open a folder to chat with Speculate: its tools work on the files of a folder on disk.', false);
      this.starting = undefined;
      return undefined;
    }
    const others = ChatFolder.folders().filter((f) => f.uri.toString() !== folder.uri.toString());
    const { session, services } = await startChatSession(folder, others, {
      context: this.deps.context,
      output: this.deps.output,
      housekeeping: this.deps.housekeeping,
      host: this.host,
      llm: this.llm,
      prompter: approvalWithDiff(this.presenter, this.approvalDiffs),
      stats: this.stats,
      ...(this.deps.mcpTools ? { mcpTools: this.deps.mcpTools } : {}),
      notice: (text) => this.presenter.notice(text, { tone: 'warning' }),
    });
    this.services = services;
    this.reportSandbox();
    session.subscribe((event) => this.onSessionEvent(event));
    await this.historyActions.restoreOpenChat(session);
    this.session = session;
    this.sessionFolder = folder;
    if (others.length > 0) this.log(`The chat works on the folder ${folder.name} (${folder.uri.fsPath}); paths into ${others.map((f) => f.name).join(', ')} are those folders' own.`);
    return session;
  }

  private onSessionEvent(event: SessionEvent): void {
    this.presenter.handle(event);
    if (SAVED_AFTER.has(event.type)) this.history.scheduleSave();
    if (event.type === 'usage') {
      this.usageTotals.add(event);
    }
    if (event.type === 'suggestion') setContextKey('speculate.suggestionVisible', event.text !== null);
    if (event.type === 'speculation') {
      this.onSpeculationChanged();
      this.review.update();
      this.hunkLenses.forget(event.snapshot?.id);
    }
    if (event.type === 'conflicts') this.onConflicts(event.conflicts.map((c) => c.path));
  }

  private onSpeculationChanged(): void {
    this.mirror.update(this.session, this.sessionFolder?.name ?? '');
  }

  private onConflicts(paths: string[]): void {
    this.mirror.conflictsPending();
    this.log(`accept found files changed since the speculation copied them: ${paths.join(', ')}`);
  }

  /** A validated message from the chat webview (or from a test speaking the same protocol). */
  async handleWebviewMessage(message: WebviewToHost): Promise<void> {
    try {
      await this.dispatch(message);
    } catch (error) {
      this.log(`handling ${message.type} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      this.presenter.error(`Something went wrong: ${error instanceof Error ? error.message : String(error)}`, false);
    }
  }

  /** Each message goes to the room of its feature; a type no room takes leaves `message` not `never`: a compile error. */
  private async dispatch(message: WebviewToHost): Promise<void> {
    if (isChatViewMessage(message)) return this.chatMessages.handle(message);
    if (isSpeculationMessage(message)) return this.speculation.handle(message);
    if (isCheckpointMessage(message)) return this.checkpoints.handle(message);
    if (isHistoryMessage(message)) return this.historyActions.handle(message);
    // The MCP room (mcp/mcpServers.ts) listens to the chat view itself: its servers outlive a session.
    if (message.type === 'mcpAction') return;
    return unhandledMessage(message, 'controller');
  }

  /** The statistics view: suggestion and speculation counts, then the tokens of all chats. */
  statisticsText(): string {
    const usage = this.usageTotals.summary(this.host.chat.prices);
    return `${this.stats.format(this.forkModels())}\n\n${usage.join('\n')}`;
  }

  /** Tab / palette "Accept Speculation". */
  accept(method: 'tab' | 'enter' = 'tab'): Promise<void> {
    return this.speculation.accept(method);
  }

  /** Palette "Abort Speculation": the request is cancelled, the overlay deleted, the ghost text goes. */
  abort(): Promise<void> {
    return this.speculation.abort();
  }

  discard(): Promise<void> {
    return this.speculation.discard();
  }

  /** New Chat keeps the old chat in the history, so it asks nothing. */
  newChat(): Promise<void> {
    return this.chatMessages.newChat();
  }

  /** The History button in the view's title bar. */
  async showHistory(): Promise<void> {
    await this.deps.chatView.reveal(false);
    this.presenter.post({ type: 'showHistory' });
  }

  /** Deactivation (window closing or reloading): the open chat is saved, a speculation aborted and its overlay deleted. */
  async shutdown(): Promise<void> {
    try {
      await this.history.flush();
    } catch (error) {
      this.log(`saving the chat on shutdown failed: ${String(error)}`);
    }
    const session = this.session;
    this.session = undefined;
    await session?.dispose();
  }

  /** The speculation's diffs (palette "Preview Changes"). */
  preview(path?: string): Promise<void> {
    return this.speculation.preview(path);
  }

  /** The chat model and the fast model, for the statistics' cost note. */
  forkModels(): { model: string; fastModel: string } {
    return { model: this.endpoint()?.model ?? '', fastModel: this.host.settings.fastModel };
  }

  /** `Speculate: Open Memory File`: the file save_memory appends to, in an editor. */
  openMemory(): Promise<void> {
    return openMemoryFile(this.deps.context);
  }

  /** For tests and the statistics command. */
  get currentSession(): ChatSession | undefined {
    return this.session;
  }


  /** `Speculate: Undo Last Change`. */
  async undoLastChange(): Promise<void> {
    if (!(await this.ensureSession())) return;
    await this.checkpoints.undoLast();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.review.dispose();
    void this.session?.dispose();
  }
}
