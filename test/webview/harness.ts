// Test harness for the chat webview: serves the real page (renderChatHtml, strict CSP, the bundle
// built from src/webview/main.ts, media/chat.css) on 127.0.0.1 and drives it in Chromium with a fake
// acquireVsCodeApi that records what the webview posts and keeps its state across reloads.
import * as assert from 'node:assert/strict';
import * as esbuild from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { renderChatHtml } from '../../src/shared/chatHtml';
import type { ChatSnapshot, HostToWebview, WebviewToHost } from '../../src/shared/protocol';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** The repository root (where package.json is), found from this file's compiled location. */
export function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'src', 'webview', 'main.ts'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('could not find the repository root above ' + __dirname);
    dir = parent;
  }
  return dir;
}

let bundlePromise: Promise<string> | undefined;

/** The webview bundle, built in memory once per test process (no dependency on `npm run build`). */
export function buildWebviewBundle(): Promise<string> {
  bundlePromise ??= esbuild
    .build({
      entryPoints: [join(repoRoot(), 'src', 'webview', 'main.ts')],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    })
    .then((result) => result.outputFiles[0]!.text);
  return bundlePromise;
}

/** Colours and fonts of VS Code's Dark Modern theme, as VS Code sets them on a webview. */
export const DARK_MODERN: Record<string, string> = {
  '--vscode-font-family': '-apple-system, BlinkMacSystemFont, "Segoe WPC", "Segoe UI", "Ubuntu", "Droid Sans", sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-font-weight': 'normal',
  '--vscode-editor-font-family': '"Droid Sans Mono", "DejaVu Sans Mono", monospace',
  '--vscode-editor-font-size': '13px',
  '--vscode-foreground': '#cccccc',
  '--vscode-descriptionForeground': '#9d9d9d',
  '--vscode-errorForeground': '#f85149',
  '--vscode-focusBorder': '#0078d4',
  '--vscode-icon-foreground': '#cccccc',
  '--vscode-sideBar-background': '#181818',
  '--vscode-editor-background': '#1f1f1f',
  '--vscode-editor-foreground': '#cccccc',
  '--vscode-editorCursor-foreground': '#aeafad',
  '--vscode-editorWidget-background': '#202020',
  '--vscode-editorGhostText-foreground': 'rgba(255, 255, 255, 0.34)',
  '--vscode-editorWarning-foreground': '#cca700',
  '--vscode-input-background': '#313131',
  '--vscode-input-foreground': '#cccccc',
  '--vscode-input-border': '#3c3c3c',
  '--vscode-input-placeholderForeground': '#989898',
  '--vscode-inputValidation-errorBackground': '#5a1d1d',
  '--vscode-inputValidation-errorBorder': '#be1100',
  '--vscode-button-background': '#0078d4',
  '--vscode-button-foreground': '#ffffff',
  '--vscode-button-hoverBackground': '#026ec1',
  '--vscode-button-border': 'rgba(255, 255, 255, 0.07)',
  '--vscode-button-secondaryBackground': '#313131',
  '--vscode-button-secondaryForeground': '#cccccc',
  '--vscode-button-secondaryHoverBackground': '#3c3c3c',
  '--vscode-badge-background': '#616161',
  '--vscode-badge-foreground': '#f8f8f8',
  '--vscode-textLink-foreground': '#4daafc',
  '--vscode-textLink-activeForeground': '#4daafc',
  '--vscode-textPreformat-foreground': '#d0d0d0',
  '--vscode-textPreformat-background': '#3c3c3c',
  '--vscode-textCodeBlock-background': '#2b2b2b',
  '--vscode-textBlockQuote-background': '#2b2b2b',
  '--vscode-textBlockQuote-border': '#616161',
  '--vscode-widget-border': '#313131',
  '--vscode-widget-shadow': 'rgba(0, 0, 0, 0.36)',
  '--vscode-toolbar-hoverBackground': 'rgba(90, 93, 94, 0.31)',
  '--vscode-keybindingLabel-background': 'rgba(128, 128, 128, 0.17)',
  '--vscode-keybindingLabel-foreground': '#cccccc',
  '--vscode-keybindingLabel-border': 'rgba(51, 51, 51, 0.6)',
  '--vscode-keybindingLabel-bottomBorder': 'rgba(68, 68, 68, 0.6)',
  '--vscode-testing-iconPassed': '#73c991',
  '--vscode-charts-green': '#89d185',
  '--vscode-scrollbarSlider-background': 'rgba(121, 121, 121, 0.4)',
  '--vscode-chat-requestBorder': 'rgba(255, 255, 255, 0.10)',
};

