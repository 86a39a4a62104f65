// Integration tests: mocha inside the extension host of a real VS Code server, opened in Chromium.
// The tests report through a results file (SPECULATE_TEST_RESULTS) that this runner prints.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from './lib/browser.mjs';
import { repoRoot, startVsCodeServer, workbenchUrl } from './lib/vscodeServer.mjs';

const TIMEOUT_MS = 5 * 60_000;

export async function runIntegrationTests({ build = true, grep } = {}) {
  if (build) execFileSync(process.execPath, ['esbuild.mjs', '--tests'], { stdio: 'inherit', cwd: repoRoot });
  const scratch = mkdtempSync(join(tmpdir(), 'speculate-it-'));
  const resultsFile = join(scratch, 'results.jsonl');
  const workspace = join(scratch, 'workspace');
  cpSync(join(repoRoot, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });

  const serverLog = [];
  const server = await startVsCodeServer({
    env: { SPECULATE_TEST_RESULTS: resultsFile, ...(grep ? { SPECULATE_TEST_GREP: grep } : {}) },
    log: (line) => serverLog.push(line),
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
      console.log('  \u2716 integration tests did not finish' + (exitCode !== undefined ? ` (workbench exited with ${exitCode})` : ' (time-out)'));
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const grepAt = process.argv.indexOf('--grep');
  const { passed, failed } = await runIntegrationTests({ grep: grepAt > 0 ? process.argv[grepAt + 1] : undefined });
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}
