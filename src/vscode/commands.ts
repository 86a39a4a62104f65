// Palette commands (category "Speculate"). Each one either works or says clearly what it needs.
import * as vscode from 'vscode';
import type { ChatViewProvider } from './chatView';
import type { SpeculateController } from './controller';
import type { ApiKeyStore } from './settings';
import { updateSetting } from './settings';

export interface CommandServices {
  apiKeys: ApiKeyStore;
  chatView: ChatViewProvider;
  controller: SpeculateController;
}

async function pickModel(services: CommandServices, setting: 'model' | 'fastModel'): Promise<void> {
  const endpoint = services.controller.endpoint();
  if (!endpoint) {
    const choice = await vscode.window.showWarningMessage('Speculate: set "speculate.baseUrl" to your OpenAI-compatible endpoint first.', 'Open Settings');
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'speculate.baseUrl');
    return;
  }
  const quickPick = vscode.window.createQuickPick<vscode.QuickPickItem>();
  quickPick.title = setting === 'model' ? 'Speculate: Select Model' : 'Speculate: Select Fast Model (suggestions and speculation)';
  quickPick.placeholder = 'Loading models from the endpoint… (or type a model name and press Enter)';
  quickPick.busy = true;
  const fixed: vscode.QuickPickItem[] =
    setting === 'fastModel' ? [{ label: '$(circle-slash) Same as the main model', description: 'shares the main model\'s prefix cache', detail: '' }] : [];
  quickPick.items = fixed;
  quickPick.show();
  const abort = new AbortController();
  quickPick.onDidHide(() => abort.abort());
  services.controller.llmClient.listModels(abort.signal).then(
    (models) => {
      quickPick.items = [...fixed, ...models.sort().map((id) => ({ label: id }))];
      quickPick.placeholder = models.length > 0 ? 'Pick a model, or type a name and press Enter' : 'The endpoint listed no models: type a model name and press Enter';
      quickPick.busy = false;
    },
    (error: unknown) => {
      quickPick.placeholder = `Could not list models (${error instanceof Error ? error.message : String(error)}). Type a model name and press Enter.`;
      quickPick.busy = false;
    },
  );
  const chosen = await new Promise<string | undefined>((resolve) => {
    quickPick.onDidAccept(() => {
      const item = quickPick.selectedItems[0];
      if (item) resolve(item === fixed[0] ? '' : item.label);
      else resolve(quickPick.value.trim() || undefined);
      quickPick.hide();
    });
    quickPick.onDidHide(() => resolve(undefined));
  });
  quickPick.dispose();
  if (chosen === undefined) return;
  await updateSetting(setting, chosen);
  void vscode.window.showInformationMessage(
    setting === 'model' ? `Speculate: chat model set to ${chosen}.` : chosen ? `Speculate: fast model set to ${chosen}.` : 'Speculate: suggestions and speculation use the main model.',
  );
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
  register('speculate.selectModel', () => pickModel(services, 'model'));
  register('speculate.selectFastModel', () => pickModel(services, 'fastModel'));
  register('speculate.newChat', () => services.controller.newChat());
  register('speculate.abortSpeculation', () => services.controller.abort());
  register('speculate.acceptSpeculation', () => services.controller.accept('tab'));
  register('speculate.discardSpeculation', () => services.controller.discard());
  register('speculate.previewChanges', () => services.controller.preview());
  register('speculate.focusChat', () => services.chatView.reveal(true));
  register('speculate.showStatistics', async () => {
    const document = await vscode.workspace.openTextDocument({ content: services.controller.stats.format(), language: 'plaintext' });
    await vscode.window.showTextDocument(document, { preview: true });
  });
}
