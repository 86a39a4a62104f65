// Palette commands. Each one either works or says clearly what it needs.
import * as vscode from 'vscode';
import type { ChatViewProvider } from './chatView';
import type { ApiKeyStore } from './settings';

export interface CommandServices {
  apiKeys: ApiKeyStore;
  chatView: ChatViewProvider;
}

export function registerCommands(context: vscode.ExtensionContext, services: CommandServices): void {
  const register = (id: string, handler: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));

  register('speculate.setApiKey', async () => {
    const value = await vscode.window.showInputBox({
      title: 'Speculate: API key for your OpenAI-compatible endpoint',
      prompt: 'Stored in VS Code\'s secret storage on this machine. Leave empty and press Enter to remove the stored key.',
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return;
    if (value.trim() === '') {
      await services.apiKeys.delete();
      void vscode.window.showInformationMessage('Speculate: API key removed.');
    } else {
      await services.apiKeys.set(value.trim());
      void vscode.window.showInformationMessage('Speculate: API key saved.');
    }
  });
  register('speculate.focusChat', () => vscode.commands.executeCommand('speculate.chat.focus'));
}
