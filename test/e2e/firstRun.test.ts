// `npm start` as a new user meets it: the packaged extension installed in a plain VS Code window
// (no "[Extension Development Host]"), the Speculate chat open with its input focused, and no
// walkthrough, welcome page or notification in the way.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, Page } from 'playwright-core';
import { artifactsDir, CHAT_INPUT, repoRoot } from './workbench';

const EXTENSION_FRAME = 'iframe.webview.ready[src*="extensionId=speculate.speculate"]';

/** Runs `npm start` (its script, as npm does) and resolves with the URL it prints. */
function startNpmStart(): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, [join(repoRoot, 'scripts/start.mjs')], { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const found = /^\s+(http:\/\/127\.0\.0\.1:\d+\/\S+)$/.exec(line);
      if (found) resolve(found[1]);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with code ${code} before printing its URL`)));
  });
  return { child, url };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // start.mjs stops the server and the demo model and removes its temp folder on SIGTERM.
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
}

describe('npm start', function () {
  this.timeout(240_000);
  let started: { child: ChildProcess; url: Promise<string> } | undefined;
  let browser: Browser | undefined;
  let page: Page;

  before(async () => {
    started = startNpmStart();
    const url = await started.url;
    const { launchChromium } = (await import(join(repoRoot, 'scripts/lib/browser.mjs'))) as { launchChromium(): Promise<Browser> };
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  });
  after(async () => {
    await browser?.close();
    if (started) await stop(started.child);
  });

  it('lands in the Speculate chat with the input focused, in a plain window without toasts or walkthrough', async () => {
    const chat = page.frameLocator(EXTENSION_FRAME).frameLocator('iframe#active-frame');
    const input = chat.locator(CHAT_INPUT);
    await input.waitFor({ timeout: 60_000 });
    // The keyboard is in the chat input: the page's focus is the webview, the webview's is the input.
    const deadline = Date.now() + 30_000;
    let focused = false;
    while (!focused && Date.now() < deadline) {
      focused = await input.evaluate((el) => el === document.activeElement && document.hasFocus());
      if (!focused) await page.waitForTimeout(200);
    }
    assert.ok(focused, 'the chat input has the keyboard focus');
    await page.keyboard.type('hello');
    assert.equal(await input.inputValue(), 'hello', 'typing right away goes into the chat input');

    assert.doesNotMatch(await page.title(), /Extension Development Host/);
    assert.equal(await page.locator('.notification-toast').count(), 0, 'no notification is shown');
    assert.equal(await page.locator('.gettingStartedContainer').count(), 0, 'no welcome page or walkthrough is open');
    // The demo model answers until an endpoint is set: the chat says so.
    // (The note shows once the host's first message about the model has arrived.)
    await chat.locator('.welcome-demo:not([hidden])', { hasText: 'demo model' }).waitFor();
    mkdirSync(artifactsDir, { recursive: true });
    await page.screenshot({ path: join(artifactsDir, 'npm-start-focused-chat.png') });
  });
});
