// `npm run test:desktop`: the integration suite in desktop VS Code (Electron) through
// @vscode/test-electron's runTests — for contributors with a display and network access: the first
// run downloads VS Code from update.code.visualstudio.com into .vscode-test/. CI and machines without
// that network use the VS Code server runner instead (`npm test -- integration`, same tests).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { repoRoot } from './lib/vscodeServer.mjs';

const VSCODE_VERSION = process.env.SPECULATE_DESKTOP_VSCODE ?? '1.100.3';

execFileSync(process.execPath, ['esbuild.mjs', '--tests'], { stdio: 'inherit', cwd: repoRoot });
const scratch = mkdtempSync(join(tmpdir(), 'speculate-desktop-'));
const resultsFile = join(scratch, 'results.jsonl');
const workspace = join(scratch, 'workspace');
cpSync(join(repoRoot, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
let failed = 1;
try {
  await runTests({
    version: VSCODE_VERSION,
    extensionDevelopmentPath: repoRoot,
    extensionTestsPath: join(repoRoot, 'out/test/integration/index.js'),
    extensionTestsEnv: { SPECULATE_TEST_RESULTS: resultsFile },
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust', '--user-data-dir', join(scratch, 'user')],
  });
  const lines = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  for (const entry of lines) {
    if (entry.event === 'pass') console.log(`  \u2714 ${entry.title} (${entry.ms} ms)`);
    else if (entry.event === 'fail') console.log(`  \u2716 ${entry.title}\n${entry.error.replace(/^/gm, '      ')}`);
  }
  const end = lines.find((l) => l.event === 'end');
  failed = end ? end.failed : 1;
  console.log(end ? `${end.passed} passed, ${end.failed} failed` : 'The integration suite did not finish in desktop VS Code.');
} catch (error) {
  console.error(`Desktop VS Code could not run the suite: ${error instanceof Error ? error.message : String(error)}`);
  console.error('It needs a display (or xvfb-run) and network access to download VS Code; without them use `npm test -- integration`.');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(failed > 0 ? 1 : 0);
