// "Speculate: Set Up Endpoint": pick a provider preset, confirm its base URL, give the key for that
// endpoint, check that the endpoint answers (it lists its models), then pick the chat and fast
// models. Nothing is saved until the check passed or the user chose to save anyway.
import * as vscode from 'vscode';
import { OpenAiCompatibleClient } from '../../core/llm/openAiCompatibleClient';
import { originOf, type ApiKeyStore } from './apiKeys';
import { keyBoundFetch } from './keyBoundFetch';
import { baseUrlProblem, normalizeBaseUrl, PROVIDER_PRESETS, presetForUrl, presetUrl, type ProviderPreset } from './providerPresets';
import { updateSetting } from './settings';

export interface ProviderSetupServices {
  apiKeys: ApiKeyStore;
  /** The user's base URL now (for "current" marks). */
  currentBaseUrl(): string;
  workspaceTrusted(): boolean;
  log(line: string): void;
  /** Opens the chat with its input focused once the endpoint is set up. */
  revealChat(): Promise<void>;
}

const TITLE = 'Speculate: Set Up Endpoint';

interface PresetItem extends vscode.QuickPickItem {
  preset: ProviderPreset;
}

async function pickPreset(current: string): Promise<ProviderPreset | undefined> {
  const currentPreset = presetForUrl(current);
  const items: PresetItem[] = PROVIDER_PRESETS.map((preset) => ({
    label: preset.label,
    description: [preset.urlPart ? preset.baseUrl.replace('{resource}', '<resource>') : preset.baseUrl, preset === currentPreset ? '(current)' : ''].filter(Boolean).join(' '),
    detail: preset.detail,
    preset,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: `${TITLE} (1/4): which provider?`,
    placeHolder: 'Pick where your model runs; the next steps fill in its URL and check that it answers',
    matchOnDescription: true,
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  return picked?.preset;
}

async function askBaseUrl(preset: ProviderPreset, current: string): Promise<string | undefined> {
  if (preset.urlPart) {
    const part = preset.urlPart;
    const name = await vscode.window.showInputBox({
      title: `${TITLE} (2/4): ${preset.label} resource`,
      prompt: part.prompt,
      placeHolder: part.placeholder,
      ignoreFocusOut: true,
      validateInput: (value) => (part.pattern.test(value.trim()) ? undefined : part.invalid),
    });
    return name === undefined ? undefined : presetUrl(preset, name);
  }
  const url = await vscode.window.showInputBox({
    title: `${TITLE} (2/4): ${preset.label} base URL`,
    prompt: preset.baseUrl
      ? 'The API root, usually ending in /v1. Press Enter to use it as it is, or change the host or port.'
      : 'The API root of your OpenAI-compatible server, usually ending in /v1.',
    value: preset.baseUrl || (presetForUrl(current) ? '' : current),
    placeHolder: 'http://localhost:8000/v1',
    ignoreFocusOut: true,
    validateInput: baseUrlProblem,
  });
  return url === undefined ? undefined : normalizeBaseUrl(url);
}

/** The key to use: a new one typed, the stored one kept (undefined = none), or cancel (null). */
async function askKey(preset: ProviderPreset, origin: string, apiKeys: ApiKeyStore): Promise<{ key: string | undefined; isNew: boolean } | null> {
  if (preset.key === 'none') return { key: undefined, isNew: false };
  const stored = await apiKeys.keyFor(origin);
  const keep = stored ? ' Leave it empty to keep the key stored for it.' : preset.key === 'optional' ? ' Leave it empty if the server needs no key.' : '';
  const value = await vscode.window.showInputBox({
    title: `${TITLE} (3/4): API key for ${origin}`,
    prompt: `Stored in VS Code's secret storage on this machine and sent only to ${origin}.${keep}${preset.keyHint ? ` ${preset.keyHint}` : ''}`,
    password: true,
    ignoreFocusOut: true,
    validateInput: (text) => (text.trim() === '' && !stored && preset.key === 'required' ? `${preset.label} needs an API key.` : undefined),
  });
  if (value === undefined) return null;
  if (value.trim() === '') return { key: stored, isNew: false };
  return { key: value.trim(), isNew: true };
}

/** Lists the endpoint's models with this URL and key, before anything is saved. */
async function checkEndpoint(baseUrl: string, key: string | undefined): Promise<{ ok: true; models: string[] } | { ok: false; message: string }> {
  const origin = originOf(baseUrl);
  const client = new OpenAiCompatibleClient({ baseURL: baseUrl, apiKey: key, fetch: keyBoundFetch(key ? origin : undefined) });
  try {
    const models = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Speculate: checking ${baseUrl}…` },
      () => client.listModels(),
    );
    return { ok: true, models };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

type AfterFailure = 'retry' | 'change' | 'save' | undefined;

async function askAfterFailure(preset: ProviderPreset, message: string): Promise<AfterFailure> {
  const items: (vscode.QuickPickItem & { choice: AfterFailure })[] = [
    { label: '$(refresh) Try again', detail: preset.notRunningHint, choice: 'retry' },
    { label: '$(edit) Change the URL or key', choice: 'change' },
    { label: '$(check) Save it anyway', detail: 'Keep these settings; the chat will say what is wrong when you send a message.', choice: 'save' },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: `${TITLE}: the endpoint did not answer as expected`,
    placeHolder: message,
    ignoreFocusOut: true,
  });
  return picked?.choice;
}

/** Picks a model from the list (or a typed name); '' = the main model (fast model only). */
async function pickModel(title: string, models: string[], current: string, sameAsMain: boolean): Promise<string | undefined> {
  const quickPick = vscode.window.createQuickPick<vscode.QuickPickItem>();
  const same: vscode.QuickPickItem = { label: '$(circle-slash) Same as the chat model', description: 'shares its prefix cache, so forks cost least' };
  const modelItems = [...models].sort().map((id) => ({ label: id, ...(id === current ? { description: '(current)' } : {}) }));
  quickPick.items = sameAsMain ? [same, ...modelItems] : modelItems;
  quickPick.title = title;
  quickPick.placeholder = models.length > 0 ? 'Pick a model, or type a name and press Enter' : 'The endpoint listed no models: type a model name and press Enter';
  quickPick.ignoreFocusOut = true;
  const preselected = quickPick.items.find((item) => item.label === current);
  if (preselected) quickPick.activeItems = [preselected];
  quickPick.show();
  const chosen = await new Promise<string | undefined>((resolve) => {
    quickPick.onDidAccept(() => {
      const item = quickPick.selectedItems[0] ?? quickPick.activeItems[0];
      const typed = quickPick.value.trim();
      // A typed name that matches no row is taken as it is (a deployment name, an unlisted model).
      if (typed && !quickPick.items.some((i) => i.label === typed) && (!item || !item.label.includes(typed))) resolve(typed);
      else if (item) resolve(item === same ? '' : item.label);
      else resolve(typed || undefined);
      quickPick.hide();
    });
    quickPick.onDidHide(() => resolve(undefined));
  });
  quickPick.dispose();
  return chosen;
}

/** The whole flow; resolves true when an endpoint and model were saved. */
export async function setUpEndpoint(services: ProviderSetupServices): Promise<boolean> {
  const preset = await pickPreset(services.currentBaseUrl());
  if (!preset) return false;
  for (;;) {
    const baseUrl = await askBaseUrl(preset, services.currentBaseUrl());
    if (!baseUrl) return false;
    const origin = originOf(baseUrl);
    if (!origin) return false;
    const key = await askKey(preset, origin, services.apiKeys);
    if (key === null) return false;

    let check = await checkEndpoint(baseUrl, key.key);
    let change = false;
    while (!check.ok) {
      services.log(`Set Up Endpoint: ${baseUrl} did not list its models: ${check.message}`);
      const next = await askAfterFailure(preset, check.message);
      if (next === undefined) return false;
      if (next === 'change') change = true;
      if (next !== 'retry') break;
      check = await checkEndpoint(baseUrl, key.key);
    }
    if (change) continue;
    const models = check.ok ? check.models : [];

    // Key first: the client re-reads settings and keys on every request, so the chat never sees
    // the new URL without its key.
    if (key.isNew && key.key) await services.apiKeys.set(origin, key.key);
    const config = vscode.workspace.getConfiguration('speculate');
    await config.update('baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
    for (const [setting, value] of Object.entries(preset.settings ?? {})) await config.update(setting, value, vscode.ConfigurationTarget.Global);
    services.log(`Set Up Endpoint: ${preset.label} at ${baseUrl}${check.ok ? `, ${models.length} models listed` : ' (saved without a successful check)'}.`);

    const currentModel = config.get<string>('model', '');
    const model = await pickModel(`${TITLE} (4/4): chat model`, models, currentModel, false);
    if (model) await updateSetting('model', model, services.workspaceTrusted());
    if (model) {
      const fast = await pickModel(`${TITLE}: fast model for suggestions and running ahead`, models, config.get<string>('fastModel', ''), true);
      if (fast !== undefined) await updateSetting('fastModel', fast, services.workspaceTrusted());
    }
    const modelNote = model ? ` with model ${model}` : '; pick a model with "Speculate: Select Model"';
    void vscode.window.showInformationMessage(`Speculate: using ${preset.label} at ${baseUrl}${modelNote}.`);
    await services.revealChat();
    return model !== undefined && model !== '';
  }
}
