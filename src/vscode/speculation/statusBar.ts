// The speculation state at a glance in the status bar; clicking it opens the preview of its changes.
import * as vscode from 'vscode';

export type StatusBarState =
  | { state: 'idle' }
  | { state: 'running'; toolCalls: number }
  | { state: 'ready'; files: number }
  | { state: 'boundary'; detail: string; files: number }
  | { state: 'failed'; error: string };

export class SpeculationStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('speculate.status', vscode.StatusBarAlignment.Right, 100);

  /** Which sandbox runs commands ahead here and why (the probe's answer), added to every tooltip. */
  sandboxNote: string | undefined;

  constructor() {
    this.item.name = 'Speculate';
    this.item.command = 'speculate.previewChanges';
  }

  update(status: StatusBarState): void {
    const files = 'files' in status && status.files > 0 ? ` · ${status.files} file${status.files === 1 ? '' : 's'}` : '';
    switch (status.state) {
      case 'idle':
        this.item.hide();
        return;
      case 'running':
        this.item.text = `$(loading~spin) Speculating · ${status.toolCalls} tool call${status.toolCalls === 1 ? '' : 's'}`;
        this.item.tooltip = 'Speculate is running the suggestion ahead of you. Click to preview its changes.';
        break;
      case 'ready':
        this.item.text = `$(check) Speculation ready${files}`;
        this.item.tooltip = 'Press Tab in the chat to apply it. Click to preview its changes.';
        break;
      case 'boundary':
        this.item.text = `$(debug-pause) Speculation stopped${files}`;
        this.item.tooltip = `Stopped: ${status.detail}. Tab applies what is done and continues live.`;
        break;
      case 'failed':
        this.item.text = '$(circle-slash) Speculation failed';
        this.item.tooltip = `Couldn't run ahead: ${status.error}. The chat works as usual; Tab still sends the suggestion.`;
        break;
    }
    if (this.sandboxNote) this.item.tooltip = `${this.item.tooltip}\nSandbox: ${this.sandboxNote}.`;
    this.item.accessibilityInformation = { label: this.item.text.replace(/\$\([^)]*\)\s*/g, ''), role: 'button' };
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
