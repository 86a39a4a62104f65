// The extension-host service that owns the engine for the open workspace: the chat session, the
// presenter feeding the webview, the speculation: file system, the status bar and the context keys.
import * as vscode from 'vscode';
import type { SessionConfig, SessionEvent } from '../core/session';
import { ChatSession } from '../core/session';
import { SpeculateStats } from '../core/stats/speculateStats';
import { applySandboxSettings, openWorkspaceServices, type SandboxSettings, type WorkspaceServices, type WorkspaceServicesOptions } from '../core/workspaceServices';
import { urlTemplateSearchProvider } from '../core/tools/urlTemplateSearch';
import { resolveInsideWorkspace } from '../core/fs/paths';
import type { HostToWebview, WebviewToHost } from '../shared/protocol';
import type { ApiKeyStore, LegacyKeyOutcome } from './setup/apiKeys';
import { chatAction, runChatAction } from './chat/chatActions';
import { FileLearnedProfileStore, LearnedProfiles } from '../core/llm/learnedProfiles';
import { ApprovalDiffs, registerApprovalHunks } from './chat/approvalDiff';
import { ChatPresenter } from './chat/chatPresenter';
import { acceptRevealed } from './speculation/speculationPreview';
import type { ChatViewProvider } from './chat/chatView';
import { CheckpointActions } from './checkpoints/checkpointActions';
import type { CheckpointDocumentProvider } from './checkpoints/checkpointDocuments';
import { openCheckpointStore } from './checkpoints/checkpointStorage';
import { ChatFolder, folderView, type FolderChange } from './chat/chatFolder';
import { setContextKey } from './common/contextKeys';
import { closeSpeculationTabs, openSpeculationPreview } from './speculation/diffPreview';
import { NO_ENDPOINT_ACTIONS, NO_ENDPOINT_MESSAGE, resolveEndpoint, SettingsLlmClient, type Endpoint } from './setup/endpoint';
import { IgnoredSettingsWatcher } from './setup/ignoredSettings';
import { EditorLspProvider } from './chat/lspProvider';
import { ignoredWorkspaceSettingsText, trustedNowText, UNTRUSTED_WORKSPACE_TEXT, type UserOnlySetting } from './setup/settingPolicy';
import { readSettings, updateSetting, type SpeculateSettings } from './setup/settings';
import { speculationUri, type SpeculationFileSystemProvider } from './speculation/speculationFs';
import { SpeculationStatusBar } from './speculation/statusBar';
import { describeBackend } from '../core/sandbox/chosenSandbox';
import { ChatHistory } from './history/chatHistory';
import { readChatSettings } from './chat/chatSettings';
import { ContextAttachments } from './chat/contextAttachments';
import { HistoryActions } from './history/historyActions';
import { UsageLedger } from '../core/usage/usageLedger';
import { formatUsageSummary, summarizeUsage } from '../core/usage/prices';
import type { ModelRole } from '../shared/protocol';
import { SpeculationReview } from './speculation/speculationReview';
import { registerHunkLenses, type SpeculationHunkLenses } from './speculation/hunkLenses';
import { registerCheckpointHunks, type CheckpointHunkReview } from './checkpoints/checkpointHunks';
import { MEMORY_FILE_NAME } from '../core/workspaceServices';

