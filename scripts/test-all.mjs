// `npm test`: installs the real VS Code server if needed, then runs every suite — type check, unit,
// webview (Chromium), integration (inside VS Code's extension host) and end-to-end (the chat webview
// in the real workbench). Ends with the plain closing line `N passed, N failed` over all suites.
import { execFileSync, spawnSync } from 'node:child_process';
import { findFiles } from './lib/files.mjs';
import { runMocha } from './lib/mochaRun.mjs';
import { runIntegrationTests } from './run-integration.mjs';
import { repoRoot } from './lib/vscodeServer.mjs';

process.chdir(repoRoot);
const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const wants = (suite) => only.length === 0 || only.includes(suite);
const totals = { passed: 0, failed: 0 };
const summary = [];

function record(suite, { passed, failed }) {
  totals.passed += passed;
  totals.failed += failed;
  summary.push(`${suite}: ${passed} passed, ${failed} failed`);
}

function banner(title) {
  console.log(`\n=== ${title} ===`);
}

banner('setup: VS Code server and Chromium');
execFileSync('bash', ['scripts/setup-vscode.sh'], { stdio: 'inherit' });

if (wants('typecheck')) {
  banner('type check (tsc --noEmit, strict)');
  const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.', '--noEmit'], { stdio: 'inherit' });
  record('typecheck', tsc.status === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 });
}

banner('build (dist/ bundles and out/ for tests)');
execFileSync(process.execPath, ['esbuild.mjs', '--tests'], { stdio: 'inherit' });

if (wants('unit')) {
  banner('unit tests (mocha on core)');
  record('unit', await runMocha(findFiles('out/test/unit', '.test.js')));
}
if (wants('webview')) {
  banner('webview tests (the chat UI in Chromium)');
  record('webview', await runMocha(findFiles('out/test/webview', '.test.js'), { timeout: 30_000 }));
}
if (wants('integration')) {
  banner('integration tests (inside a real VS Code extension host)');
  record('integration', await runIntegrationTests({ build: false }));
}
if (wants('e2e')) {
  banner('end-to-end tests (the chat webview in the real workbench)');
  record('e2e', await runMocha(findFiles('out/test/e2e', '.test.js'), { timeout: 120_000 }));
}

banner('summary');
for (const line of summary) console.log(line);
console.log(`${totals.passed} passed, ${totals.failed} failed`);
process.exit(totals.failed > 0 ? 1 : 0);
