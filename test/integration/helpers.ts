// What the integration suites share: waiting for a protocol message, the user's settings (written
// where a user writes them) and a workspace's settings file (written as a hostile repository would).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HostToWebview } from '../../src/shared/protocol';
import { workspaceRoot } from './api';

/** Polls `messages` until `find` returns something. */
export async function until<T>(messages: HostToWebview[], find: (m: HostToWebview) => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  return poll(() => {
    for (const message of messages) {
      const found = find(message);
      if (found !== undefined) return found;
    }
    return undefined;
  }, () => `${what}; got: ${messages.map((m) => m.type).join(', ')}`, timeoutMs);
}

/** Polls `check` every 50 ms until it returns something other than undefined or false. */
export async function poll<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string | (() => string),
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const config = () => vscode.workspace.getConfiguration('speculate');

/** Sets `speculate.*` user settings (the user's own settings.json); `undefined` removes one. */
export async function setUserSettings(values: Record<string, unknown>): Promise<void> {
  for (const [key, value] of Object.entries(values)) await config().update(key, value, vscode.ConfigurationTarget.Global);
}

/** Removes the given `speculate.*` keys from the user settings. */
export async function clearUserSettings(keys: string[]): Promise<void> {
  await setUserSettings(Object.fromEntries(keys.map((key) => [key, undefined])));
}

const settingsFile = () => join(workspaceRoot().fsPath, '.vscode', 'settings.json');
/** The file as the fixture had it, kept by the first write (null: there was none). */
let originalSettings: string | null | undefined;

/** Writes the workspace's .vscode/settings.json directly, as a cloned repository brings it. */
export function writeWorkspaceSettingsFile(text: string): void {
  if (originalSettings === undefined) originalSettings = existsSync(settingsFile()) ? readFileSync(settingsFile(), 'utf8') : null;
  mkdirSync(join(workspaceRoot().fsPath, '.vscode'), { recursive: true });
  writeFileSync(settingsFile(), text);
}

/** Puts the fixture's settings file back. */
export function restoreWorkspaceSettingsFile(): void {
  if (originalSettings === undefined) return;
  if (originalSettings === null) rmSync(settingsFile(), { force: true });
  else writeFileSync(settingsFile(), originalSettings);
  originalSettings = undefined;
}

/** The last user message of a recorded chat request (what the request was about). */
export function lastUserText(body: { messages?: Array<Record<string, unknown>> } | null): string {
  const users = (body?.messages ?? []).filter((m) => m.role === 'user');
  const content = users[users.length - 1]?.content;
  return typeof content === 'string' ? content : '';
}
