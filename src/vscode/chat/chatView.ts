// WebviewViewProvider for the chat: hosts the webview bundle under a strict CSP and relays typed
// messages. Every incoming message is validated; anything malformed is ignored.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { makeNonce, renderChatHtml } from '../../shared/chatHtml';
import { parseWebviewMessage, type HostToWebview, type WebviewToHost } from '../../shared/protocol';

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'speculate.chat';
  private view: vscode.WebviewView | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly messageEmitter = new vscode.EventEmitter<WebviewToHost>();
  /** Valid messages from the webview. */
  readonly onMessage = this.messageEmitter.event;

  constructor(private readonly extensionUri: vscode.Uri, private readonly log: (line: string) => void) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = renderChatHtml({
      cspSource: view.webview.cspSource,
      nonce: makeNonce((n) => randomBytes(n)),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    });
    this.disposables.push(
      view.webview.onDidReceiveMessage((raw: unknown) => {
        const message = parseWebviewMessage(raw);
        if (!message) {
          this.log(`ignored a malformed message from the chat webview: ${JSON.stringify(raw)?.slice(0, 200)}`);
          return;
        }
        this.messageEmitter.fire(message);
      }),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  post(message: HostToWebview): void {
    void this.view?.webview.postMessage(message);
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Shows the chat; with focus=true the input gets the keyboard. */
  async reveal(focus: boolean): Promise<void> {
    if (!this.view) await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
    else this.view.show(!focus);
    if (focus) this.post({ type: 'focusInput' });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.messageEmitter.dispose();
  }
}
