// The buttons a chat notice can carry, each mapped to one fixed command: the webview names an action
// id, never a command, so a compromised page cannot run arbitrary commands.
import * as vscode from 'vscode';
import type { ChatAction, ChatActionId } from '../shared/protocol';

const LABELS: { [K in ChatActionId]: string } = {
  manageTrust: 'Manage Workspace Trust',
  openUserSettings: 'Open User Settings',
  setApiKey: 'Set API Key',
};

/** A button for a notice, with its standard label. */
export function chatAction(action: ChatActionId, setting?: string): ChatAction {
  return { action, label: LABELS[action], ...(setting ? { setting } : {}) };
}

export async function runChatAction(action: ChatActionId, setting?: string): Promise<void> {
  switch (action) {
    case 'manageTrust':
      await vscode.commands.executeCommand('workbench.trust.manage');
      return;
    case 'openUserSettings':
      // The user tab: user-only settings cannot be set anywhere else.
      await vscode.commands.executeCommand('workbench.action.openGlobalSettings', { query: setting ?? '@ext:speculate.speculate' });
      return;
    case 'setApiKey':
      await vscode.commands.executeCommand('speculate.setApiKey');
      return;
  }
}
