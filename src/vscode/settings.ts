// Typed reading of the `speculate.*` settings, and the API key in SecretStorage (never in settings).
import * as vscode from 'vscode';
import type { ApprovalMode } from '../core/chat/approvals';
import type { PrefixCaching } from '../core/llm/requestBody';

export interface SpeculateSettings {
  baseUrl: string;
  model: string;
  fastModel: string;
  approvalMode: ApprovalMode;
  suggestionsEnabled: boolean;
  speculationEnabled: boolean;
  maxTurns: number;
  maxMessages: number;
  enterAcceptsSuggestion: boolean;
  prefixCaching: PrefixCaching;
  requestTimeoutMs: number;
  webSearchUrl: string;
}

const APPROVAL_MODES: readonly ApprovalMode[] = ['plan', 'default', 'auto-edit', 'yolo'];
const SECRET_KEY = 'speculate.apiKey';

function clamp(value: number, min: number, max: number): number {
  return Number.isFinite(value) ? Math.min(max, Math.max(min, Math.round(value))) : max;
}

export function readSettings(): SpeculateSettings {
  const config = vscode.workspace.getConfiguration('speculate');
  const approval = config.get<string>('approvalMode', 'default');
  return {
    baseUrl: config.get<string>('baseUrl', '').trim(),
    model: config.get<string>('model', '').trim(),
    fastModel: config.get<string>('fastModel', '').trim(),
    approvalMode: (APPROVAL_MODES as readonly string[]).includes(approval) ? (approval as ApprovalMode) : 'default',
    suggestionsEnabled: config.get<boolean>('suggestions.enabled', true),
    speculationEnabled: config.get<boolean>('speculation.enabled', true),
    maxTurns: clamp(config.get<number>('speculation.maxTurns', 20), 1, 20),
    maxMessages: clamp(config.get<number>('speculation.maxMessages', 100), 2, 100),
    enterAcceptsSuggestion: config.get<boolean>('enterAcceptsSuggestion', false),
    prefixCaching: config.get<string>('prefixCaching', 'none') === 'dashscope' ? 'dashscope' : 'none',
    requestTimeoutMs: clamp(config.get<number>('requestTimeoutSeconds', 60), 5, 3600) * 1000,
    webSearchUrl: config.get<string>('webSearchUrl', '').trim(),
  };
}

export async function updateSetting(key: 'model' | 'fastModel', value: string): Promise<void> {
  const config = vscode.workspace.getConfiguration('speculate');
  const inspected = config.inspect(key);
  // Write where the user already set it, so a workspace value is not silently shadowed.
  const target = inspected?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update(key, value, target);
}

export class ApiKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}
  get(): Thenable<string | undefined> {
    return this.secrets.get(SECRET_KEY);
  }
  set(value: string): Thenable<void> {
    return this.secrets.store(SECRET_KEY, value);
  }
  delete(): Thenable<void> {
    return this.secrets.delete(SECRET_KEY);
  }
  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((event) => {
      if (event.key === SECRET_KEY) listener();
    });
  }
}
