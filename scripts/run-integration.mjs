// Integration tests: mocha inside the extension host of a real VS Code server, opened in Chromium.
// Two windows, one after the other: a trusted folder (workspace trust disabled) for most suites, and
// a folder opened in Restricted Mode (trust on, not trusted) whose .vscode/settings.json is hostile,
// for the suites under test/integration/untrusted/. The tests report through a results file
// (SPECULATE_TEST_RESULTS) that this runner prints.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from './lib/browser.mjs';
import { repoRoot, startVsCodeServer, workbenchUrl } from './lib/vscodeServer.mjs';

const TIMEOUT_MS = 5 * 60_000;

/** The two windows the suites run in. */
const WINDOWS = [
  { suite: 'trusted', title: 'trusted folder', workspaceTrust: false },
  {
    suite: 'untrusted',
    title: 'untrusted folder (Restricted Mode)',
    workspaceTrust: true,
    // What a cloned repository may bring: every setting it would like to change, flat and nested.
    workspaceSettings: 'test/fixtures/workspaces/hostile-settings.jsonc',
    // The user chose auto-edit (speculation would prepare edits); the folder must not get it.
    userSettings: { 'speculate.approvalMode': 'auto-edit' },
  },
];

async function runWindow(window, { grep }) {
  const scratch = mkdtempSync(join(tmpdir(), 'speculate-it-'));
  const resultsFile = join(scratch, 'results.jsonl');
  const workspace = join(scratch, 'workspace');
  cpSync(join(repoRoot, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
  if (window.workspaceSettings) {
    mkdirSync(join(workspace, '.vscode'), { recursive: true });
    copyFileSync(join(repoRoot, window.workspaceSettings), join(workspace, '.vscode/settings.json'));
  }

  const serverLog = [];
  const server = await startVsCodeServer({
    env: { SPECULATE_TEST_RESULTS: resultsFile, SPECULATE_TEST_SUITE: window.suite, ...(grep ? { SPECULATE_TEST_GREP: grep } : {}) },
    log: (line) => serverLog.push(line),
    workspaceTrust: window.workspaceTrust,
    userSettings: { 'workbench.startupEditor': 'none', ...window.userSettings },
  });
  const browser = await launchChromium();
  let printed = 0;
  const printNew = () => {
    if (!existsSync(resultsFile)) return;
    const lines = readFileSync(resultsFile, 'utf8').split('\n').filter(Boolean);
    for (const line of lines.slice(printed)) {
      const entry = JSON.parse(line);
      if (entry.event === 'pass') console.log(`  \u2714 ${entry.title} (${entry.ms} ms)`);
      else if (entry.event === 'fail') console.log(`  \u2716 ${entry.title}\n${entry.error.replace(/^/gm, '      ')}`);
    }
    printed = lines.length;
  };
  try {
    console.log(`\n  -- ${window.title} --`);
    const page = await browser.newPage();
    page.on('console', (message) => {
      const text = message.text();
      if (text.includes('[speculate]')) console.log('  ' + text.slice(text.indexOf('[speculate]')));
    });
    let exitCode;
    await page.exposeFunction('codeAutomationExit', (code) => { exitCode = code; });
    await page.goto(workbenchUrl(server.origin, {
      folder: workspace,
      extensionPath: repoRoot,
      testsPath: join(repoRoot, 'out/test/integration/index.js'),
    }));
    const deadline = Date.now() + TIMEOUT_MS;
    while (!existsSync(resultsFile + '.done') && exitCode === undefined && Date.now() < deadline) {
      printNew();
      await new Promise((r) => setTimeout(r, 250));
    }
    printNew();
    const lines = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
    const end = lines.find((l) => l.event === 'end');
    if (!end) {
      console.log(`  \u2716 integration tests (${window.title}) did not finish` + (exitCode !== undefined ? ` (workbench exited with ${exitCode})` : ' (time-out)'));
      console.log(serverLog.slice(-30).join('\n'));
      return { passed: lines.filter((l) => l.event === 'pass').length, failed: lines.filter((l) => l.event === 'fail').length + 1 };
    }
    return { passed: end.passed, failed: end.failed };
  } finally {
    await browser.close();
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export async function runIntegrationTests({ build = true, grep } = {}) {
  if (build) execFileSync(process.execPath, ['esbuild.mjs', '--tests'], { stdio: 'inherit', cwd: repoRoot });
  const totals = { passed: 0, failed: 0 };
  for (const window of WINDOWS) {
    const { passed, failed } = await runWindow(window, { grep });
    totals.passed += passed;
    totals.failed += failed;
  }
  return totals;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const grepAt = process.argv.indexOf('--grep');
  const { passed, failed } = await runIntegrationTests({ grep: grepAt > 0 ? process.argv[grepAt + 1] : undefined });
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}
