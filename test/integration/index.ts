// Loaded by VS Code's extension host (extensionTestsPath): runs the integration suites with mocha
// inside the real host and reports each result line and the totals to the runner through a file.
// SPECULATE_TEST_SUITE=untrusted runs the suites under untrusted/ (the runner opens that window with
// workspace trust on and the folder not trusted); otherwise every other suite runs.
import { appendFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? testFiles(full) : name.endsWith('.test.js') ? [full] : [];
  });
}

export async function run(): Promise<void> {
  const resultsFile = process.env.SPECULATE_TEST_RESULTS;
  const report = (line: object) => {
    if (resultsFile) appendFileSync(resultsFile, JSON.stringify(line) + '\n');
  };
  // mocha 11 is CommonJS; required lazily so this file loads even if mocha is missing.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Mocha = require('mocha') as typeof import('mocha');
  const mocha = new Mocha({ ui: 'bdd', timeout: 30_000, color: false, reporter: 'spec' });
  if (process.env.SPECULATE_TEST_GREP) mocha.grep(process.env.SPECULATE_TEST_GREP);
  const untrusted = process.env.SPECULATE_TEST_SUITE === 'untrusted';
  const untrustedDir = join(__dirname, 'untrusted');
  for (const file of testFiles(__dirname)) if (file.startsWith(untrustedDir + '/') === untrusted) mocha.addFile(file);

  await new Promise<void>((resolve) => {
    const runner = mocha.run(() => resolve());
    runner.on('pass', (test) => report({ event: 'pass', title: test.fullTitle(), ms: test.duration }));
    runner.on('fail', (test, error: Error) => report({ event: 'fail', title: test.fullTitle(), error: error?.stack ?? String(error) }));
    runner.on('end', () => report({ event: 'end', passed: runner.stats?.passes ?? 0, failed: runner.stats?.failures ?? 0 }));
  });
  if (resultsFile) writeFileSync(resultsFile + '.done', 'done');
}
