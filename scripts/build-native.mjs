// Compiles the Landlock sandbox's helper (native/landlock-exec.c) into dist/native/landlock-exec
// with the machine's gcc (or, for another architecture, Debian's cross gcc: gcc-aarch64-linux-gnu).
// Without gcc, or off Linux, it says so and the build goes on: the engine then reports the helper
// missing and falls back as it would without Landlock.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const COMPILERS = { x64: 'gcc', arm64: 'aarch64-linux-gnu-gcc' };
const NATIVE_COMPILER = { x64: ['gcc', 'cc'], arm64: ['gcc', 'cc'] };

function found(program) {
  return spawnSync(program, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Builds the helper for `arch` (node's names: x64, arm64) into `outDir`; returns its path, or undefined (with a warning) when it cannot. */
export function buildNative(outDir = 'dist/native', arch = process.arch) {
  if (process.platform !== 'linux') return undefined;
  const candidates = arch === process.arch ? NATIVE_COMPILER[arch] ?? ['gcc', 'cc'] : [COMPILERS[arch]].filter(Boolean);
  const compiler = candidates.find(found);
  if (!compiler) {
    console.warn(`build-native: no C compiler for ${arch} (${candidates.join(' or ')}); the Landlock sandbox's helper is not built. Install gcc (scripts/setup-vscode.sh does).`);
    return undefined;
  }
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, 'landlock-exec');
  execFileSync(compiler, ['-O2', '-Wall', '-Wextra', '-Werror', '-static-pie', '-s', '-o', out, 'native/landlock-exec.c'], { stdio: 'inherit' });
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arch = process.argv[2] ?? process.arch;
  const out = buildNative(process.argv[3] ?? 'dist/native', arch);
  if (out) console.log(`Built ${out} (${arch})`);
}
