// A real VS Code workbench for the benchmarks: like test/e2e/workbench's openWorkbench, plus the
// host probe (bench/lib/hostProbe) loaded into the extension host, whose JSON lines the bench reads.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { repoRoot, type Workbench } from '../../test/e2e/workbench';
import type { ProbeLine } from './hostProbe';

export interface BenchWorkbench extends Workbench {
  /** Everything the host probe wrote so far. */
  probeLines(): ProbeLine[];
  /** Resolves with the first probe line that matches, polling the file. */
  waitForProbe(predicate: (line: ProbeLine) => boolean, timeoutMs?: number): Promise<ProbeLine>;
}

export interface BenchWorkbenchOptions {
  settings?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Runs before the page opens (e.g. to write files into the workspace). */
  prepareWorkspace?: (workspace: string) => void;
}

interface ScriptModules {
  startVsCodeServer(options?: object): Promise<{ origin: string; dataDir: string; stop(): Promise<void> }>;
  workbenchUrl(origin: string, options: { folder: string; extensionPath: string; testsPath?: string }): string;
  launchChromium(): Promise<Browser>;
}

async function loadScripts(): Promise<ScriptModules> {
  const server = (await import(join(repoRoot, 'scripts/lib/vscodeServer.mjs'))) as Pick<ScriptModules, 'startVsCodeServer' | 'workbenchUrl'>;
  const browser = (await import(join(repoRoot, 'scripts/lib/browser.mjs'))) as Pick<ScriptModules, 'launchChromium'>;
  return { ...server, ...browser };
}

const EXTENSION_ID = 'speculate.speculate';

export async function openBenchWorkbench(options: BenchWorkbenchOptions = {}): Promise<BenchWorkbench> {
  const scripts = await loadScripts();
  const scratch = mkdtempSync(join(tmpdir(), 'speculate-bench-wb-'));
  const workspace = join(scratch, 'workspace');
  const probeOut = join(scratch, 'probe.jsonl');
  cpSync(join(repoRoot, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  writeFileSync(join(workspace, '.vscode/settings.json'), JSON.stringify({ 'workbench.startupEditor': 'none', ...options.settings }, null, 2));
  options.prepareWorkspace?.(workspace);

  const server = await scripts.startVsCodeServer({ env: { ...options.env, SPECULATE_BENCH_PROBE_OUT: probeOut } });
  let browser: Browser | undefined;
  try {
    browser = await scripts.launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(scripts.workbenchUrl(server.origin, { folder: workspace, extensionPath: repoRoot, testsPath: join(__dirname, 'hostProbe.js') }));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const openedBrowser = browser;
    const probeLines = (): ProbeLine[] =>
      existsSync(probeOut) ? readFileSync(probeOut, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as ProbeLine) : [];
    return {
      page,
      workspace,
      tmpDir: join(server.dataDir, 'tmp'),
      chat: () => page.frameLocator(`iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('iframe#active-frame'),
      async screenshot(name) {
        const file = join(scratch, `${name}.png`);
        await page.screenshot({ path: file });
        return file;
      },
      probeLines,
      async waitForProbe(predicate, timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const found = probeLines().find(predicate);
          if (found) return found;
          if (Date.now() > deadline) throw new Error(`the host probe wrote no matching line within ${timeoutMs} ms`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      async close() {
        await openedBrowser.close();
        await server.stop();
        rmSync(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await browser?.close();
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}
