// The window's MCP servers: the user's speculate.mcpServers and the allowed servers of each folder's
// .vscode/mcp.json, run by one McpManager (lazily, on the first turn that offers tools), listed in the chat view.
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { McpManager, parseMcpServers, type McpConfigParse, type McpServerConfig, type McpSnapshot } from '../../core/mcp';
import type { HostToWebview, McpActionId, McpServersView, WebviewToHost } from '../../shared/protocol';
import { definitionHash, planMcpServers, USER_MCP_SOURCE, WorkspaceServerAllowList, type McpServerPlan, type WorkspaceMcpFile } from './mcpAllowList';
import { mcpServersView } from './mcpServersView';
import { readWorkspaceMcpFile } from './mcpWorkspaceFile';
import { userValue } from '../setup/settingPolicy';

export interface McpServersDeps {
  output: vscode.LogOutputChannel;
  /** Where the allow-list of workspace servers is kept (the extension's globalState). */
  globalState: vscode.Memento;
  trust: { readonly isTrusted: boolean; readonly onDidGrantWorkspaceTrust: vscode.Event<void> };
  post: (message: HostToWebview) => void;
  onMessage: vscode.Event<WebviewToHost>;
  clientVersion?: string;
}

export class McpServers implements vscode.Disposable {
  private manager: McpManager;
  /** The folders the manager was made for (they decide where servers run and which PATH entries are dropped). */
  private managerFolders: string;
  private unsubscribeManager: () => void;
  private readonly allowList: WorkspaceServerAllowList;
  private readonly disposables: vscode.Disposable[] = [];
  private plan: McpServerPlan = { servers: [], pending: [], blocked: [], errors: [] };
  /** Reloads run one after another: a quick second change must not apply an older read last. */
  private reloading: Promise<void> = Promise.resolve();
  private watchers: vscode.Disposable[] = [];
  private disposed = false;

