// Placing a tool's path argument inside the workspace. This is the isolation line for every tool
// and for the speculation overlay: lexical `..`, absolute paths and symlinks are all resolved
// before a path is accepted, and anything that ends up outside the workspace is refused.
import { lstat, realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { PathOutsideWorkspaceError, UnsafeNameError } from './workspaceFs';

/** Converts an OS path below root into the workspace-relative POSIX form ('' = root). */
export function toWorkspaceRelative(root: string, absolute: string): string {
  const relative = path.relative(root, absolute);
  return relative.split(path.sep).join('/');
}

/** True when `candidate` is `root` or below it (both absolute, normalised). */
export function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return candidate.startsWith(prefix);
}

async function lstatOrUndefined(target: string) {
  try {
    return await lstat(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Resolves `requested` (absolute, or relative to the workspace) to a workspace-relative POSIX path
 * whose every existing component has been followed through symlinks. `realRoot` must already be
 * the realpath of the workspace; `aliases` are other absolute spellings of the same root (the path
 * the user opened before symlink resolution) that absolute arguments may use.
 */
export async function resolveInsideWorkspace(realRoot: string, requested: string, aliases: readonly string[] = []): Promise<string> {
  if (typeof requested !== 'string') throw new PathOutsideWorkspaceError(String(requested), 'is not a path');
  if (requested.includes('\0')) throw new PathOutsideWorkspaceError(requested.replace(/\0/g, '\\0'), 'contains a NUL byte');
  // Used exactly as given: "a.txt " names a different file than "a.txt" (never trimmed).
  if (requested === '' || requested === '.') return '';

  let absolute = path.isAbsolute(requested) ? path.resolve(requested) : path.resolve(realRoot, requested);
  for (const alias of aliases) {
    const normalisedAlias = path.resolve(alias);
    if (normalisedAlias !== realRoot && isWithin(normalisedAlias, absolute)) {
      absolute = path.join(realRoot, path.relative(normalisedAlias, absolute));
      break;
    }
  }
  if (!isWithin(realRoot, absolute)) throw new PathOutsideWorkspaceError(requested);

  // Walk up to the deepest component that exists, resolve it through symlinks, re-attach the
  // rest. A dangling symlink is refused: a write through it would land wherever it points.
  const missing: string[] = [];
  let existing = absolute;
  for (;;) {
    const info = await lstatOrUndefined(existing);
    if (info) {
      if (info.isSymbolicLink()) {
        try {
          await realpath(existing);
        } catch {
          throw new PathOutsideWorkspaceError(requested, 'is a symlink whose target does not exist');
        }
      }
      break;
    }
    if (existing === realRoot) break;
    missing.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  const resolved = path.join(await realpath(existing), ...missing);
  if (!isWithin(realRoot, resolved)) throw new PathOutsideWorkspaceError(requested, 'leads outside the workspace through a symlink');
  return toWorkspaceRelative(realRoot, resolved);
}

/** Joins a workspace-relative POSIX path back onto the root. */
export function toAbsolute(realRoot: string, relative: string): string {
  return relative === '' ? realRoot : path.join(realRoot, ...relative.split('/'));
}

/**
 * Why a file or folder name should not be created from a model's path argument (leading or
 * trailing whitespace, control characters): such a name is almost always a typo for another file,
 * and is invisible in most views. Undefined when the name is fine. Existing names are used as they are.
 */
export function unsafeNewName(name: string): string | undefined {
  if (name !== name.trim()) return 'begins or ends with whitespace';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character (such as a newline or tab)';
  return undefined;
}

/** Refuses to create the components of `relative` from index `firstNew` on when a name is unsafe. */
export function assertCreatableNames(relative: string, firstNew: number): void {
  const parts = relative.split('/');
  for (let index = Math.max(0, firstNew); index < parts.length; index++) {
    const why = unsafeNewName(parts[index]);
    if (why) throw new UnsafeNameError(relative, parts.slice(0, index + 1).join('/'), why);
  }
}
