// Notices the user-only settings a workspace tries to set, so the chat and the log can say once that
// they are ignored: read from the workspace's settings files as written (VS Code hides the flat
// form from extensions) and from inspect() (which still shows the nested form).
import * as vscode from 'vscode';
import { parseJsonc } from './jsonc';
import { USER_ONLY_SETTINGS, userOnlyKeysIn, userOnlyKeysInspectSees, type UserOnlySetting } from './settingPolicy';

/** The settings files a workspace brings: each folder's .vscode/settings.json and a .code-workspace. */
function settingsFiles(): { uri: vscode.Uri; inWorkspaceFile: boolean }[] {
  const files = (vscode.workspace.workspaceFolders ?? []).map((folder) => ({
    uri: vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json'),
    inWorkspaceFile: false,
  }));
  const workspaceFile = vscode.workspace.workspaceFile;
  if (workspaceFile && workspaceFile.scheme !== 'untitled') files.push({ uri: workspaceFile, inWorkspaceFile: true });
  return files;
}

async function keysInFile(file: { uri: vscode.Uri; inWorkspaceFile: boolean }): Promise<UserOnlySetting[]> {
  let text: string;
  try {
    text = new TextDecoder().decode(await vscode.workspace.fs.readFile(file.uri));
  } catch {
    return []; // no such file
  }
  const parsed = parseJsonc(text);
  if (!parsed.ok) return [];
  const value = parsed.value;
  const settings = file.inWorkspaceFile && typeof value === 'object' && value !== null ? (value as { settings?: unknown }).settings : value;
  return userOnlyKeysIn(settings);
}

/** Every user-only setting the open workspace sets, in the order package.json lists them. */
export async function userOnlySettingsInWorkspace(): Promise<UserOnlySetting[]> {
  const config = vscode.workspace.getConfiguration('speculate');
  const found = new Set<UserOnlySetting>(userOnlyKeysInspectSees((key) => config.inspect(key.slice('speculate.'.length))));
  for (const keys of await Promise.all(settingsFiles().map(keysInFile))) for (const key of keys) found.add(key);
  return (Object.keys(USER_ONLY_SETTINGS) as UserOnlySetting[]).filter((key) => found.has(key));
}

/**
 * Reports each user-only setting the workspace sets once per window: at start and whenever a
 * settings file or the configuration changes.
 */
export class IgnoredSettingsWatcher implements vscode.Disposable {
  private readonly reported = new Set<UserOnlySetting>();
  private readonly disposables: vscode.Disposable[] = [];
  private checking: Promise<void> = Promise.resolve();

  constructor(private readonly report: (keys: UserOnlySetting[]) => void) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/{.vscode/settings.json,*.code-workspace}');
    const recheck = () => void this.check();
    this.disposables.push(
      watcher,
      watcher.onDidCreate(recheck),
      watcher.onDidChange(recheck),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('speculate')) recheck();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(recheck),
    );
    recheck();
  }

  /** Checks again; resolves once the check (and any report) is done. */
  check(): Promise<void> {
    this.checking = this.checking.then(async () => {
      const fresh = (await userOnlySettingsInWorkspace()).filter((key) => !this.reported.has(key));
      if (fresh.length === 0) return;
      for (const key of fresh) this.reported.add(key);
      this.report(fresh);
    }).catch(() => undefined);
    return this.checking;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