export interface Harness {
  origin: string;
  close(): Promise<void>;
}

/** Serves the page, the bundle and the CSS, as the host would through asWebviewUri. */
export async function startHarness(): Promise<Harness> {
  const root = repoRoot();
  const bundle = await buildWebviewBundle();
  let origin = '';
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/' || url.startsWith('/?')) {
      let html = renderChatHtml({
        cspSource: origin,
        nonce: 'testNonce' + Math.random().toString(36).slice(2),
        scriptUri: `${origin}/dist/webview.js`,
        styleUri: `${origin}/media/chat.css`,
      });
      // VS Code puts the theme on the document before the page's own style loads; the harness
      // does the same with one more stylesheet from the allowed origin and the body class.
      html = html.replace('<link rel="stylesheet"', `<link rel="stylesheet" href="${origin}/theme.css">\n<link rel="stylesheet"`);
      html = html.replace('<body>', '<body class="vscode-dark" data-vscode-theme-kind="vscode-dark">');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    } else if (url === '/theme.css') {
      const vars = Object.entries(DARK_MODERN).map(([k, v]) => `  ${k}: ${v};`).join('\n');
      res.writeHead(200, { 'content-type': 'text/css' });
      res.end(`html {\n${vars}\n  background: var(--vscode-sideBar-background);\n}\n`);
    } else if (url === '/dist/webview.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(bundle);
    } else if (/^\/media\/[\w-]+\.css$/.test(url) && existsSync(join(root, url))) {
      // chat.css and the sheets it @imports, as the host serves media/ through asWebviewUri.
      res.writeHead(200, { 'content-type': 'text/css' });
      res.end(readFileSync(join(root, url)));
    } else if (url === '/favicon.ico') {
      res.writeHead(204);
      res.end();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** Runs in the page before the bundle: the fake VS Code API and a CSP violation recorder. */
function installFakeVsCodeApi(): void {
  const w = window as unknown as Record<string, unknown>;
  const posted: unknown[] = [];
  const violations: string[] = [];
  w.__posted = posted;
  w.__cspViolations = violations;
  w.__stateWrites = 0;
  document.addEventListener('securitypolicyviolation', (e) => violations.push(`${e.violatedDirective}: ${e.blockedURI}`));
  let acquired = false;
  w.acquireVsCodeApi = () => {
    if (acquired) throw new Error('An instance of the VS Code API has already been acquired');
    acquired = true;
    return {
      postMessage: (message: unknown) => posted.push(JSON.parse(JSON.stringify(message))),
      getState: () => {
        const raw = sessionStorage.getItem('__vscodeState');
        return raw === null ? undefined : JSON.parse(raw);
      },
      setState: (state: unknown) => {
        w.__stateWrites = (w.__stateWrites as number) + 1;
        sessionStorage.setItem('__vscodeState', JSON.stringify(state));
      },
    };
  };
}

export interface ChatPage {
  page: Page;
  /** Delivers a host message (or anything else, to test robustness). */
  send(message: HostToWebview | unknown): Promise<void>;
  posted(): Promise<WebviewToHost[]>;
  clearPosted(): Promise<void>;
  /** Waits until a message of `type` was posted (after the last clearPosted) and returns it. */
  waitForPosted<T extends WebviewToHost['type']>(type: T): Promise<Extract<WebviewToHost, { type: T }>>;
  init(patch?: Partial<ChatSnapshot>): Promise<void>;
  cspViolations(): Promise<string[]>;
  pageErrors: string[];
}

export const IDLE_SPECULATION = { state: 'idle', toolCalls: 0, filesWritten: [] } as const;

export function snapshot(patch: Partial<ChatSnapshot> = {}): ChatSnapshot {
  return {
    transcript: [],
    busy: false,
    suggestion: null,
    speculation: { ...IDLE_SPECULATION, filesWritten: [] },
    model: { label: 'qwen3-coder-plus', demo: false },
    settings: { enterAcceptsSuggestion: false },
    ...patch,
  };
}

/** Opens the chat in a fresh page and waits for its `ready`. */
export async function openChat(
  browser: Browser,
  harness: Harness,
  viewport: { width: number; height: number } = { width: 420, height: 720 },
): Promise<ChatPage> {
  const page = await browser.newPage({ viewport, deviceScaleFactor: 1 });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await page.addInitScript(installFakeVsCodeApi);
  await page.goto(harness.origin + '/');
  await page.waitForFunction(() => ((window as unknown as { __posted: { type: string }[] }).__posted ?? []).some((m) => m.type === 'ready'));
  const chat: ChatPage = {
    page,
    pageErrors,
    // Delivered like the host's messages (a message event); resolves once the webview has
    // handled it, known by a sentinel posted right after (messages arrive in order).
    send: (message) =>
      page.evaluate(
        (m) =>
          new Promise<void>((resolve) => {
            const sentinel = `__delivered_${Math.random()}`;
            const onMessage = (event: MessageEvent): void => {
              if (event.data !== sentinel) return;
              window.removeEventListener('message', onMessage);
              resolve();
            };
            window.addEventListener('message', onMessage);
            window.postMessage(m, '*');
            window.postMessage(sentinel, '*');
          }),
        message as object,
      ),
    posted: () => page.evaluate(() => (window as unknown as { __posted: WebviewToHost[] }).__posted.slice()),
    clearPosted: () => page.evaluate(() => void (window as unknown as { __posted: unknown[] }).__posted.splice(0)),
    waitForPosted: async (type) => {
      const handle = await page.waitForFunction(
        (t) => (window as unknown as { __posted: { type: string }[] }).__posted.find((m) => m.type === t),
        type,
      );
      return (await handle.jsonValue()) as never;
    },
    init: async (patch) => {
      await chat.send({ type: 'init', state: snapshot(patch) });
    },
    cspViolations: () => page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations.slice()),
  };
  return chat;
}

/** Lets queued messages and animation frames run (deltas render once per frame). */
export async function settle(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}

/**
 * Mocha hooks for a suite of chat pages: one browser and page server for the suite, a fresh page
 * per test, and every test ends with no error in the page and nothing blocked by the CSP.
 */
/** `viewport`: the page size (VS Code's default sidebar is about 300 px wide). */
export function useChatPages(viewport?: { width: number; height: number }): { chat(): ChatPage; origin(): string } {
  let browser: Browser | undefined;
  let harness: Harness | undefined;
  let current: ChatPage | undefined;
  before(async () => {
    [browser, harness] = await Promise.all([launchChromium(), startHarness()]);
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
  });
  beforeEach(async () => {
    current = await openChat(browser!, harness!, viewport);
  });
  afterEach(async () => {
    const page = current!;
    const errors = page.pageErrors.slice();
    const violations = await page.cspViolations();
    await page.page.close();
    assert.deepEqual(errors, [], 'no errors in the page');
    assert.deepEqual(violations, [], 'nothing blocked by the CSP');
  });
  return {
    chat() {
      if (!current) throw new Error('no chat page open');
      return current;
    },
    origin() {
      if (!harness) throw new Error('the page server did not start');
      return harness.origin;
    },
  };
}
