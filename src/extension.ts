// activate(): builds the services, registers providers and commands. Wiring only.
import * as vscode from 'vscode';
import type { CheckpointStore } from './core/checkpoints';
import { cleanupStaleOverlays } from './core/followup/overlayFs';
import { ApiKeyStore } from './vscode/setup/apiKeys';
import { ChatFolder } from './vscode/chat/chatFolder';
import { ChatViewProvider } from './vscode/chat/chatView';
import { CHECKPOINT_SCHEME, CheckpointDocumentProvider, PROPOSED_SCHEME } from './vscode/checkpoints/checkpointDocuments';
import { registerCommands } from './vscode/commands';
import { SpeculateController } from './vscode/controller';
import { registerDiffPreview } from './vscode/speculation/diffPreview';
import { McpServers } from './vscode/mcp/mcpServers';
import { SPECULATION_SCHEME, SpeculationFileSystemProvider } from './vscode/speculation/speculationFs';
import { TabFocusModeMirror } from './vscode/chat/tabFocusMode';

/** What activate() returns to the integration tests and the benchmarks' probe (in test mode only). */
export interface SpeculateApi {
  /** How long activate() took, in milliseconds (recorded by the integration tests). */
  activationMs: number;
  controller: SpeculateController;
  fsProvider: SpeculationFileSystemProvider;
  chatView: ChatViewProvider;
  apiKeys: ApiKeyStore;
  /** The extension's SecretStorage (the tests plant a key of an earlier version in it). */
  secrets: vscode.SecretStorage;
  /** Where the Speculate output channel's log file is written. */
  logUri: vscode.Uri;
  /** The window's MCP servers. */
  mcp: McpServers;
}

let active: SpeculateController | undefined;
let activeMcp: McpServers | undefined;

export function activate(context: vscode.ExtensionContext): SpeculateApi | undefined {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Speculate', { log: true });
  const apiKeys = new ApiKeyStore(context.secrets);
  const chatView = new ChatViewProvider(context.extensionUri, (line) => output.warn(line));
  const fsProvider = new SpeculationFileSystemProvider();
  // Overlays of crashed windows: finish or roll back interrupted accepts, then delete them. Off the
  // activation path: it touches the disk and nothing waits for it — except checkpoint recovery,
  // which must see the files as those accepts left them.
  const housekeeping = new Promise<void>((done) => {
    setTimeout(() => {
      // Only journals of the folders open in this window are acted on; others wait for theirs.
      const workspaces = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
      cleanupStaleOverlays({ workspaces })
        .then(
          (report) => output.info(`startup housekeeping: ${JSON.stringify(report)}`),
          (error: unknown) => output.warn(`startup housekeeping failed: ${String(error)}`),
        )
        .finally(done);
    }, 2000);
  });
  const documents: CheckpointDocumentProvider = new CheckpointDocumentProvider((): CheckpointStore | undefined => controller.currentSession?.checkpointStore);
  const tabFocus = new TabFocusModeMirror();
  const folder = new ChatFolder();
  const mcp = new McpServers({ output, globalState: context.globalState, trust: vscode.workspace, post: (message) => chatView.post(message), onMessage: chatView.onMessage, clientVersion: String(context.extension.packageJSON.version ?? '0') });
  activeMcp = mcp;
  const controller: SpeculateController = new SpeculateController({ context, chatView, fsProvider, apiKeys, output, trust: vscode.workspace, documents, housekeeping, tabFocus, folder, mcpTools: mcp.tools });
  active = controller;
  context.subscriptions.push(
    output,
    apiKeys,
    tabFocus,
    folder,
    chatView,
    fsProvider,
    controller,
    mcp,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chatView, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerFileSystemProvider(SPECULATION_SCHEME, fsProvider, {
      isCaseSensitive: true,
      isReadonly: new vscode.MarkdownString('This is a **speculation preview**: what Speculate would write if you accept. It is read-only; press Tab in the chat to apply it.'),
    }),
    documents,
    vscode.workspace.registerFileSystemProvider(CHECKPOINT_SCHEME, documents, {
      isCaseSensitive: true,
      isReadonly: new vscode.MarkdownString('A **saved copy** Speculate kept in a checkpoint. It is read-only; use Undo in the chat to restore it.'),
    }),
    vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, documents, {
      isCaseSensitive: true,
      isReadonly: new vscode.MarkdownString('What this tool call **would write** if you allow it in the chat. It is read-only.'),
    }),
    vscode.commands.registerCommand('speculate.undoLastChange', () => controller.undoLastChange()),
  );
  registerDiffPreview(context);
  registerCommands(context, { apiKeys, chatView, controller, tabFocus });
  // `npm start` opens straight into the chat, its input focused (a user's first run gets the walkthrough instead).
  if (process.env.SPECULATE_OPEN_CHAT === '1') void chatView.reveal(true);
  // Any extension can read another's exports: the internals (and the key store) go to tests only.
  if (context.extensionMode !== vscode.ExtensionMode.Test) return undefined;
  return { activationMs: performance.now() - started, controller, fsProvider, chatView, apiKeys, secrets: context.secrets, logUri: context.logUri, mcp };
}

/** VS Code waits for this on close and reload: the open chat is saved, a running speculation stopped and its overlay deleted, MCP servers stopped. */
export async function deactivate(): Promise<void> {
  const controller = active;
  const mcp = activeMcp;
  active = undefined;
  activeMcp = undefined;
  await Promise.all([controller?.shutdown(), mcp?.shutdown()]);
}
