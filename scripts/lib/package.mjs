// Packages the extension as `npm run package` does (vsce, production bundles, .vscodeignore) into
// a file of the caller's choosing: npm start installs it, the packaging test inspects it.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './vscodeServer.mjs';

/** The vsce flags of `npm run package` (no repository field, images are packaged files). */
export const VSCE_FLAGS = ['--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links'];

/** Runs vsce package; returns `out`. quiet: without vsce's listing of the files. */
export function packageExtension(out, { quiet = false } = {}) {
  const vsce = join(repoRoot, 'node_modules/@vscode/vsce/vsce');
  execFileSync(process.execPath, [vsce, 'package', ...VSCE_FLAGS, '--out', out], { cwd: repoRoot, stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'] });
  return out;
}
