// The chat webview's HTML page, as a pure string function: the host (and the test harness) call it
// with the webview's CSP source, a fresh nonce and the asWebviewUri'd script and style URIs.

export interface ChatHtmlOptions {
  /** `webview.cspSource`. */
  cspSource: string;
  /** A fresh random nonce per render (letters and digits); only the bundle's script tag carries it. */
  nonce: string;
  /** `webview.asWebviewUri(<extension>/dist/webview.js)`, as a string. */
  scriptUri: string;
  /** `webview.asWebviewUri(<extension>/media/chat.css)`, as a string. */
  styleUri: string;
  /** Document title (read by screen readers); defaults to "Speculate chat". */
  title?: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

/** The Content-Security-Policy of the page: no inline script or style, scripts only by nonce. */
export function chatContentSecurityPolicy(cspSource: string, nonce: string): string {
  // cspSource is a space-separated source list (VS Code gives `https://*.vscode-cdn.net`); only
  // plain scheme/host sources and 'self' are kept, so a stray value cannot widen the policy.
  const kept = cspSource
    .split(/\s+/)
    .filter((token) => token === "'self'" || /^[a-z][a-z0-9+.-]*:(?:\/\/[^\s;,'"]+)?$/i.test(token));
  const source = kept.length > 0 ? kept.join(' ') : "'none'";
  const safeNonce = nonce.replace(/[^A-Za-z0-9+/=_-]/g, '');
  return [
    "default-src 'none'",
    `style-src ${source}`,
    `font-src ${source}`,
    `img-src ${source} data:`,
    `script-src 'nonce-${safeNonce}'`,
  ].join('; ');
}

/** The full page. Root element: `<div id="app">`; the bundle builds everything inside it. */
export function renderChatHtml(options: ChatHtmlOptions): string {
  const csp = chatContentSecurityPolicy(options.cspSource, options.nonce);
  const nonce = options.nonce.replace(/[^A-Za-z0-9+/=_-]/g, '');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(options.styleUri)}">
<title>${escapeHtml(options.title ?? 'Speculate chat')}</title>
</head>
<body>
<div id="app"></div>
<script nonce="${escapeHtml(nonce)}" src="${escapeHtml(options.scriptUri)}"></script>
</body>
</html>
`;
}

/** A nonce for renderChatHtml from any source of random bytes (the host passes crypto's). */
export function makeNonce(randomBytes: (n: number) => Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(32), (byte) => alphabet[byte % alphabet.length]).join('');
}