const STATS_KEY = 'speculate.stats';
const USAGE_KEY = 'speculate.usage';
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
  /** An untrusted folder: plan mode, no speculation, and its Speculate settings do not count. */
  private trusted: boolean;
  private settings: SpeculateSettings;
  /** Tokens of all chats, for the statistics view; kept in the extension's global state. */
  private readonly usageTotals: UsageLedger;
  private chatSettings: ReturnType<typeof readChatSettings>;
  private readonly history: ChatHistory;
  private readonly historyActions: HistoryActions;
  private readonly attachments: ContextAttachments;
  private readonly demoUrl = process.env.SPECULATE_DEMO_MODEL_URL || undefined;
  private readonly presenter: ChatPresenter;
  private readonly statusBar = new SpeculationStatusBar();
  private readonly disposables: vscode.Disposable[] = [];
  private session: ChatSession | undefined;
  /** The folder the session works on; a chat that has begun keeps it (its history's paths are that folder's). */
  private sessionFolder: vscode.WorkspaceFolder | undefined;
  private services: WorkspaceServices | undefined;
  private starting: Promise<ChatSession | undefined> | undefined;
  private readonly llm: SettingsLlmClient;
  private runInFs: string | undefined;
  /** The sandbox's probe answer goes to the log once per window. */
  private sandboxReported = false;
  /** The accept of a block the webview revealed on Tab, while it runs. */
  private revealing: Promise<void> | undefined;
  private readonly postEmitter = new vscode.EventEmitter<HostToWebview>();
  /** Every protocol message sent to the chat webview (tests observe the chat through it). */
  readonly onDidPostToWebview = this.postEmitter.event;
  readonly checkpoints: CheckpointActions;
  private readonly review: SpeculationReview;
  private readonly hunkLenses: SpeculationHunkLenses;
  private readonly checkpointHunks: CheckpointHunkReview;
  private readonly approvalDiffs: ApprovalDiffs;

  constructor(private readonly deps: ControllerDeps) {
    this.trusted = deps.trust.isTrusted;
    this.settings = readSettings(this.trusted);
    this.chatSettings = readChatSettings(this.trusted);
    this.stats = SpeculateStats.restore(deps.context.globalState.get(STATS_KEY));
    this.disposables.push({ dispose: this.stats.onChange(() => void deps.context.globalState.update(STATS_KEY, this.stats.toJSON())) });
    this.usageTotals = UsageLedger.restore(deps.context.globalState.get(USAGE_KEY));
    // What endpoints taught us (fields they refuse, thinking switches that work) lives in the
    // extension's global storage: never in workspace settings, which a repository could write.
    const storage = deps.context.globalStorageUri;
    const learned = new LearnedProfiles(storage.scheme === 'file' ? new FileLearnedProfileStore(storage.fsPath) : undefined, (line) => deps.output.warn(line));
    this.llm = new SettingsLlmClient({ current: () => ({ endpoint: this.endpoint(), settings: this.settings }), keys: deps.apiKeys, learned, log: (line) => this.log(line) });
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
          fast: this.settings.fastModel,
          ...(endpoint ? {} : { unconfigured: true }),
        };
      },
      settings: () => ({ enterAcceptsSuggestion: this.settings.enterAcceptsSuggestion, tabMovesFocus: deps.tabFocus.tabMovesFocus }),
      prices: () => this.chatSettings.prices,
      logError: (message) => deps.output.error(message),
      folder: () => folderView(this.workingFolder()),
    });
    this.history = new ChatHistory({
      context: deps.context,
      workspaceName: () => vscode.workspace.workspaceFolders?.[0]?.name ?? '',
      maxBytes: () => this.chatSettings.historyMaxBytes,
      titleChanged: (title) => this.presenter.setTitle(title),
      content: () =>
        this.session && { messages: this.session.messages, usage: this.session.usageSnapshot, view: this.presenter.exportView(), model: this.sessionConfig().model },
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
    if (!this.trusted) {
      this.deps.output.warn(UNTRUSTED_WORKSPACE_TEXT);
      this.presenter.pinNotice(UNTRUSTED_WORKSPACE_TEXT, { tone: 'warning', actions: [chatAction('manageTrust')] });
    }
    setContextKey('speculate.endpointConfigured', this.settings.baseUrl !== '');
    void this.migrateLegacyKey();
  }

  endpoint(): Endpoint | undefined {
    return resolveEndpoint(this.settings, this.demoUrl);
  }

  /** Whether the open folder is trusted (the agent then runs as the user's settings say). */
  get workspaceTrusted(): boolean {
    return this.trusted;
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
    return this.settings.baseUrl;
  }

  private sessionConfig(): SessionConfig {
    return {
      model: this.endpoint()?.model ?? '',
      fastModel: this.settings.fastModel,
      // Restricted Mode: reads only, and nothing runs ahead unattended.
      approvalMode: this.trusted ? this.settings.approvalMode : 'plan',
      suggestionsEnabled: this.settings.suggestionsEnabled,
      speculationEnabled: this.trusted && this.settings.speculationEnabled,
      maxTurns: this.settings.maxTurns,
      maxMessages: this.settings.maxMessages,
      subAgentModel: this.settings.subAgentModel ?? 'fast',
    };
  }

  private sandboxSettings(): SandboxSettings {
    return { enabled: this.settings.sandboxEnabled, timeoutMs: this.settings.sandboxTimeoutMs, maxWriteBytes: this.settings.sandboxMaxWriteBytes };
  }

  /** Says once in the log whether shell commands run ahead in the sandbox here, and if not why and what to do. */
  private reportSandbox(): void {
    const sandbox = this.services?.toolContext.shellSandbox;
    if (!sandbox || this.sandboxReported) return;
    this.sandboxReported = true;
    void sandbox.probe().then((answer) => {
      this.statusBar.sandboxNote = describeBackend(answer);
      if (answer.available && answer.backend === 'landlock') this.log(`Sandbox: ${describeBackend(answer)}.`);
      else if (answer.available) this.log(`Sandbox: shell commands run ahead in Linux namespaces over the speculation (${answer.backend}).`);
      else this.log(`Sandbox not available: ${answer.reason}. Commands that change files stop speculation.${answer.action ? ` ${answer.action}` : ''}`);
    });
  }

  private onSettingsChanged(): void {
    this.settings = readSettings(this.trusted);
    this.services?.protectedPaths.update(this.settings.protectedPaths);
    this.chatSettings = readChatSettings(this.trusted);
    if (this.services) {
      applySandboxSettings(this.services.toolContext, this.sandboxSettings());
      this.reportSandbox();
    }
    setContextKey('speculate.endpointConfigured', this.settings.baseUrl !== '');
    this.session?.updateConfig(this.sessionConfig());
    this.presenter.sendConfig();
    void this.migrateLegacyKey();
  }

  private onTrustGranted(): void {
    if (this.trusted) return;
    this.trusted = true;
    this.presenter.unpinNotices();
    this.onSettingsChanged();
    const text = trustedNowText(this.settings.approvalMode, this.settings.speculationEnabled);
    this.log(text);
    this.presenter.notice(text);
  }

  private reportIgnoredSettings(keys: UserOnlySetting[]): void {
    const text = ignoredWorkspaceSettingsText(keys);
    this.deps.output.warn(text);
    this.presenter.notice(text, { tone: 'warning', actions: [chatAction('openUserSettings', keys.length === 1 ? keys[0] : undefined)] });
  }

  /**
   * The one key of earlier versions goes to the endpoint of the user's settings once there is one
   * (at start and on every settings change until then); never to a workspace's endpoint.
   */
  async migrateLegacyKey(): Promise<LegacyKeyOutcome | undefined> {
    const origin = this.settings.baseUrl ? this.endpoint()?.origin : undefined;
    const outcome = await this.deps.apiKeys.adoptLegacyKey(origin).catch((error: unknown) => {
      this.deps.output.warn(`could not move the stored API key: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    if (outcome?.kind === 'adopted') this.log(`The API key stored by an earlier version is now the key for ${outcome.origin} (speculate.baseUrl) and is sent only there.`);
    if (outcome?.kind === 'superseded') this.log(`${outcome.origin} has a key already; the one stored by an earlier version was removed.`);
    return outcome;
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

  /** The header's folder button. */
  async pickFolder(): Promise<void> {
    const current = this.workingFolder();
    const chosen = await this.deps.folder.ask(current, (this.session?.messages.length ?? 0) > 0);
    if (chosen) this.deps.folder.pick(chosen);
    await this.deps.chatView.reveal(true);
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
    const services = await openWorkspaceServices(folder.uri.fsPath, {
      protectedPaths: this.settings.protectedPaths,
      otherWorkspaces: others.map((f) => f.uri.fsPath),
      toolContext: {
        lsp: new EditorLspProvider(folder.uri),
        // Reads the setting on each search, so configuring it later needs no reload.
        webSearch: urlTemplateSearchProvider(() => this.settings.webSearchUrl),
      },
      sandbox: this.sandboxSettings(),
      ...(this.memoryDir() ? { memoryDir: this.memoryDir() } : {}),
      ...(this.deps.mcpTools ? { extraTools: this.deps.mcpTools } : {}),
    });
    this.services = services;
    const checkpoints = await openCheckpointStore(this.deps.context, services.fs.root, this.deps.output, this.deps.housekeeping);
    if (!checkpoints.store) this.presenter.notice(`Checkpoints are off in this window (${checkpoints.error}); changes cannot be undone from the chat.`, { tone: 'warning' });
    for (const warning of services.warnings) this.deps.output.warn(warning);
    this.reportSandbox();
    const session = new ChatSession({
      llm: this.llm,
      config: this.sessionConfig(),
      systemPrompt: services.systemPrompt,
      tools: services.tools,
      toolContext: services.toolContext,
      prompter: {
        // An edit waiting for approval shows its diff beside the chat while the question is open.
        request: async (request) => {
          const diff = this.approvalDiffs.open(request).catch(() => undefined);
          try {
            const answer = await this.presenter.request(request);
            // Allowed with changes dropped in the diff: the kept ones are written, and the model told.
            const partial = answer === 'deny' ? undefined : (await diff)?.partial();
            return partial ? { answer: 'allow' as const, partial } : answer;
          } finally {
            void diff.then((handle) => handle?.close());
          }
        },
      },
      classifyShell: services.classifyShell,
      createOverlay: services.createOverlay,
      turnContext: services.turnContext,
      // Restricted Mode keeps plan mode: an approved plan cannot switch an untrusted folder to edits.
      planExitBlocked: () => (this.trusted ? undefined : 'this folder is in Restricted Mode, where Speculate only reads. Trust the folder to let it carry out the plan.'),
      ...(checkpoints.store ? { checkpoints: checkpoints.store } : {}),
      stats: this.stats,
      log: (line) => this.log(line),
    });
    session.subscribe((event) => this.onSessionEvent(event));
    await this.restoreOpenChat(session);
    this.session = session;
    this.sessionFolder = folder;
    if (others.length > 0) this.log(`The chat works on the folder ${folder.name} (${folder.uri.fsPath}); paths into ${others.map((f) => f.name).join(', ')} are those folders' own.`);
    return session;
  }

  /** After a reload: the chat that was open comes back as it was (nothing of a speculation does). */
  private async restoreOpenChat(session: ChatSession): Promise<void> {
    try {
      const chat = await this.history.restoreOpenChat();
      if (chat) await this.historyActions.show(session, chat);
    } catch (error) {
      this.log(`restoring the open chat failed: ${String(error)}`);
    }
    for (const notice of this.history.takeNotices()) {
      this.presenter.notice(notice);
      void vscode.window.showWarningMessage(`Speculate: ${notice}`);
    }
  }

  private onSessionEvent(event: SessionEvent): void {
    this.presenter.handle(event);
    if (SAVED_AFTER.has(event.type)) this.history.scheduleSave();
    if (event.type === 'usage') {
      this.usageTotals.add(event.source, event.model, { promptTokens: event.counts.input, cachedTokens: event.counts.cached, completionTokens: event.counts.output });
      void this.deps.context.globalState.update(USAGE_KEY, this.usageTotals.snapshot());
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
    const session = this.session;
    const snapshot = session?.currentSpeculation ?? null;
    const overlay = session?.currentOverlay;
    const active = snapshot !== null && (snapshot.status === 'running' || snapshot.status === 'completed' || snapshot.status === 'boundary');
    setContextKey('speculate.speculationActive', active || (session?.conflictsPending ?? false));
    setContextKey('speculate.speculationHasChanges', active && snapshot.filesWritten.length > 0);
    // The speculation: file system shows exactly the current run; a finished run's URIs go stale.
    if (this.runInFs && this.runInFs !== snapshot?.id) {
      this.deps.fsProvider.removeRun(this.runInFs);
      void closeSpeculationTabs(this.runInFs);
      this.runInFs = undefined;
    }
    if (snapshot && overlay && active && !this.runInFs) {
      const source = {
        fs: overlay,
        ...('onDidChange' in overlay ? { onDidChange: (listener: (paths: string[]) => void) => (overlay as unknown as { onDidChange(l: (p: string[]) => void): { dispose(): void } }).onDidChange(listener) } : {}),
      };
      this.deps.fsProvider.addRun(snapshot.id, { ...source, folder: this.sessionFolder?.name ?? '' });
      this.runInFs = snapshot.id;
    }
    if (!snapshot) this.statusBar.update({ state: 'idle' });
    else if (snapshot.status === 'running') this.statusBar.update({ state: 'running', toolCalls: snapshot.toolCalls.filter((c) => c.executed).length });
    else if (snapshot.status === 'completed') this.statusBar.update({ state: 'ready', files: snapshot.filesWritten.length });
    else if (snapshot.status === 'boundary') this.statusBar.update({ state: 'boundary', detail: snapshot.boundary?.detail ?? 'stopped', files: snapshot.filesWritten.length });
    else if (snapshot.status === 'failed') this.statusBar.update({ state: 'failed', error: snapshot.errorReason ?? snapshot.error ?? 'failed' });
    else this.statusBar.update({ state: 'idle' });
  }

  private onConflicts(paths: string[]): void {
    setContextKey('speculate.speculationActive', true);
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

  private async dispatch(message: WebviewToHost): Promise<void> {
    switch (message.type) {
      case 'ready':
        // The open chat is restored when the session starts, so the first picture is the right one.
        if (this.deps.folder.current) await this.ensureSession();
        this.presenter.sendInit();
        return;
      case 'submit': {
        if (!this.endpoint()) {
          // Shown, but not in the history (-1): nothing was sent, so there is nothing to edit.
          this.presenter.handle({ type: 'user_message', text: message.text, historyIndex: -1, attachments: [] });
          this.presenter.error(NO_ENDPOINT_MESSAGE, false, NO_ENDPOINT_ACTIONS);
          return;
        }
        // A submit leaves the input empty; the webview sends no separate `typing` for it.
        const session = await this.ensureSession();
        session?.setUserTyping(false);
        const { attachments, problems } = await this.attachments.take(message.attachments ?? []);
        for (const problem of problems) this.presenter.notice(`Not attached: ${problem}`);
        await session?.submit(message.text, attachments);
        return;
      }
      case 'acceptSuggestion':
        if (this.revealing) await this.revealing;
        if (message.suggestionId !== this.presenter.currentSuggestionId) return;
        await this.accept(message.method === 'enter' ? 'enter' : 'tab');
        return;
      case 'acceptRevealed': {
        const method = message.method === 'enter' ? 'enter' : 'tab';
        const accepting = acceptRevealed(
          { session: this.session, presenter: this.presenter, acceptUsual: () => this.accept(method) },
          { suggestionId: message.suggestionId, seq: message.seq, method },
        );
        this.revealing = accepting;
        try {
          await accepting;
        } finally {
          if (this.revealing === accepting) this.revealing = undefined;
        }
        return;
      }
      case 'suggestionDismissed':
        // The webview shows the next suggestion with a revealed block, before the host does.
        if (this.revealing) await this.revealing;
        if (message.suggestionId !== this.presenter.currentSuggestionId) return;
        this.session?.dismissSuggestion();
        return;
      case 'typing':
        this.session?.setUserTyping(message.hasText);
        return;
      case 'approvalAnswer':
        this.presenter.answerApproval(message.id, message.decision);
        return;
      case 'stopTurn':
        this.session?.stop();
        return;
      case 'retry':
        await this.session?.retry();
        return;
      case 'previewChanges':
        await this.preview(message.path);
        return;
      case 'abortSpeculation':
        await this.abort();
        return;
      case 'conflictChoice':
        await this.conflictChoice(message.path, message.choice);
        return;
      case 'newChat':
        await this.newChat();
        return;
      case 'openFile':
        await this.openFile(message.path, message.line);
        return;
      case 'openLink':
        if (/^https?:\/\//i.test(message.url)) await vscode.env.openExternal(vscode.Uri.parse(message.url));
        return;
      case 'copyText':
        await vscode.env.clipboard.writeText(message.text);
        return;
      case 'chatAction':
        // Not a command: the session runs the request its refused accept held back.
        if (message.action === 'runLive') await this.session?.runRefusedLive();
        else await runChatAction(message.action, message.setting);
        return;
      case 'editMessage':
        return this.editMessage(message.id, message.text, message.restoreFiles === true);
      case 'regenerate': {
        const outcome = await this.session?.regenerate();
        if (outcome?.status === 'refused') this.presenter.notice(outcome.reason);
        return;
      }
      case 'historyQuery':
        return this.historyActions.list(message.query);
      case 'historyOpen':
        return this.historyActions.open(message.id);
      case 'historyRename':
        return this.historyActions.rename(message.id, message.title);
      case 'historyDelete':
        return this.historyActions.delete(message.id);
      case 'mentionQuery':
        this.presenter.post({ type: 'mentions', requestId: message.requestId, items: await this.attachments.mentions(message.query) });
        return;
      case 'attach':
        return this.attach(message.kind, message.path);
      case 'removeAttachment':
        this.attachments.remove(message.id);
        return;
      case 'pickAttachment':
        return this.pickAttachment();
      case 'listModels':
        return this.listModels(message.role);
      case 'selectModel':
        // The settings change aborts a speculation built on the old model (onSettingsChanged).
        await updateSetting(message.role === 'main' ? 'model' : 'fastModel', message.model, this.trusted);
        return;
      case 'checkpointAction':
        await this.checkpoints.act(message.checkpointId, message.action);
        return;
      case 'restoreTo':
        await this.checkpoints.restoreTo(message.turnEndId);
        return;
      case 'undoConflictChoice':
        await this.checkpoints.choose(message.conflictId, message.path, message.choice);
        return;
      case 'excludeFile':
        this.review.exclude(message.runId, message.path, message.excluded);
        return;
      case 'pickFolder':
        await this.pickFolder();
        return;
    }
  }

  private async editMessage(id: string, text: string, restoreFiles = false): Promise<void> {
    const session = await this.ensureSession();
    const index = this.presenter.historyIndexOf(id);
    if (!session || index === undefined) {
      this.presenter.notice('This message can no longer be edited.');
      return;
    }
    // Files are not rewound unless the user asked (the editor's "Restore files and send").
    const later = restoreFiles ? this.presenter.checkpointsAfter(id) : [];
    if (later.length > 0 && !(await this.checkpoints.undoBeforeResend(later))) return;
    this.presenter.prepareEdit(id);
    const outcome = await session.editAndResend(index, text);
    if (outcome?.status === 'refused') this.presenter.notice(outcome.reason);
  }

  private async attach(kind: 'file' | 'selection' | 'problems', path?: string): Promise<void> {
    if (kind === 'file') await this.ensureSession();
    const result = await this.attachments.attach(kind, path);
    if (result.ok) this.presenter.post({ type: 'attachmentAdded', attachment: result.view });
    else this.presenter.notice(`Not attached: ${result.reason}`);
  }

  /** The paperclip's "Browse…": VS Code's file dialog, opened in the workspace. */
  private async pickAttachment(): Promise<void> {
    const folder = this.workingFolder();
    const picked = await vscode.window.showOpenDialog({ canSelectMany: true, canSelectFolders: false, defaultUri: folder?.uri, openLabel: 'Attach' });
    for (const uri of picked ?? []) await this.attach('file', uri.toString());
  }

  private async listModels(role: ModelRole): Promise<void> {
    const current = role === 'main' ? (this.endpoint()?.model ?? '') : this.settings.fastModel;
    if (!this.endpoint()) {
      this.presenter.post({ type: 'models', role, models: [], current, error: NO_ENDPOINT_MESSAGE });
      return;
    }
    try {
      const models = [...new Set(await this.llm.listModels())].sort();
      this.presenter.post({ type: 'models', role, models, current });
    } catch (error) {
      this.presenter.post({ type: 'models', role, models: [], current, error: `Could not list the endpoint's models: ${error instanceof Error ? error.message : String(error)}` });
    }
  }

  /** The statistics view: suggestion and speculation counts, then the tokens of all chats. */
  statisticsText(): string {
    const usage = formatUsageSummary(summarizeUsage(this.usageTotals, this.chatSettings.prices), 'Tokens, all chats');
    return `${this.stats.format(this.forkModels())}\n\n${usage.join('\n')}`;
  }

  /** Tab / palette "Accept Speculation". */
  async accept(method: 'tab' | 'enter' = 'tab'): Promise<void> {
    const session = this.session;
    if (!session || session.visibleSuggestion === null) {
      void vscode.window.showInformationMessage('Speculate: there is no suggestion to accept right now.');
      return;
    }
    await session.acceptSuggestion(method);
  }

  /** Palette "Abort Speculation": the request is cancelled, the overlay deleted, the ghost text goes. */
  async abort(): Promise<void> {
    const session = this.session;
    if (!session) return;
    if (session.conflictsPending) await session.discard();
    else session.dismissSuggestion();
    await session.abortSpeculation('aborted from the palette');
  }

  async discard(): Promise<void> {
    await this.session?.discard();
  }

  /** New Chat keeps the old chat in the history, so it asks nothing. */
  async newChat(): Promise<void> {
    await this.historyActions.newChat(this.session);
    await this.deps.chatView.reveal(true);
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

  async preview(path?: string): Promise<void> {
    const session = this.session;
    const snapshot = session?.currentSpeculation;
    const folder = this.sessionFolder;
    // A changed path on a tool card after Tab: the change is in the workspace now, so show the file.
    if (path && !snapshot?.filesWritten.some((file) => file.path === path)) {
      await this.openFile(path);
      return;
    }
    if (!snapshot || !folder) {
      void vscode.window.showInformationMessage('Speculate: no speculation is running, so there is nothing to preview.');
      return;
    }
    const files = path ? snapshot.filesWritten.filter((f) => f.path === path) : snapshot.filesWritten;
    await openSpeculationPreview(folder.uri, { id: snapshot.id, folder: folder.name, suggestion: snapshot.suggestion, files });
    // The multi-file diff editor takes focus; give it back to the chat input.
    if (files.length > 1 && this.deps.chatView.visible) await this.deps.chatView.reveal(true);
  }

  private async conflictChoice(path: string, choice: 'open-diff' | 'overwrite' | 'keep-mine'): Promise<void> {
    const session = this.session;
    const folder = this.sessionFolder;
    if (!session || !folder) return;
    if (choice === 'open-diff') {
      const runId = session.currentSpeculation?.id;
      if (!runId) return;
      const real = vscode.Uri.joinPath(folder.uri, ...path.split('/'));
      await vscode.commands.executeCommand('vscode.diff', real, speculationUri(runId, folder.name, path), `${path}: yours ⇄ speculated`, { preserveFocus: true, preview: true });
      return;
    }
    this.presenter.conflictResolved(path, choice);
    await session.resolveConflict(path, choice);
  }

  private async openFile(requested: string, line?: number): Promise<void> {
    const folder = this.workingFolder();
    if (!folder) return;
    let relative: string;
    try {
      // The tools' view of the folders: a path into another open folder opens there.
      relative = this.services
        ? await this.services.toolContext.fs.resolve(requested)
        : await resolveInsideWorkspace(folder.uri.fsPath, requested, [folder.uri.fsPath]);
    } catch {
      void vscode.window.showWarningMessage(`Speculate: "${requested}" is outside the workspace and was not opened.`);
      return;
    }
    let uri: vscode.Uri | undefined = vscode.Uri.joinPath(folder.uri, ...relative.split('/'));
    // Answers often name a file without its folder ("session.ts:142"): find it in the workspace.
    if (!(await vscode.workspace.fs.stat(uri).then(() => true, () => false))) uri = await findByName(folder, relative);
    if (!uri) {
      void vscode.window.showWarningMessage(`Speculate: "${requested}" was not found in the workspace.`);
      return;
    }
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(position, position), preview: true });
  }

  /** The chat model and the fast model, for the statistics' cost note. */
  forkModels(): { model: string; fastModel: string } {
    return { model: this.endpoint()?.model ?? '', fastModel: this.settings.fastModel };
  }

  /** The user's memory file lives in the extension's global storage (the user's, never a workspace's). */
  private memoryDir(): string | undefined {
    const storage = this.deps.context.globalStorageUri;
    return storage.scheme === 'file' ? storage.fsPath : undefined;
  }

  /** `Speculate: Open Memory File`: the file save_memory appends to, in an editor (created empty if missing). */
  async openMemory(): Promise<void> {
    const folder = this.memoryDir();
    if (!folder) {
      void vscode.window.showWarningMessage('Speculate: this window has no global storage on disk, so there is no memory file.');
      return;
    }
    const uri = vscode.Uri.joinPath(vscode.Uri.file(folder), MEMORY_FILE_NAME);
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      await vscode.workspace.fs.createDirectory(vscode.Uri.file(folder));
      await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode('# Speculate memory: one fact per line. Later chats read it as part of their instructions.\n'));
    }
    await vscode.window.showTextDocument(uri, { preview: false });
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

/** The workspace file a path's last segments name (one match opens, several ask which). */
async function findByName(folder: vscode.WorkspaceFolder, relative: string): Promise<vscode.Uri | undefined> {
  const glob = `**/${relative.replace(/[[\]{}*?!]/g, (ch) => `[${ch}]`)}`;
  const found = await vscode.workspace.findFiles(new vscode.RelativePattern(folder, glob), undefined, 20);
  if (found.length <= 1) return found[0];
  const picked = await vscode.window.showQuickPick(
    found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri, false), uri })),
    { title: `Speculate: which ${relative}?`, placeHolder: 'Several files in the workspace have this name' },
  );
  return picked?.uri;
}
