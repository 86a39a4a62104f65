// Unit tests: mocha on src/core and friends, no VS Code. `npm run test:unit -- --grep overlay`.
import { execFileSync } from 'node:child_process';
import { findFiles } from './lib/files.mjs';
import { runMocha } from './lib/mochaRun.mjs';

export async function runUnitTests({ build = true, grep } = {}) {
  if (build) execFileSync(process.execPath, ['esbuild.mjs', '--tests'], { stdio: 'inherit' });
  const out = process.env.SPECULATE_OUT_DIR || 'out';
  return runMocha(findFiles(`${out}/test/unit`, '.test.js'), { grep });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const grepAt = process.argv.indexOf('--grep');
  const grep = grepAt > 0 ? process.argv[grepAt + 1] : undefined;
  const { passed, failed } = await runUnitTests({ grep });
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}
