// WebviewViewProvider for the chat: hosts the webview bundle under a strict CSP and relays messages.
import * as vscode from 'vscode';

function nonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let value = '';
  for (let i = 0; i < 32; i++) value += chars.charAt(Math.floor(Math.random() * chars.length));
  return value;
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewId = 'speculate.chat';
  private view: vscode.WebviewView | undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    const scriptNonce = nonce();
    const script = view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
    view.webview.html = `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${view.webview.cspSource}; script-src 'nonce-${scriptNonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><title>Speculate</title></head>
<body><div id="app"></div><script nonce="${scriptNonce}" src="${script}"></script></body></html>`;
  }

  reveal(): void {
    this.view?.show(false);
  }
}
