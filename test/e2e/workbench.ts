// One real VS Code workbench for the end-to-end suites: the VS Code server with the extension loaded
// from the work tree, a temporary copy of the demo workspace, and a Chromium page on it.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { OVERLAY_PARENT } from '../../src/core/followup/overlay/recovery';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';

export const repoRoot = resolve(__dirname, '../../..');
export const artifactsDir = join(repoRoot, 'test/e2e/artifacts');
const EXTENSION_ID = 'speculate.speculate';

export interface Workbench {
  page: Page;
  workspace: string;
  /** Every folder of the window (one, unless `multiRoot` was asked for). */
  folders: string[];
  /** The extension host's TMPDIR (overlays live in <tmpDir>/speculate-<uid>/). */
  tmpDir: string;
  /** The VS Code server's user settings file (what the user's settings say now; VS Code picks up edits). */
  userSettingsFile: string;
  /** The server's data folder (logs, user data, extensions). */
  dataDir: string;
  /** The chat webview's document. */
  chat(): FrameLocator;
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

interface ServerHandle { origin: string; dataDir: string; userSettingsFile: string; stop(): Promise<void> }

// The .mjs helpers are shared with the runner scripts; loaded with import() from CommonJS.
async function loadScripts() {
  const server = (await import(join(repoRoot, 'scripts/lib/vscodeServer.mjs'))) as {
    startVsCodeServer(options?: object): Promise<ServerHandle>;
    workbenchUrl(origin: string, options: { folder?: string; workspace?: string; extensionPath?: string; testsPath?: string }): string;
  };
  const browser = (await import(join(repoRoot, 'scripts/lib/browser.mjs'))) as { launchChromium(): Promise<Browser> };
  return { ...server, ...browser };
}

export interface WorkbenchOptions {
  /**
   * The VS Code server's user settings. Endpoint, approval mode and the other user-only settings
   * must go here: a workspace's value of those is ignored.
   */
  settings?: Record<string, unknown>;
  /** Written to the workspace's .vscode/settings.json before the workbench opens. */
  workspaceSettings?: Record<string, unknown>;
  /** Keep workspace trust on: the folder opens in Restricted Mode (not trusted). */
  workspaceTrust?: boolean;
  /** Extra environment for the extension host (e.g. the scripted model's URL). */
  env?: Record<string, string>;
  /** Runs before the page opens (e.g. to write files into the workspace). */
  prepareWorkspace?: (workspace: string) => void;
  /** A module the extension host loads as its tests (the benchmarks' host probe). */
  testsPath?: string;
  /** Install this .vsix into the server and use it, instead of loading the work tree as a development extension. */
  installVsix?: string;
  /**
   * A multi-root window: one copy of the demo workspace per name, side by side, opened through a
   * .code-workspace file. `workspace` is then the first folder, `folders` all of them.
   */
  multiRoot?: string[];
}

export async function openWorkbench(options: WorkbenchOptions = {}): Promise<Workbench> {
  const scripts = await loadScripts();
  const scratch = mkdtempSync(join(tmpdir(), 'speculate-e2e-'));
  const folders = (options.multiRoot ?? ['workspace']).map((name) => join(scratch, name));
  for (const folder of folders) cpSync(join(repoRoot, 'test/fixtures/workspaces/demo'), folder, { recursive: true });
  const workspace = folders[0];
  const workspaceFile = join(scratch, 'speculate.code-workspace');
  if (options.multiRoot) writeFileSync(workspaceFile, JSON.stringify({ folders: folders.map((path) => ({ path })) }, null, 2));
  if (options.workspaceSettings) {
    mkdirSync(join(workspace, '.vscode'), { recursive: true });
    writeFileSync(join(workspace, '.vscode/settings.json'), JSON.stringify(options.workspaceSettings, null, 2));
  }
  options.prepareWorkspace?.(workspace);
  const server = await scripts.startVsCodeServer({
    env: options.env ?? {},
    userSettings: { 'workbench.startupEditor': 'none', ...options.settings },
    workspaceTrust: options.workspaceTrust ?? false,
    ...(options.installVsix ? { installExtensions: [options.installVsix] } : {}),
  });
  let browser: Browser | undefined;
  try {
    browser = await scripts.launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const extension = options.installVsix ? {} : { extensionPath: repoRoot };
    const target = options.multiRoot ? { workspace: workspaceFile } : { folder: workspace };
    await page.goto(scripts.workbenchUrl(server.origin, { ...target, ...extension, ...(options.testsPath ? { testsPath: options.testsPath } : {}) }));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const openedBrowser = browser;
    return {
      page,
      workspace,
      folders,
      tmpDir: join(server.dataDir, 'tmp'),
      userSettingsFile: server.userSettingsFile,
      dataDir: server.dataDir,
      chat: () => page.frameLocator(`iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('iframe#active-frame'),
      async screenshot(name) {
        mkdirSync(artifactsDir, { recursive: true });
        const file = join(artifactsDir, `${name}.png`);
        await page.screenshot({ path: file });
        return file;
      },
      async close() {
        await openedBrowser.close();
        await server.stop();
        rmSync(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    // A workbench that did not open leaves no browser, server or temp folder behind.
    await browser?.close();
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}

/** An afterEach hook that screenshots the workbench of each failed test into the artifacts. */
export function screenshotFailures(current: () => Workbench | undefined): void {
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await current()?.screenshot(`failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  });
}

/** Clicks the Speculate container in the activity bar and waits for the chat webview. */
export async function openChatView(workbench: Workbench): Promise<FrameLocator> {
  await workbench.page.locator('.activitybar [aria-label^="Speculate"]').first().click();
  const chat = workbench.chat();
  await chat.locator('#app').waitFor({ timeout: 30_000 });
  return chat;
}

/** The chat input, as a screen reader names it. */
export const CHAT_INPUT = 'textarea[aria-label="Message Speculate"]';

/** A folder's names; one removed while we look (a live tree: an overlay's cleanup, housekeeping) is empty. */
export function namesOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Overlay folders the extension host has on disk right now (its TMPDIR is the server's), as pid/id. */
export function overlayDirs(workbench: Pick<Workbench, 'tmpDir'>): string[] {
  const parent = join(workbench.tmpDir, OVERLAY_PARENT);
  if (!existsSync(parent)) return [];
  return namesOrEmpty(parent).flatMap((pid) => namesOrEmpty(join(parent, pid)).map((id) => `${pid}/${id}`));
}

/** Polls `condition` (something on disk or in the test's own state) until it holds, or fails naming `what`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A turn is over when the Stop button is the Send button again. */
export async function waitIdle(chat: FrameLocator): Promise<void> {
  await chat.locator('button.send:not(.stop)').waitFor();
}

/** Types a message into the chat input and sends it with Enter, once the previous turn is over. */
export async function sendMessage(chat: FrameLocator, text: string): Promise<void> {
  await waitIdle(chat);
  // The transcript's own messages (a speculation rendered ahead, off-screen, has one too).
  const sent = chat.locator('.transcript > .transcript-items .user-text');
  const before = await sent.count();
  const input = chat.locator(CHAT_INPUT);
  await input.click();
  await input.fill(text);
  await input.press('Enter');
  // Returns once the host took the message (its user message is on screen; the busy state comes
  // with it), so a waitIdle that follows cannot see the idle state from before the turn.
  await sent.nth(before).waitFor({ state: 'attached' });
}

/** Runs a palette command by its title, typing only once the palette's input has the focus. */
export async function runPaletteCommand(page: Page, title: string): Promise<void> {
  const box = page.locator('.quick-input-widget .quick-input-box input');
  await page.keyboard.press('F1');
  await box.waitFor();
  await box.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title.replace(/^[^:]*:\s*/, '') }).first().waitFor();
  await box.press('Enter');
}

/** The quick input (palette, pickers, input boxes) of the workbench. */
export const quickInput = (page: Page) => page.locator('.quick-input-widget');
export const quickInputBox = (page: Page) => page.locator('.quick-input-widget .quick-input-box input');

/** Waits for the quick input to show `title`, so keys go to the right step. */
export async function waitForQuickInput(page: Page, title: RegExp): Promise<void> {
  await quickInput(page).locator('.quick-input-title', { hasText: title }).waitFor();
}

/** An http URL on 127.0.0.1 where nothing listens (a port just freed): connecting is refused. */
export async function refusedUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return `http://127.0.0.1:${port}/v1`;
}

/** Resolves once `check` holds (the scripted server records requests as they arrive). */
export async function eventually(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface ChatWorkbench {
  workbench: Workbench;
  model: ScriptedServer;
  chat: FrameLocator;
}

/**
 * Mocha hooks for a suite that chats with the scripted demo model in one workbench: starts both
 * before the suite, screenshots each failed test, closes both after. Read `get()` inside tests.
 */
export function useChatWorkbench(approvalMode: 'default' | 'auto-edit'): { get(): ChatWorkbench } {
  let current: ChatWorkbench | undefined;
  let model: ScriptedServer | undefined;
  let workbench: Workbench | undefined;
  before(async function () {
    this.timeout(180_000);
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    workbench = await openWorkbench({
      settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'speculate.approvalMode': approvalMode, 'workbench.startupEditor': 'none' },
    });
    current = { workbench, model, chat: await openChatView(workbench) };
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && workbench) {
      await workbench.screenshot(`failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
    }
  });
  after(async () => {
    await workbench?.close();
    await model?.close();
  });
  return {
    get() {
      if (!current) throw new Error('the chat workbench did not start');
      return current;
    },
  };
}
