// activate(): builds the services, registers providers and commands. Wiring only.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { cleanupStaleOverlays } from './core/followup/overlayFs';
import { ChatViewProvider } from './vscode/chatView';
import { registerCommands } from './vscode/commands';
import { SpeculateController } from './vscode/controller';
import { registerDiffPreview } from './vscode/diffPreview';
import { ApiKeyStore } from './vscode/settings';
import { SPECULATION_SCHEME, SpeculationFileSystemProvider } from './vscode/speculationFs';

export interface SpeculateApi {
  /** How long activate() took, in milliseconds (recorded by the integration tests). */
  activationMs: number;
  controller: SpeculateController;
  fsProvider: SpeculationFileSystemProvider;
  chatView: ChatViewProvider;
}

export function activate(context: vscode.ExtensionContext): SpeculateApi {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Speculate', { log: true });
  const apiKeys = new ApiKeyStore(context.secrets);
  const chatView = new ChatViewProvider(context.extensionUri, (line) => output.warn(line));
  const fsProvider = new SpeculationFileSystemProvider();
  const controller = new SpeculateController({ context, chatView, fsProvider, apiKeys, output });
  context.subscriptions.push(
    output,
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
    cleanupStaleOverlays(os.tmpdir()).then(
      (report) => output.info(`startup housekeeping: ${JSON.stringify(report)}`),
      (error: unknown) => output.warn(`startup housekeeping failed: ${String(error)}`),
    );
  }, 2000);
  return { activationMs: performance.now() - started, controller, fsProvider, chatView };
}

export function deactivate(): void {}
