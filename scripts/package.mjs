// `npm run package`: builds speculate.vsix in the repository root (see scripts/lib/package.mjs).
import { join } from 'node:path';
import { packageExtension } from './lib/package.mjs';
import { repoRoot } from './lib/vscodeServer.mjs';

const out = packageExtension(join(repoRoot, process.argv[2] ?? 'speculate.vsix'));
console.log(`Packaged ${out}`);
