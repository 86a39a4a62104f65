// activate(): builds the services, registers providers and commands. Wiring only.
import * as vscode from 'vscode';
import { cleanupStaleOverlays } from './core/followup/overlayFs';
import { ApiKeyStore } from './vscode/apiKeys';
import { ChatViewProvider } from './vscode/chatView';
import { registerCommands } from './vscode/commands';
import { SpeculateController } from './vscode/controller';
import { registerDiffPreview } from './vscode/diffPreview';
import { SPECULATION_SCHEME, SpeculationFileSystemProvider } from './vscode/speculationFs';

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
}

let active: SpeculateController | undefined;

export function activate(context: vscode.ExtensionContext): SpeculateApi | undefined {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Speculate', { log: true });
  const apiKeys = new ApiKeyStore(context.secrets);
  const chatView = new ChatViewProvider(context.extensionUri, (line) => output.warn(line));
  const fsProvider = new SpeculationFileSystemProvider();
  const controller = new SpeculateController({ context, chatView, fsProvider, apiKeys, output, trust: vscode.workspace });
  active = controller;
  context.subscriptions.push(
    output,
    apiKeys,
    chatView,
    fsProvider,
    controller,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chatView, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerFileSystemProvider(SPECULATION_SCHEME, fsProvider, {
      isCaseSensitive: true,
      isReadonly: new vscode.MarkdownString('This is a **speculation preview**: what Speculate would write if you accept. It is read-only; press Tab in the chat to apply it.'),
    }),
  );
  registerDiffPreview(context);
  registerCommands(context, { apiKeys, chatView, controller });
  // Overlays of crashed windows: finish or roll back interrupted accepts, then delete them. Off the
  // activation path: it touches the disk and nothing waits for it.
  setTimeout(() => {
    // Only journals of the folders open in this window are acted on; others wait for theirs.
    const workspaces = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    cleanupStaleOverlays({ workspaces }).then(
      (report) => output.info(`startup housekeeping: ${JSON.stringify(report)}`),
      (error: unknown) => output.warn(`startup housekeeping failed: ${String(error)}`),
    );
  }, 2000);
  // Any extension can read another's exports: the internals (and the key store) go to tests only.
  if (context.extensionMode !== vscode.ExtensionMode.Test) return undefined;
  return { activationMs: performance.now() - started, controller, fsProvider, chatView, apiKeys, secrets: context.secrets, logUri: context.logUri };
}

/** VS Code waits for this on close and reload: the open chat is saved, a running speculation stopped and its overlay deleted. */
export async function deactivate(): Promise<void> {
  const controller = active;
  active = undefined;
  await controller?.shutdown();
}
