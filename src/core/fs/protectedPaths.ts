// Protected paths (TOOLS.md): files that make git, VS Code or other tools run programs, or that
// hold secrets. A write to one is a boundary in speculation and asks in the main chat in every
// approval mode but yolo. The list is the setting `speculate.protectedPaths`; these are its default.
import * as path from 'node:path';
import { globToRegExp } from './globMatch';
import { EngineFault } from './workspaceFs';

/** The default of `speculate.protectedPaths` (keep package.json's default equal to it). */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = [
  '.git',
  '.git/**',
  '.vscode/*.json',
  '*.code-workspace',
  '.env',
  '.env.*',
  '.envrc',
  '.npmrc',
  '.yarnrc*',
  '.pnpmfile.cjs',
  'rust-toolchain*',
  '.tool-versions',
  '.github/workflows/**',
];

/** Why each default matters, in words for the approval and the boundary. */
const WHY: Record<string, string> = {
  '.git': 'git follows it to the repository, its hooks and its config',
  '.git/**': 'git runs hooks and programs named in its config from here',
  '.vscode/*.json': 'VS Code runs tasks and launch configurations and applies settings from it',
  '*.code-workspace': 'VS Code applies its settings, tasks and launch configurations',
  '.env': 'it holds secrets and environment that tools load',
  '.env.*': 'it holds secrets and environment that tools load',
  '.envrc': 'direnv runs it when you enter the folder',
  '.npmrc': 'npm takes registries, tokens and script settings from it',
  '.yarnrc*': 'yarn runs the program its yarnPath names',
  '.pnpmfile.cjs': 'pnpm runs it on every install',
  'rust-toolchain*': 'rustup runs the toolchain it names',
  '.tool-versions': 'asdf and mise choose the programs to run from it',
  '.github/workflows/**': 'GitHub runs these workflows with the repository’s secrets',
};

export interface ProtectedMatch {
  /** The workspace-relative path that matched. */
  path: string;
  /** The glob of the setting it matched. */
  pattern: string;
  /** Why the path is protected, for the user. */
  why: string;
}

interface CompiledPattern {
  pattern: string;
  regex: RegExp;
}

function compile(pattern: string): CompiledPattern | undefined {
  if (typeof pattern !== 'string' || pattern === '') return undefined;
  // "/x" is anchored at the workspace root; any other pattern matches at any depth (nested repos,
  // sub-projects with their own .env). Case never matters: macOS and Windows ignore it on disk.
  const anchored = pattern.startsWith('/');
  const body = anchored ? pattern.slice(1) : `**/${pattern}`;
  try {
    return { pattern, regex: new RegExp(globToRegExp(body).source, 'i') };
  } catch {
    return undefined;
  }
}

/** Lexically normalised workspace-relative form of a requested spelling, or undefined when it leaves the root. */
function lexical(root: string, requested: string): string | undefined {
  const absolute = path.isAbsolute(requested) ? path.resolve(requested) : path.resolve(root, requested);
  const relative = path.relative(root, absolute);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  return relative.split(path.sep).join('/');
}

/**
 * The protected-path matcher of one workspace session. Mutable so a changed setting applies to
 * the next call without rebuilding the tools.
 */
export class ProtectedPaths {
  private compiled: CompiledPattern[] = [];

  constructor(patterns: readonly string[] = DEFAULT_PROTECTED_PATHS) {
    this.update(patterns);
  }

  get patterns(): string[] {
    return this.compiled.map((c) => c.pattern);
  }

  update(patterns: readonly string[]): void {
    this.compiled = patterns.map(compile).filter((c): c is CompiledPattern => c !== undefined);
  }

  /** The first pattern a workspace-relative path matches, or undefined. */
  match(relative: string): ProtectedMatch | undefined {
    if (relative === '') return undefined;
    for (const { pattern, regex } of this.compiled) {
      if (regex.test(relative)) return { path: relative, pattern, why: WHY[pattern] ?? `it matches "${pattern}" in speculate.protectedPaths` };
    }
    return undefined;
  }

  /**
   * Checks a write both where it lands (the resolved path) and as it was spelled: a `.vscode` that
   * is a symlink to another folder still makes `.vscode/tasks.json` the file VS Code reads.
   */
  matchWrite(root: string, requested: string, resolved: string): ProtectedMatch | undefined {
    const spelled = lexical(root, requested);
    return this.match(resolved) ?? (spelled !== undefined ? this.match(spelled) : undefined);
  }
}

const DEFAULTS = new ProtectedPaths();

/** The matcher to use: the session's, or the defaults of TOOLS.md when none was given (fail closed). */
export function protectedPathsOr(given: ProtectedPaths | undefined): ProtectedPaths {
  return given ?? DEFAULTS;
}

/** Sentence for a refusal or an approval: which file, and why it is protected. */
export function describeProtected(match: ProtectedMatch): string {
  return `${match.path} is a protected file (${match.why})`;
}

/** A write into a protected path where nobody can approve it (speculation): a boundary, never a tool result. */
export class ProtectedPathError extends EngineFault {
  constructor(readonly match: ProtectedMatch) {
    super(`${describeProtected(match)}; writing it needs your approval.`);
    this.name = 'ProtectedPathError';
  }
}
