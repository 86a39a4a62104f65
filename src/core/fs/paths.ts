// Placing a tool's path argument inside the workspace. This is the isolation line for every tool
// and for the speculation overlay: lexical `..`, absolute paths and symlinks are all resolved
// before a path is accepted, and anything that ends up outside the workspace is refused.
import { lstatSync, realpathSync, type Stats } from 'node:fs';
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

/** Where a path lands in the workspace, with what the walk that placed it found on disk. */
export interface Placement {
  /** Workspace-relative POSIX path, every existing component followed through symlinks ('' = root). */
  relative: string;
  /** lstat of the placed path itself (never a symlink: those are followed); undefined when nothing is there. */
  target: Stats | undefined;
  /**
   * How many leading components of `relative` exist ('' counts 0); the ones before the last of
   * them are folders, or the walk could not have gone through them, and the ones after it do not exist.
   */
  foundDepth: number;
  /** What the last existing component is: its lstat, or just 'directory' when that is all the walk needed to learn. */
  found: Stats | 'directory';
}

/** A file system that can place paths as its own resolve() does, with what it saw on the way. */
export interface Placer {
  place(requested: string): Promise<Placement>;
}

type Lstat = Stats | 'ENOENT' | 'ENOTDIR';

// The walk's calls are made in line: an lstat or a realpath(3) of a workspace path costs a few µs,
// each hand-off to the thread pool more (issue 28's profile), and every tool call places its path.

function lstatOrCode(target: string): Lstat {
  try {
    return lstatSync(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return code;
    throw error;
  }
}

function realpathOrError(target: string): string | Error {
  try {
    return realpathSync.native(target);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Resolves `requested` (absolute, or relative to the workspace) to a workspace-relative POSIX path
 * whose every existing component has been followed through symlinks, and says what is there.
 * `realRoot` must already be the realpath of the workspace; `aliases` are other absolute spellings
 * of the same root (the path the user opened before symlink resolution) that absolute arguments may use.
 */
export async function placeInsideWorkspace(realRoot: string, requested: string, aliases: readonly string[] = []): Promise<Placement> {
  if (typeof requested !== 'string') throw new PathOutsideWorkspaceError(String(requested), 'is not a path');
  if (requested.includes('\0')) throw new PathOutsideWorkspaceError(requested.replace(/\0/g, '\\0'), 'contains a NUL byte');
  // Used exactly as given: "a.txt " names a different file than "a.txt" (never trimmed).
  let absolute = requested === '' || requested === '.' ? realRoot : path.isAbsolute(requested) ? path.resolve(requested) : path.resolve(realRoot, requested);
  for (const alias of aliases) {
    const normalisedAlias = path.resolve(alias);
    if (normalisedAlias !== realRoot && isWithin(normalisedAlias, absolute)) {
      absolute = path.join(realRoot, path.relative(normalisedAlias, absolute));
      break;
    }
  }
  if (!isWithin(realRoot, absolute)) throw new PathOutsideWorkspaceError(requested);

  // Walk up to the deepest component that exists, resolve it through symlinks, re-attach the
  // rest. Each step asks for the component's lstat and its folder's realpath at once (one round
  // trip): a component that is no symlink resolves to its resolved folder plus its name. A
  // dangling symlink is refused: a write through it would land wherever it points.
  const missing: string[] = [];
  let current = absolute;
  let resolvedExisting: string;
  let found: Stats | 'directory';
  for (;;) {
    if (current === realRoot) {
      resolvedExisting = realRoot;
      found = lstatSync(realRoot);
      break;
    }
    const folder = path.dirname(current);
    const info = lstatOrCode(current);
    const realFolder = folder === realRoot ? realRoot : realpathOrError(folder);
    if (typeof info !== 'string') {
      if (info.isSymbolicLink()) {
        const real = realpathOrError(current);
        if (real instanceof Error) throw new PathOutsideWorkspaceError(requested, 'is a symlink whose target does not exist');
        if (!isWithin(realRoot, real)) throw new PathOutsideWorkspaceError(requested, 'leads outside the workspace through a symlink');
        resolvedExisting = real;
        // A symlink's own lstat says nothing of what it leads to: ask again at the end of the link.
        found = lstatSync(real);
      } else {
        if (realFolder instanceof Error) throw realFolder;
        resolvedExisting = path.join(realFolder, path.basename(current));
        found = info;
      }
      break;
    }
    missing.unshift(path.basename(current));
    // Not there, but its folder is (ENOENT, not ENOTDIR): the folder is a folder, and the walk ends there.
    if (info === 'ENOENT' && typeof realFolder === 'string') {
      resolvedExisting = realFolder;
      found = 'directory';
      break;
    }
    current = folder;
  }
  const resolved = path.join(resolvedExisting, ...missing);
  if (!isWithin(realRoot, resolved)) throw new PathOutsideWorkspaceError(requested, 'leads outside the workspace through a symlink');
  const relative = toWorkspaceRelative(realRoot, resolved);
  const depth = relative === '' ? 0 : relative.split('/').length;
  return { relative, target: missing.length === 0 && found !== 'directory' ? found : undefined, foundDepth: depth - missing.length, found };
}

/** The workspace-relative path `requested` resolves to (see placeInsideWorkspace). */
export async function resolveInsideWorkspace(realRoot: string, requested: string, aliases: readonly string[] = []): Promise<string> {
  if (requested === '' || requested === '.') return '';
  return (await placeInsideWorkspace(realRoot, requested, aliases)).relative;
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

/** A workspace-relative POSIX path as the engine's own state files hold it: no '..', no absolute or empty parts. */
export function isRelativePosix(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !value.startsWith('/') && !value.includes('\0') &&
    !value.split('/').some((part) => part === '..' || part === '' || part === '.');
}
