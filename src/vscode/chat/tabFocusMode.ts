// Whether VS Code's "Tab Moves Focus" (Ctrl+M) is on, for the chat input: while it is, Tab must move
// the focus as it does everywhere else, so the suggestion is accepted with Ctrl+Enter instead.
// VS Code offers no API to read the mode, so Ctrl+M is routed through us to the built-in toggle and
// mirrored here; the editor.tabFocusMode setting (which sets the mode) resets the mirror.
import * as vscode from 'vscode';

export class TabFocusModeMirror implements vscode.Disposable {
  private on: boolean;
  private readonly emitter = new vscode.EventEmitter<boolean>();
  readonly onDidChange = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor() {
    this.on = TabFocusModeMirror.fromSetting();
    this.subscription = vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('editor.tabFocusMode')) this.set(TabFocusModeMirror.fromSetting());
    });
  }

  private static fromSetting(): boolean {
    return vscode.workspace.getConfiguration('editor').get<boolean>('tabFocusMode') === true;
  }

  get tabMovesFocus(): boolean {
    return this.on;
  }

  /** Ctrl+M: runs VS Code's own toggle (its status bar entry and message included) and follows it. */
  async toggle(): Promise<void> {
    await vscode.commands.executeCommand('editor.action.toggleTabFocusMode');
    this.set(!this.on);
  }

  private set(on: boolean): void {
    if (on === this.on) return;
    this.on = on;
    this.emitter.fire(on);
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
