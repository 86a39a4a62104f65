// Which value of a `speculate.*` setting counts. A workspace is untrusted input: the settings that
// decide what runs without asking or where code and keys go are the user's alone (scope
// `application`); the rest a workspace may set once trusted. Pure (no vscode import): settings.ts
// feeds it VS Code's inspect() results, the tests feed it hostile ones.

/**
 * The user-only settings (scope `application` in package.json) and why a workspace may not set
 * each. VS Code drops a workspace's flat `"speculate.baseUrl"` for these, but not the nested form
 * `"speculate": {"baseUrl": …}` (it reaches get() and inspect().workspaceValue), nor a nested value in
 * a remote machine's settings, which a repository's dev container config writes: hence userValue().
 */
export const USER_ONLY_SETTINGS = {
  'speculate.baseUrl': 'it decides where your code and your API key are sent',
  'speculate.approvalMode': 'it decides which tool calls run without asking you',
  'speculate.webSearchUrl': 'it decides where your search queries are sent',
  'speculate.protectedPaths': 'it decides which files an edit may change without asking you',
  'speculate.checkpoints.maxAgeDays': 'it decides when your undo history is deleted',
  'speculate.checkpoints.maxSizeMB': 'it decides when your undo history is deleted',
  'speculate.sandbox.enabled': 'it decides whether commands that run without asking are contained',
  'speculate.mcpServers': 'it decides which programs run on your machine as MCP servers',
} as const satisfies Record<string, string>;

export type UserOnlySetting = keyof typeof USER_ONLY_SETTINGS;

/**
 * Settings a trusted workspace may lower but never raise: a workspace can switch speculation off
 * or shorten it, never switch on what the user switched off (speculation runs tools unattended).
 */
export const NARROW_ONLY_SETTINGS = [
  'speculate.speculation.enabled',
  'speculate.speculation.maxTurns',
  'speculate.speculation.maxMessages',
  'speculate.sandbox.timeoutSeconds',
  'speculate.sandbox.maxWriteMegabytes',
] as const;

/** What VS Code's `WorkspaceConfiguration.inspect()` returns, as far as these rules read it. */
export interface Inspection {
  defaultValue?: unknown;
  /** User settings; in a remote window the local user settings merged with the remote machine's. */
  globalValue?: unknown;
  /** Not in the typed API, but present in remote windows: the two halves of globalValue. */
  globalLocalValue?: unknown;
  globalRemoteValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export function isUserOnlySetting(key: string): key is UserOnlySetting {
  return Object.hasOwn(USER_ONLY_SETTINGS, key);
}

/**
 * The user's own value (else the default): never a workspace's, and in a remote window never the
 * remote machine's either (VS Code ignores application settings there except in nested form).
 */
export function userValue(inspection: Inspection | undefined): unknown {
  if (!inspection) return undefined;
  const user = inspection.globalRemoteValue !== undefined ? inspection.globalLocalValue : inspection.globalValue;
  return user ?? inspection.defaultValue;
}

/** A value the workspace sets, in either form, as VS Code reports it. */
function workspaceValue(inspection: Inspection | undefined): unknown {
  return inspection?.workspaceFolderValue ?? inspection?.workspaceValue;
}

/**
 * A setting a workspace may set once trusted: VS Code's resolved value in a trusted workspace,
 * the user's own in an untrusted one (VS Code drops the flat form there, but not the nested one).
 */
export function restrictedValue(inspection: Inspection | undefined, resolved: unknown, trusted: boolean): unknown {
  return trusted ? resolved : userValue(inspection);
}

/** A narrow-only setting: the stricter of the user's value and a trusted workspace's. */
export function narrowedValue<T>(inspection: Inspection | undefined, trusted: boolean, read: (value: unknown) => T, stricter: (a: T, b: T) => T): T {
  const user = read(userValue(inspection));
  const fromWorkspace = workspaceValue(inspection);
  if (!trusted || fromWorkspace === undefined) return user;
  return stricter(user, read(fromWorkspace));
}

/** User-only settings that the workspace tries to set in a form inspect() still shows (the nested one). */
export function userOnlyKeysInspectSees(inspect: (key: UserOnlySetting) => Inspection | undefined): UserOnlySetting[] {
  return (Object.keys(USER_ONLY_SETTINGS) as UserOnlySetting[]).filter((key) => workspaceValue(inspect(key)) !== undefined);
}

/**
 * The `speculate.*` keys a parsed settings file sets, in any form VS Code reads: flat keys, nested
 * objects (`"speculate": {"speculation": {"enabled": …}}`) and language blocks (`"[python]": {…}`).
 */
export function settingKeysIn(settings: unknown): string[] {
  const keys = new Set<string>();
  const walk = (value: unknown, prefix: string, depth: number): void => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || depth > 6) return;
    for (const [name, child] of Object.entries(value)) {
      if (prefix === '' && /^\[.*\]$/.test(name)) {
        walk(child, '', depth + 1);
        continue;
      }
      const key = prefix ? `${prefix}.${name}` : name;
      if (key === 'speculate' || key.startsWith('speculate.')) {
        keys.add(key);
        walk(child, key, depth + 1);
      }
    }
  };
  walk(settings, '', 0);
  return [...keys];
}

/** The user-only settings among a settings file's keys. */
export function userOnlyKeysIn(settings: unknown): UserOnlySetting[] {
  return settingKeysIn(settings).filter(isUserOnlySetting);
}

/** What the chat and the log say, once, about a workspace's user-only settings. */
export function ignoredWorkspaceSettingsText(keys: readonly UserOnlySetting[]): string {
  if (keys.length === 1) {
    const key = keys[0];
    return `This workspace's setting ${key} is ignored: ${USER_ONLY_SETTINGS[key]}, so only your user settings can set it. If you meant it, set it in your user settings.`;
  }
  return (
    `This workspace's settings ${keys.join(', ')} are ignored: they decide where your code, your API key and your searches are sent ` +
    'and which tool calls run without asking you, so only your user settings can set them. If you meant them, set them in your user settings.'
  );
}

/** Why the agent reads only, in a folder the user has not trusted. */
export const UNTRUSTED_WORKSPACE_TEXT =
  'Restricted Mode: this folder is not trusted, so Speculate only reads (plan mode). It edits nothing, runs no commands, ' +
  "runs nothing ahead of you and ignores this workspace's Speculate settings until you trust the folder.";

/** Said once the user trusts the folder. */
export function trustedNowText(approvalMode: string, speculationEnabled: boolean): string {
  return `This folder is trusted now: approval mode ${approvalMode}, speculation ${speculationEnabled ? 'on' : 'off'}.`;
}
