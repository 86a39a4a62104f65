// The context keys that scope commands, menus and keybindings to what currently applies.
import * as vscode from 'vscode';

export type ContextKey =
  | 'speculate.speculationActive'
  | 'speculate.speculationHasChanges'
  | 'speculate.suggestionVisible'
  | 'speculate.speculationDiffOpen'
  /** A turn's Changes review is open: its changes can be undone one by one. */
  | 'speculate.checkpointReviewOpen'
  /** An endpoint is set in the user settings (the walkthrough's first step is done). */
  | 'speculate.endpointConfigured';

const current = new Map<ContextKey, boolean>();

/** Sets a context key, skipping the round trip when the value is unchanged. */
export function setContextKey(key: ContextKey, value: boolean): void {
  if (current.get(key) === value) return;
  current.set(key, value);
  void vscode.commands.executeCommand('setContext', key, value);
}

export function getContextKey(key: ContextKey): boolean {
  return current.get(key) ?? false;
}
