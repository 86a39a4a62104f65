// Finds the programs the engine starts itself (ripgrep, git, bash's helpers) on a PATH that no
// workspace can extend: only absolute entries that resolve outside the workspace, each resolved.
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';

/** Where programs are looked for when no entry of the given PATH survives. */
export const SYSTEM_PATH_ENTRIES: readonly string[] = ['/usr/local/bin', '/usr/bin', '/bin'];

function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  return candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * The entries of a PATH value a program may be looked up in: absolute, existing, outside every
 * root in `excluded` (compared after resolving symlinks, so a link into the workspace counts as the
 * workspace), each given in its resolved form (a symlink swapped later cannot redirect the lookup),
 * without duplicates. Empty and relative entries go: bash and execvp look those up from the
 * working directory, which is the workspace.
 */
export function safePathEntries(value: string | undefined, excluded: readonly string[]): string[] {
  const kept: string[] = [];
  for (const entry of (value ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(entry)) continue;
    const absolute = path.resolve(entry);
    if (excluded.some((root) => isWithin(root, absolute))) continue;
    let real: string;
    try {
      // A file in PATH is harmless (lookups in it fail); only existence matters here.
      real = realpathSync.native(absolute);
    } catch {
      continue;
    }
    if (excluded.some((root) => isWithin(root, real)) || kept.includes(real)) continue;
    kept.push(real);
  }
  return kept;
}

/** safePathEntries of `value`, or of the system folders when none survives (never an empty PATH). */
export function safeSearchPath(value: string | undefined, excluded: readonly string[]): string[] {
  const kept = safePathEntries(value, excluded);
  return kept.length > 0 ? kept : safePathEntries(SYSTEM_PATH_ENTRIES.join(path.delimiter), excluded);
}

export interface FindProgramOptions {
  /** The PATH to search (default: this process's PATH); unsafe entries are skipped. */
  pathValue?: string;
  /** Folders no program may come from: the workspace (and any other folder the model can write). */
  excluded: readonly string[];
}

/**
 * The absolute path of the executable `name` on the safe part of the PATH (in its resolved folder,
 * under its own name, so multi-call programs still see it), or undefined. The file itself must
 * resolve outside the excluded folders too. A name with a slash is refused: it would be found
 * relative to the working directory.
 */
export function findProgram(name: string, options: FindProgramOptions): string | undefined {
  if (name === '' || name.includes('/') || name.includes(path.sep)) return undefined;
  for (const dir of safeSearchPath(options.pathValue ?? process.env.PATH, options.excluded)) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      const real = realpathSync.native(candidate);
      if (!statSync(real).isFile() || options.excluded.some((root) => isWithin(root, real))) continue;
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}