  constructor(private readonly deps: McpServersDeps) {
    this.managerFolders = folderKey();
    this.manager = this.createManager();
    this.unsubscribeManager = this.manager.onDidChange(() => this.publish());
    this.allowList = new WorkspaceServerAllowList(deps.globalState);
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('speculate.mcpServers')) void this.reload();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        this.watch();
        void this.reload();
      }),
      deps.trust.onDidGrantWorkspaceTrust(() => void this.reload()),
      deps.onMessage((message) => void this.onMessage(message)),
    );
    this.watch();
    void this.reload();
  }

  /** The tools of the running servers, for the chat's tool registry (its prepare() starts them); the same object whatever manager runs. */
  readonly tools: Pick<McpManager, 'tools' | 'prepare'> = {
    tools: () => this.manager.tools(),
    prepare: (signal) => this.manager.prepare(signal),
  };

  private createManager(): McpManager {
    const folders = fileFolders();
    return new McpManager({
      log: (line) => this.deps.output.info(`MCP ${line}`),
      ...(folders[0] ? { defaultCwd: folders[0].uri.fsPath } : {}),
      // A repository's folders on PATH must not supply the `node` or `npx` a user's server runs.
      untrustedRoots: folders.map((folder) => folder.uri.fsPath),
      ...(this.deps.clientVersion ? { clientVersion: this.deps.clientVersion } : {}),
    });
  }

  /** Settles once the configuration last changed has been read and handed to the manager. */
  whenLoaded(): Promise<void> {
    return this.reloading;
  }

  /** For the tests: the servers as the manager has them. */
  snapshot(): McpSnapshot {
    return this.manager.snapshot();
  }

  view(): McpServersView {
    return mcpServersView(this.manager.snapshot(), this.plan, this.deps.trust.isTrusted);
  }

  /** Reads the settings and every folder's .vscode/mcp.json again, and gives the manager what may run. */
  reload(): Promise<void> {
    this.reloading = this.reloading.then(() => this.load()).catch((error: unknown) => this.deps.output.error(`MCP: reading the server configuration failed: ${String(error)}`));
    return this.reloading;
  }

  private async load(): Promise<void> {
    if (this.disposed) return;
    const user = readUserServers();
    const workspaces = await Promise.all(fileFolders().map((folder) => readWorkspaceFile(folder)));
    // Other folders: servers run where the first one is now, and drop every folder's PATH entries.
    if (folderKey() !== this.managerFolders) {
      const old = this.manager;
      this.unsubscribeManager();
      this.managerFolders = folderKey();
      this.manager = this.createManager();
      this.unsubscribeManager = this.manager.onDidChange(() => this.publish());
      await old.dispose();
    }
    this.plan = planMcpServers({ user, workspaces, trusted: this.deps.trust.isTrusted, allowList: this.allowList, untrustedCwd: homedir() });
    for (const error of this.plan.errors) this.deps.output.warn(`MCP ${error}`);
    await this.manager.setServers(this.plan.servers, this.plan.errors);
    this.publish();
  }

  private publish(): void {
    if (!this.disposed) this.deps.post({ type: 'mcpServers', view: this.view() });
  }

  /** One watcher per folder for its .vscode/mcp.json (created, changed or deleted). */
  private watch(): void {
    for (const watcher of this.watchers) watcher.dispose();
    this.watchers = fileFolders().map((folder) => {
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '.vscode/mcp.json'));
      const changed = () => void this.reload();
      watcher.onDidCreate(changed);
      watcher.onDidChange(changed);
      watcher.onDidDelete(changed);
      return watcher;
    });
  }

  private async onMessage(message: WebviewToHost): Promise<void> {
    if (message.type === 'ready') return this.publish();
    if (message.type !== 'mcpAction') return;
    try {
      await this.act(message.action, message.server, message.source, message.definition);
    } catch (error) {
      this.deps.output.error(`MCP: ${message.action} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async act(action: McpActionId, server: string | undefined, source: string | undefined, definition: string | undefined): Promise<void> {
    switch (action) {
      case 'showLog':
        this.deps.output.show(true);
        return;
      case 'openSettings':
        await vscode.commands.executeCommand('workbench.action.openSettings', 'speculate.mcpServers');
        return;
      case 'restart':
        if (server !== undefined) await this.restart(server);
        return;
      case 'allow':
        if (server !== undefined && source !== undefined && definition !== undefined) await this.allow(server, source, definition);
        return;
    }
  }

  /** The list's Restart: the server starts again now, its earlier failures forgotten. */
  async restart(name: string): Promise<void> {
    this.deps.output.info(`MCP [${name}] restarting (asked from the server list).`);
    await this.manager.restart(name);
  }

  /**
   * The list's Allow, confirmed in the list with everything the definition runs. `definition` is the
   * hash of what the user saw: a file changed since then is not allowed (its new form waits for its own yes).
   * (Not a modal dialog: the list already shows the program in full, and keyboard and tests reach it.)
   */
  async allow(name: string, source: string, definition: string): Promise<boolean> {
    await this.reloading;
    const pending = this.plan.pending.find((entry) => entry.config.name === name && entry.config.source === source);
    if (!pending || definitionHash(pending.config) !== definition) {
      this.deps.output.warn(`MCP [${name}] was not allowed: ${pending ? 'its definition changed since the list showed it; check it again' : `${source} no longer asks for it`}.`);
      this.publish();
      return false;
    }
    await this.allowDefinition(pending.workspace, pending.config);
    return true;
  }

  /** Records the user's yes for this exact definition and reloads (the tests call it without the dialog). */
  async allowDefinition(workspace: string, config: McpServerConfig): Promise<void> {
    await this.allowList.allow(workspace, config);
    this.deps.output.info(`MCP [${config.name}] allowed from ${config.source}; it starts with the next turn that offers tools.`);
    await this.reload();
  }

  /** Stops every server (the window closes or reloads). */
  async shutdown(): Promise<void> {
    this.disposed = true;
    for (const d of [...this.disposables, ...this.watchers]) d.dispose();
    this.unsubscribeManager();
    await this.manager.dispose();
  }

  dispose(): void {
    void this.shutdown();
  }
}

function folderKey(): string {
  return JSON.stringify(fileFolders().map((folder) => folder.uri.fsPath));
}

function fileFolders(): vscode.WorkspaceFolder[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === 'file');
}

/** speculate.mcpServers from the user's settings only (scope application: a workspace cannot add a program). */
function readUserServers(): McpConfigParse {
  const inspected = vscode.workspace.getConfiguration('speculate').inspect('mcpServers');
  const value = userValue(inspected);
  if (value === undefined || value === null) return { servers: [], errors: [] };
  // ${workspaceFolder} in the user's own entries is the window's first folder (the one servers run in).
  const first = fileFolders()[0];
  return parseMcpServers(value, USER_MCP_SOURCE, { userHome: homedir(), env: process.env, ...(first ? { workspaceFolder: first.uri.fsPath } : {}) });
}

function readWorkspaceFile(folder: vscode.WorkspaceFolder): Promise<WorkspaceMcpFile> {
  return readWorkspaceMcpFile({ workspace: folder.uri.toString(), path: folder.uri.fsPath, name: folder.name });
}
