// The running extension's API as the integration tests reach it (activate() returns it).
import * as vscode from 'vscode';
import type { SpeculateApi } from '../../src/extension';

export const EXTENSION_ID = 'speculate.speculate';

export async function speculateApi(): Promise<SpeculateApi> {
  const extension = vscode.extensions.getExtension<SpeculateApi>(EXTENSION_ID);
  if (!extension) throw new Error(`extension ${EXTENSION_ID} is not installed`);
  return extension.activate();
}

export function workspaceRoot(): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('the integration tests need an open folder');
  return folder.uri;
}
