// Which workspace folder the chat works on in a window with several: the one the user picked in the
// chat header, else the folder of the active editor, else the first. Only folders on disk count
// (the tools work on files). Fires when the answer may have changed.
import * as vscode from 'vscode';
import type { FolderView } from '../../shared/protocol';

export type FolderChange = 'picked' | 'editor' | 'folders';

export class ChatFolder implements vscode.Disposable {
  private picked: vscode.Uri | undefined;
  private readonly emitter = new vscode.EventEmitter<FolderChange>();
  readonly onDidChange = this.emitter.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.window.onDidChangeActiveTextEditor(() => this.emitter.fire('editor')),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.emitter.fire('folders')),
    ];
  }

  /** The folders the chat can work on. */
  static folders(): readonly vscode.WorkspaceFolder[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === 'file');
  }

  get current(): vscode.WorkspaceFolder | undefined {
    const folders = ChatFolder.folders();
    const picked = this.picked && folders.find((folder) => folder.uri.toString() === this.picked?.toString());
    if (picked) return picked;
    const active = vscode.window.activeTextEditor?.document.uri;
    const ofEditor = active ? vscode.workspace.getWorkspaceFolder(active) : undefined;
    if (ofEditor && ofEditor.uri.scheme === 'file') return ofEditor;
    return folders[0];
  }

  /** The user chose `folder` in the chat header: it holds until they choose another. */
  pick(folder: vscode.WorkspaceFolder): void {
    this.picked = folder.uri;
    this.emitter.fire('picked');
  }

  /**
   * Asks which folder to work on. `startsNewChat`: the chat has begun, so another folder means a
   * new chat (the paths in this one are its folder's).
   */
  async ask(current: vscode.WorkspaceFolder | undefined, startsNewChat: boolean): Promise<vscode.WorkspaceFolder | undefined> {
    const items = ChatFolder.folders().map((folder) => ({
      label: folder.name,
      description: folder.uri.fsPath,
      detail: folder.uri.toString() === current?.uri.toString() ? 'the chat works here now' : startsNewChat ? 'starts a new chat in this folder' : undefined,
      folder,
    }));
    const chosen = await vscode.window.showQuickPick(items, { title: 'Speculate: which folder should the chat work on?', placeHolder: 'Its tools read and edit that folder; paths into the other open folders work too' });
    return chosen?.folder;
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.emitter.dispose();
  }
}

/** The header's view of a folder. */
export function folderView(folder: vscode.WorkspaceFolder | undefined): FolderView | undefined {
  if (!folder) return undefined;
  return { name: folder.name, path: folder.uri.fsPath, others: Math.max(0, ChatFolder.folders().length - 1) };
}
