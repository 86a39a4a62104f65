// "Print your version" commands of interpreters, compilers and package managers. A version flag is
// read-only only for a program that no workspace file can redirect: not a toolchain proxy or
// package-manager launcher that picks what to run from workspace files, and not installed as a shim.
import { readSync, openSync, closeSync, realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { findProgram } from '../fs/programSearch';
import type { CommandRule } from './ruleTypes';
import { OK, refuse } from './verdict';

/**
 * Programs that choose what actually runs from files in the workspace, so even --version runs code
 * of the workspace's choosing (or downloads it).
 */
const REDIRECTED_BY_WORKSPACE: ReadonlyArray<[why: string, names: readonly string[]]> = [
  ['runs the file .yarnrc.yml / .yarnrc name in yarnPath', ['yarn', 'yarnpkg']],
  ['switches to the pnpm version package.json names (packageManager), downloading it', ['pnpm', 'pnpx']],
  ['runs the package manager package.json names (packageManager), which may be any download', ['corepack']],
  ['goes through rustup, which runs the toolchain rust-toolchain.toml names (path = … is any program)', ['cargo', 'rustc', 'rustdoc', 'rustup', 'rustfmt', 'cargo-clippy', 'clippy-driver', 'rust-analyzer']],
  ['downloads and runs the toolchain a go.mod or go.work toolchain line names', ['go', 'gofmt']],
  ['runs packages, from the workspace or the registry', ['npx', 'bunx']],
  ['takes JVM options and agents from .mvn/jvm.config or gradle.properties', ['mvn', 'mvnw', 'gradle', 'gradlew']],
  ['loads the Gemfile and .bundle/config of the workspace', ['bundle', 'bundler', 'rake']],
  ['downloads and runs the version .bazelversion names', ['bazel', 'bazelisk']],
  ['runs the SDK global.json names', ['dotnet']],
  ['reads its configuration (bunfig.toml) from the workspace', ['bun']],
];

export const REDIRECTED = new Map<string, string>();
for (const [why, names] of REDIRECTED_BY_WORKSPACE) for (const name of names) REDIRECTED.set(name, why);

/** The flags each program treats as "print the version and exit" (python -v would start a REPL). */
export const VERSION_FLAGS: Readonly<Record<string, readonly string[]>> = {
  node: ['--version', '-v'],
  deno: ['--version', '-V'],
  python: ['--version', '-V'],
  python3: ['--version', '-V'],
  ruby: ['--version'],
  perl: ['--version', '-v'],
  php: ['--version', '-v'],
  java: ['--version', '-version'],
  javac: ['--version', '-version'],
  tsc: ['--version', '-v'],
  gcc: ['--version'],
  'g++': ['--version'],
  clang: ['--version'],
  make: ['--version', '-v'],
  npm: ['--version', '-v'],
  pip: ['--version', '-V'],
  pip3: ['--version', '-V'],
};

/**
 * Folders and programs of version managers: a program found there is a shim that picks the real one
 * from .tool-versions, .nvmrc, .node-version, .python-version, .ruby-version, mise.toml, package.json
 * (volta), … of the workspace, some of which may name a path.
 */
const SHIM_PATH = /\/(?:shims|\.volta|\.asdf|\.proto|\.rbenv|\.pyenv|\.nodenv|\.goenv|\.jenv|\.plenv|\.phpenv|\.sdkman|mise|rtx|\.cargo\/bin)(?:\/|$)/;
const SHIM_PROGRAM = /\b(?:asdf|mise|rtx|volta|proto|pyenv|rbenv|nodenv|goenv|jenv|plenv|phpenv|corepack|rustup|direnv|fnm|nvm)\b/;

export interface ProgramLookup {
  /** Safe PATH value (see findProgram) and the folders no program may come from. */
  pathValue: string;
  excluded: readonly string[];
}

function head(file: string, bytes: number): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const read = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, read).toString('latin1');
  } finally {
    closeSync(fd);
  }
}

/** Why the program `name` on that PATH could be redirected by workspace files, or undefined. */
export function shimReason(name: string, lookup: ProgramLookup): string | undefined {
  const found = findProgram(name, { pathValue: lookup.pathValue, excluded: lookup.excluded });
  if (!found) return undefined; // nothing runs: bash reports "command not found"
  let real: string;
  try {
    real = realpathSync.native(found);
    if (!statSync(real).isFile()) return `${found} is not a program file`;
  } catch {
    return `${found} cannot be checked`;
  }
  if (SHIM_PATH.test(found) || SHIM_PATH.test(real)) return `${found} is a version manager's shim`;
  // A link to another program's binary (volta-shim, mise, proto) dispatches on its name.
  const base = path.basename(real);
  if (!base.includes(name.replace(/[0-9.]+$/, ''))) return `${found} is ${real}, a launcher for other programs`;
  let start: string;
  try {
    start = head(real, 4096);
  } catch {
    return `${found} cannot be read`;
  }
  // A script may hand over to a version manager; a native program (ELF, Mach-O) runs itself.
  if (start.startsWith('#!') && SHIM_PROGRAM.test(start)) return `${found} hands over to a version manager`;
  return undefined;
}

/**
 * The rule for VERSION_FLAGS programs: exactly one argument, a version flag, and the program the
 * command would find on the read-only PATH is no shim.
 */
export const versionCommand: CommandRule = (args, context, name) => {
  const flags = VERSION_FLAGS[name] ?? ['--version'];
  const flag = args.length === 1 && args[0].kind === 'literal' ? args[0].value : undefined;
  if (flag === undefined || !flags.includes(flag)) return refuse('command', `${name} runs code; only ${name} ${flags.join(' / ')} is read-only`);
  const shim = shimReason(name, { pathValue: context.workspace.searchPath, excluded: [context.workspace.root] });
  return shim ? refuse('command', `${name} ${flag} may run a program the workspace chooses: ${shim}`) : OK;
};

/** The refusal for REDIRECTED programs, whatever their arguments. */
export const redirectedCommand: CommandRule = (_args, _context, name) =>
  refuse('command', `${name} ${REDIRECTED.get(name) ?? 'can be redirected by workspace files'}, so not even its version is read-only`);
