// Palette commands (category "Speculate"). Each one either works or says clearly what it needs.
import * as vscode from 'vscode';
import { keyChoices, originOf, type ApiKeyStore } from './setup/apiKeys';
import type { ChatViewProvider } from './chat/chatView';
import type { SpeculateController } from './controller';
import { setUpEndpoint } from './setup/providerSetup';
import { updateSetting } from './setup/settings';
import type { TabFocusModeMirror } from './chat/tabFocusMode';

export interface CommandServices {
  apiKeys: ApiKeyStore;
  chatView: ChatViewProvider;
  controller: SpeculateController;
  tabFocus: TabFocusModeMirror;
}

async function pickModel(services: CommandServices, setting: 'model' | 'fastModel'): Promise<void> {
  const endpoint = services.controller.endpoint();
  if (!endpoint) {
    const choice = await vscode.window.showWarningMessage('Speculate: set up your OpenAI-compatible endpoint first.', 'Set Up Endpoint', 'Open Settings');
    if (choice === 'Set Up Endpoint') await vscode.commands.executeCommand('speculate.setUpEndpoint');
    else if (choice) await vscode.commands.executeCommand('workbench.action.openGlobalSettings', { query: 'speculate.baseUrl' });
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
  await updateSetting(setting, chosen, services.controller.workspaceTrusted);
  void vscode.window.showInformationMessage(
    setting === 'model' ? `Speculate: chat model set to ${chosen}.` : chosen ? `Speculate: fast model set to ${chosen}.` : 'Speculate: suggestions and speculation use the main model.',
  );
}

interface OriginItem extends vscode.QuickPickItem {
  origin?: string;
}

/** The origin of the user's endpoint (not the demo model's), if it is a valid URL. */
function currentOrigin(services: CommandServices): string | undefined {
  const endpoint = services.controller.endpoint();
  return endpoint && !endpoint.demo ? endpoint.origin : undefined;
}

/** Asks which endpoint a key is for: the current one, one that has a key, or another URL. */
async function pickKeyOrigin(services: CommandServices): Promise<string | undefined> {
  const choices = keyChoices(currentOrigin(services), await services.apiKeys.origins());
  if (choices.length > 0) {
    const items: OriginItem[] = [
      ...choices.map((choice) => ({
        label: choice.origin,
        description: [choice.current ? 'speculate.baseUrl' : '', choice.hasKey ? 'has a key' : ''].filter(Boolean).join(' · '),
        origin: choice.origin,
      })),
      { label: '$(add) Another endpoint…', description: 'type its URL' },
    ];
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Speculate: Set API Key — which endpoint is the key for?',
      placeHolder: 'The key is sent only to the endpoint you pick (its scheme, host and port)',
      ignoreFocusOut: true,
    });
    if (!picked) return undefined;
    if (picked.origin) return picked.origin;
  }
  const url = await vscode.window.showInputBox({
    title: 'Speculate: Set API Key — endpoint URL',
    prompt: 'The OpenAI-compatible endpoint the key is for, e.g. https://api.openai.com/v1. The key is sent only to its scheme, host and port.',
    ignoreFocusOut: true,
    validateInput: (value) => (originOf(value) ? undefined : 'Enter an http(s) URL, e.g. https://api.openai.com/v1'),
  });
  return url === undefined ? undefined : originOf(url);
}

async function setApiKey(services: CommandServices): Promise<void> {
  const origin = await pickKeyOrigin(services);
  if (!origin) return;
  const value = await vscode.window.showInputBox({
    title: `Speculate: API key for ${origin}`,
    prompt: `Stored in VS Code's secret storage on this machine and sent only to ${origin}. Leave empty and press Enter to remove the stored key.`,
    password: true,
    ignoreFocusOut: true,
  });
  if (value === undefined) return;
  if (value.trim() === '') {
    await services.apiKeys.clear(origin);
    void vscode.window.showInformationMessage(`Speculate: API key for ${origin} removed.`);
    return;
  }
  await services.apiKeys.set(origin, value.trim());
  const current = currentOrigin(services);
  const note = current && current !== origin ? ` (speculate.baseUrl points at ${current}, so it is not used until you switch)` : '';
  void vscode.window.showInformationMessage(`Speculate: API key saved for ${origin}; it is sent only there${note}.`);
}

const LEGACY_ITEM = 'key from an earlier version';

async function clearApiKey(services: CommandServices): Promise<void> {
  const current = currentOrigin(services);
  const items: OriginItem[] = (await services.apiKeys.origins()).map((origin) => ({
    label: origin,
    description: origin === current ? 'speculate.baseUrl' : '',
    origin,
  }));
  if (await services.apiKeys.hasLegacyKey()) items.push({ label: LEGACY_ITEM, description: 'not yet bound to an endpoint' });
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Speculate: no API keys are stored.');
    return;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Speculate: Clear API Key',
    placeHolder: 'Pick the endpoints whose keys to remove',
    canPickMany: true,
    ignoreFocusOut: true,
  });
  if (!picked || picked.length === 0) return;
  for (const item of picked) {
    if (item.origin) await services.apiKeys.clear(item.origin);
    else await services.apiKeys.clearLegacyKey();
  }
  void vscode.window.showInformationMessage(`Speculate: removed the API key for ${picked.map((item) => item.label).join(', ')}.`);
}

export function registerCommands(context: vscode.ExtensionContext, services: CommandServices): void {
  const register = (id: string, handler: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));

  register('speculate.setUpEndpoint', () =>
    setUpEndpoint({
      apiKeys: services.apiKeys,
      currentBaseUrl: () => services.controller.userBaseUrl,
      workspaceTrusted: () => services.controller.workspaceTrusted,
      log: (line) => services.controller.logLine(line),
      revealChat: () => services.chatView.reveal(true),
    }),
  );
  register('speculate.setApiKey', () => setApiKey(services));
  register('speculate.clearApiKey', () => clearApiKey(services));
  register('speculate.selectModel', () => pickModel(services, 'model'));
  register('speculate.selectFastModel', () => pickModel(services, 'fastModel'));
  register('speculate.newChat', () => services.controller.newChat());
  register('speculate.showHistory', () => services.controller.showHistory());
  register('speculate.openMemory', () => services.controller.openMemory());
  register('speculate.abortSpeculation', () => services.controller.abort());
  register('speculate.acceptSpeculation', () => services.controller.accept('tab'));
  register('speculate.discardSpeculation', () => services.controller.discard());
  register('speculate.previewChanges', () => services.controller.preview());
  register('speculate.focusChat', () => services.chatView.reveal(true));
  register('speculate.toggleTabFocusMode', () => services.tabFocus.toggle());
  register('speculate.showStatistics', async () => {
    const document = await vscode.workspace.openTextDocument({ content: services.controller.statisticsText(), language: 'plaintext' });
    await vscode.window.showTextDocument(document, { preview: true });
  });
}
