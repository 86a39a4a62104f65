// Compiles the sandbox's helpers — the Landlock launcher (native/landlock-exec.c) and the namespace
// sandbox's keeper (native/sandbox-keeper.c) — into dist/native/ with the machine's gcc (or, for another architecture, Debian's cross gcc: gcc-aarch64-linux-gnu).
// Without gcc, or off Linux, it says so and the build goes on: the engine then reports the helper
// missing and falls back as it would without Landlock.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const COMPILERS = { x64: 'x86_64-linux-gnu-gcc', arm64: 'aarch64-linux-gnu-gcc' };
/** The Debian packages that bring each cross compiler and the static C library it links. */
const CROSS_PACKAGES = { x64: 'gcc-x86-64-linux-gnu libc6-dev-amd64-cross', arm64: 'gcc-aarch64-linux-gnu libc6-dev-arm64-cross' };
const NATIVE_COMPILER = { x64: ['gcc', 'cc'], arm64: ['gcc', 'cc'] };

function found(program) {
  return spawnSync(program, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** The helpers, each from native/<name>.c. */
const HELPERS = ['landlock-exec', 'sandbox-keeper'];

/**
 * Builds the helpers for `arch` (node's names: x64, arm64) into `outDir`; returns the Landlock
 * helper's path, or undefined (with a warning) when it cannot. `required`: throw instead (a platform package must
 * hold its helper). A helper left from an earlier build for another architecture is removed first.
 */
export function buildNative(outDir = 'dist/native', arch = process.arch, { required = false } = {}) {
  const out = join(outDir, 'landlock-exec');
  for (const name of HELPERS) rmSync(join(outDir, name), { force: true });
  if (process.platform !== 'linux') {
    if (required) throw new Error('build-native: the Landlock helper is built on Linux only');
    return undefined;
  }
  const candidates = arch === process.arch ? NATIVE_COMPILER[arch] ?? ['gcc', 'cc'] : [COMPILERS[arch]].filter(Boolean);
  const compiler = candidates.find(found);
  if (!compiler) {
    const install = arch === process.arch ? 'gcc libc6-dev (scripts/setup-vscode.sh installs them)' : CROSS_PACKAGES[arch] ?? `a C compiler for ${arch}`;
    const message = `build-native: no C compiler for ${arch} (${candidates.join(' or ') || 'none known'}); the Landlock sandbox's helper is not built. Install ${install}.`;
    if (required) throw new Error(message);
    console.warn(message);
    return undefined;
  }
  mkdirSync(outDir, { recursive: true });
  for (const name of HELPERS) execFileSync(compiler, ['-O2', '-Wall', '-Wextra', '-Werror', '-static-pie', '-s', '-o', join(outDir, name), `native/${name}.c`], { stdio: 'inherit' });
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arch = process.argv[2] ?? process.arch;
  const out = buildNative(process.argv[3] ?? 'dist/native', arch, { required: true });
  if (out) console.log(`Built ${out} (${arch})`);
}
