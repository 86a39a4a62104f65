// Typed reading of the chat's own settings (history size, the price table). Kept apart from
// settings.ts so the endpoint and trust settings and these can change without touching each other.
import * as vscode from 'vscode';
import { parsePriceTable, type PriceTable } from '../core/usage/prices';

export interface ChatSettingsValues {
  /** speculate.history.maxSizeMB in bytes. */
  historyMaxBytes: number;
  /** speculate.usage.prices (with speculate.usage.currency); undefined = tokens only. */
  prices: PriceTable | undefined;
}

const MB = 1024 * 1024;

export function readChatSettings(): ChatSettingsValues {
  const config = vscode.workspace.getConfiguration('speculate');
  const megabytes = config.get<number>('history.maxSizeMB', 50);
  return {
    historyMaxBytes: Math.round((Number.isFinite(megabytes) ? Math.min(2000, Math.max(1, megabytes)) : 50) * MB),
    prices: parsePriceTable(config.get<unknown>('usage.prices'), config.get<unknown>('usage.currency')),
  };
}
