// Walking a workspace tree in a stable order, honouring .gitignore (and .ignore/.rgignore) and
// skipping .git and node_modules. Generic over where the entries come from, so the real workspace and the
// speculation overlay list files the same way.
import { IGNORE_FILE_NAMES, IgnoreStack, parseGitignore } from './gitignore';

export interface TreeEntry {
  name: string;
  type: 'file' | 'directory';
}

/** Where a walk reads from. Entries must already be placed inside the workspace (symlinks resolved or dropped). */
export interface TreeSource {
  /** Entries of a workspace-relative directory ('' = root), in any order. */
  entries(dir: string): Promise<TreeEntry[]>;
  /** Text of a workspace-relative file, undefined when it cannot be read. */
  readText(path: string): Promise<string | undefined>;
}

/** Directory names never walked into: version-control internals and installed dependencies. */
export const ALWAYS_SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export interface WalkOptions {
  /** Workspace-relative directory to walk below ('' = root). */
  start?: string;
  respectGitignore?: boolean;
  /** Deepest level of files to yield, counted from `start` (1 = its direct children). */
  maxDepth?: number;
  signal?: AbortSignal;
}

export function joinPath(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Orders workspace paths the way a sorted depth-first walk visits them (segment by segment), so
 * "a/b" comes before "a-b" whichever backend produced the list.
 */
export function comparePaths(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  const shared = Math.min(left.length, right.length);
  for (let i = 0; i < shared; i++) {
    const order = compareNames(left[i], right[i]);
    if (order !== 0) return order;
  }
  return left.length - right.length;
}

async function ancestorRules(source: TreeSource, start: string): Promise<IgnoreStack> {
  let stack = IgnoreStack.EMPTY;
  if (start === '') return stack;
  const segments = start.split('/');
  // The rules of the start directory itself are read by the walk; here only those above it.
  for (let depth = 0; depth < segments.length; depth++) {
    const dir = segments.slice(0, depth).join('/');
    for (const name of IGNORE_FILE_NAMES) {
      const text = await source.readText(joinPath(dir, name));
      if (text !== undefined) stack = stack.with(parseGitignore(text, dir, name));
    }
  }
  return stack;
}

/** Yields workspace-relative file paths below `start`, in comparePaths order. */
export async function* walkFiles(source: TreeSource, options: WalkOptions = {}): AsyncGenerator<string> {
  const start = options.start ?? '';
  const respectGitignore = options.respectGitignore ?? true;
  const maxDepth = options.maxDepth ?? Infinity;
  const rootStack = respectGitignore ? await ancestorRules(source, start) : IgnoreStack.EMPTY;

  async function* visit(dir: string, inherited: IgnoreStack, depth: number): AsyncGenerator<string> {
    options.signal?.throwIfAborted();
    const entries = (await source.entries(dir)).sort((a, b) => compareNames(a.name, b.name));
    let stack = inherited;
    if (respectGitignore) {
      for (const name of IGNORE_FILE_NAMES) {
        if (!entries.some((entry) => entry.name === name && entry.type === 'file')) continue;
        const text = await source.readText(joinPath(dir, name));
        if (text !== undefined) stack = stack.with(parseGitignore(text, dir, name));
      }
    }
    for (const entry of entries) {
      const path = joinPath(dir, entry.name);
      const isDirectory = entry.type === 'directory';
      if (isDirectory && ALWAYS_SKIPPED_DIRS.has(entry.name)) continue;
      if (respectGitignore && stack.isIgnored(path, isDirectory)) continue;
      if (isDirectory) {
        if (depth < maxDepth) yield* visit(path, stack, depth + 1);
      } else {
        yield path;
      }
    }
  }

  yield* visit(start, rootStack, 1);
}
