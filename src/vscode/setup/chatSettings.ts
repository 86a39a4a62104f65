// Typed reading of the chat's own settings (history size, the price table). Kept apart from
// settings.ts so the endpoint and trust settings and these can change without touching each other.
import * as vscode from 'vscode';
import { parsePriceTable, type PriceTable } from '../../core/usage/prices';
import { restrictedValue, userValue } from './settingPolicy';

export interface ChatSettingsValues {
  /** speculate.history.maxSizeMB in bytes. */
  historyMaxBytes: number;
  /** speculate.usage.prices (with speculate.usage.currency); undefined = tokens only. */
  prices: PriceTable | undefined;
}

const MB = 1024 * 1024;
const DEFAULT_MB = 50;

export function readChatSettings(trusted: boolean): ChatSettingsValues {
  const config = vscode.workspace.getConfiguration('speculate');
  // The user's own value only: a repository must not shrink the bound to delete the user's chats.
  const megabytes = Number(userValue(config.inspect('history.maxSizeMB')) ?? DEFAULT_MB);
  const restricted = (key: string): unknown => restrictedValue(config.inspect(key), config.get(key), trusted);
  return {
    historyMaxBytes: Math.round((Number.isFinite(megabytes) ? Math.min(2000, Math.max(1, megabytes)) : DEFAULT_MB) * MB),
    prices: parsePriceTable(restricted('usage.prices'), restricted('usage.currency')),
  };
}
