// The chat store's folder through vscode.workspace.fs, for an extension storage that is not a local
// folder (a virtual or remote scheme); a local one uses NodeChatStorage from core instead.
import * as vscode from 'vscode';
import type { ChatStorage } from '../../core/chatStore/chatStorage';

let writeCounter = 0;

export class VsCodeChatStorage implements ChatStorage {
  constructor(private readonly folder: vscode.Uri) {}

  private uri(name: string): vscode.Uri {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || name.includes('..')) throw new Error(`not a chat store file name: ${name}`);
    return vscode.Uri.joinPath(this.folder, name);
  }

  async read(name: string): Promise<string | undefined> {
    try {
      return new TextDecoder().decode(await vscode.workspace.fs.readFile(this.uri(name)));
    } catch (error) {
      if (error instanceof vscode.FileSystemError && error.code === 'FileNotFound') return undefined;
      throw error;
    }
  }

  async write(name: string, text: string): Promise<void> {
    await vscode.workspace.fs.createDirectory(this.folder);
    const temp = this.uri(`${name}.${++writeCounter}.tmp`);
    await vscode.workspace.fs.writeFile(temp, new TextEncoder().encode(text));
    await vscode.workspace.fs.rename(temp, this.uri(name), { overwrite: true });
  }

  async remove(name: string): Promise<void> {
    try {
      await vscode.workspace.fs.delete(this.uri(name));
    } catch (error) {
      if (!(error instanceof vscode.FileSystemError && error.code === 'FileNotFound')) throw error;
    }
  }

  async list(): Promise<string[]> {
    try {
      const entries = await vscode.workspace.fs.readDirectory(this.folder);
      return entries.filter(([name, type]) => type === vscode.FileType.File && !name.endsWith('.tmp')).map(([name]) => name);
    } catch (error) {
      if (error instanceof vscode.FileSystemError && error.code === 'FileNotFound') return [];
      throw error;
    }
  }

  async keepAside(names: readonly string[], folder: string): Promise<string> {
    const aside = this.uri(folder);
    await vscode.workspace.fs.createDirectory(aside);
    for (const name of names) {
      try {
        await vscode.workspace.fs.rename(this.uri(name), vscode.Uri.joinPath(aside, name), { overwrite: false });
      } catch (error) {
        if (!(error instanceof vscode.FileSystemError && error.code === 'FileNotFound')) throw error;
      }
    }
    return aside.toString(true);
  }
}
