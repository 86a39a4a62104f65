// activate(): builds the services, registers providers and commands. Wiring only.
import * as vscode from 'vscode';
import { ChatViewProvider } from './vscode/chatView';
import { registerCommands } from './vscode/commands';
import { ApiKeyStore } from './vscode/settings';

export interface SpeculateApi {
  /** For tests: how long activate() took. */
  activationMs: number;
}

export function activate(context: vscode.ExtensionContext): SpeculateApi {
  const started = performance.now();
  const apiKeys = new ApiKeyStore(context.secrets);
  const chatView = new ChatViewProvider(context.extensionUri);
  context.subscriptions.push(vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chatView, { webviewOptions: { retainContextWhenHidden: true } }));
  registerCommands(context, { apiKeys, chatView });
  return { activationMs: performance.now() - started };
}

export function deactivate(): void {}
