// The user's memory file (what save_memory appends to): it lives in the extension's global storage,
// the user's own, never in a workspace a repository could write.
import * as vscode from 'vscode';
import { MEMORY_FILE_NAME } from '../../core/workspaceServices';

/** The folder of the memory file, when the window's global storage is on disk. */
export function memoryDir(context: vscode.ExtensionContext): string | undefined {
  const storage = context.globalStorageUri;
  return storage.scheme === 'file' ? storage.fsPath : undefined;
}

/** `Speculate: Open Memory File`: the file in an editor, created with a one-line header if missing. */
export async function openMemoryFile(context: vscode.ExtensionContext): Promise<void> {
  const folder = memoryDir(context);
  if (!folder) {
    void vscode.window.showWarningMessage('Speculate: this window has no global storage on disk, so there is no memory file.');
    return;
  }
  const uri = vscode.Uri.joinPath(vscode.Uri.file(folder), MEMORY_FILE_NAME);
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    await vscode.workspace.fs.createDirectory(vscode.Uri.file(folder));
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode('# Speculate memory: one fact per line. Later chats read it as part of their instructions.\n'));
  }
  await vscode.window.showTextDocument(uri, { preview: false });
}
