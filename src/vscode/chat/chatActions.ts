// The buttons a chat notice or error can carry, each mapped to one fixed command: the webview names an action
// id, never a command, so a compromised page cannot run arbitrary commands.
import * as vscode from 'vscode';
import { CHAT_ACTION_LABELS, type ChatAction, type ChatActionId } from '../../shared/protocol';

const LABELS = CHAT_ACTION_LABELS;

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
    case 'selectModel':
      await vscode.commands.executeCommand('speculate.selectModel');
      return;
    case 'runLive':
      // The session's own action (the controller runs it); no command stands for it.
      return;
    case 'setUpEndpoint':
      await vscode.commands.executeCommand('speculate.setUpEndpoint');
      return;
  }
}
