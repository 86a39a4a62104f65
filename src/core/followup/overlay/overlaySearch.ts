// glob and search over the overlay's merged view: the real workspace's answer minus the files the
// speculation touched, plus matches in its own files, reached as a walk of the real workspace would
// (never into .git or node_modules, past .gitignore rules when asked).
import * as path from 'node:path';
import { IgnoreStack, parseGitignore } from '../../fs/gitignore';
import { globToRegExp, literalPrefix } from '../../fs/globMatch';
import { compareMatches, compileSearchPattern, isBinary, matchLines, MAX_SEARCH_FILE_BYTES, searchGlobFilter } from '../../fs/textSearch';
import { ALWAYS_SKIPPED_DIRS, comparePaths, joinPath } from '../../fs/treeWalk';
import { FileNotFoundError, PathOutsideWorkspaceError, type GlobOptions, type SearchMatch, type SearchOptions } from '../../fs/workspaceFs';
import { isBelow, type WrittenEntry } from './entries';
import { ancestorsOf, type MergedView } from './mergedView';

const DEFAULT_GLOB_LIMIT = 100_000;
const DEFAULT_SEARCH_LIMIT = 10_000;

export async function globMerged(view: MergedView, pattern: string, options: GlobOptions = {}): Promise<string[]> {
  const { base } = view;
  const cwd = await base.resolve(options.cwd ?? '');
  const cwdInfo = await view.statMerged(cwd);
  if (!cwdInfo) throw new FileNotFoundError(cwd || '.');
  if (cwdInfo.type !== 'directory') throw new Error(`${cwd} is a file, not a directory to search in.`);
  const limit = options.limit ?? DEFAULT_GLOB_LIMIT;
  const respectGitignore = options.respectGitignore ?? true;
  const normalised = relativePattern(view.root, pattern);
  if (normalised === '') return [];

  const found = new Set<string>();
  if (await view.baseHas(cwd, 'directory')) {
    // Removing touched files can only shrink the base's answer by that many.
    const fromBase = await base.glob(pattern, { ...options, cwd, limit: limit + view.entries.size });
    for (const file of fromBase) if (view.baseShowsFile(file)) found.add(file);
    await view.observeAll(found);
  }
  const { prefix, rest } = literalPrefix(normalised);
  const start = prefix === '' ? cwd : await base.resolve(joinPath(cwd, prefix));
  const regex = globToRegExp(rest);
  const startPrefix = start === '' ? '' : `${start}/`;
  for (const file of view.writtenPaths()) {
    if (!isBelow(start, file) || !regex.test(file.slice(startPrefix.length))) continue;
    if (await walkReaches(view, file, start, respectGitignore)) found.add(file);
  }
  return [...found].sort(comparePaths).slice(0, limit);
}

/** The base's matches minus files the overlay touched, plus matches in the overlay's own files. */
export async function searchMerged(view: MergedView, pattern: string, options: SearchOptions = {}): Promise<SearchMatch[]> {
  const { base } = view;
  const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
  const regex = compileSearchPattern(pattern);
  const start = await base.resolve(options.path ?? '');
  const startInfo = await view.statMerged(start);
  if (!startInfo) throw new FileNotFoundError(start || '.');
  const isDirectory = startInfo.type === 'directory';

  const results: SearchMatch[] = [];
  if (await view.baseHas(start, startInfo.type)) {
    // A touched file's base matches are dropped; ask for more when that may have cut the answer short.
    for (let asked = limit; ; asked *= 4) {
      const fromBase = await base.search(pattern, { ...options, path: start, limit: asked });
      const kept = fromBase.filter((match) => view.baseShowsFile(match.path));
      if (fromBase.length < asked || kept.length === fromBase.length || kept.length >= limit || asked >= 1_000_000) {
        results.push(...kept);
        await view.observeAll(kept.map((match) => match.path));
        break;
      }
    }
  }
  const wanted = searchGlobFilter(options.glob, isDirectory ? start : '');
  for (const file of view.writtenPaths()) {
    const inScope = isDirectory ? isBelow(start, file) && (await walkReaches(view, file, start, true)) : file === start;
    if (!inScope || !wanted(file)) continue;
    options.signal?.throwIfAborted();
    const entry = view.entries.get(file) as WrittenEntry;
    if (entry.size > MAX_SEARCH_FILE_BYTES) continue;
    const data = await view.readBlob(file, entry);
    if (isBinary(data)) continue;
    results.push(...matchLines(file, Buffer.from(data).toString('utf8'), regex, limit));
  }
  return results.sort(compareMatches).slice(0, limit);
}

/** A glob pattern relative to the workspace (absolute ones must point inside it). */
function relativePattern(root: string, pattern: string): string {
  let text = pattern;
  if (path.isAbsolute(text)) {
    if (text !== root && !text.startsWith(`${root}/`)) throw new PathOutsideWorkspaceError(pattern, 'is an absolute pattern outside the workspace');
    text = text.slice(root.length).replace(/^\/+/, '');
  }
  text = text.replace(/^(\.\/)+/, '');
  if (text.split('/').includes('..')) throw new PathOutsideWorkspaceError(pattern, 'uses ".." to leave the searched folder');
  return text;
}

/**
 * Whether a walk from `start` (the one glob and search use on the real workspace) would reach
 * this overlay file: never into .git or node_modules, and past .gitignore rules when asked.
 */
async function walkReaches(view: MergedView, file: string, start: string, respectGitignore: boolean): Promise<boolean> {
  const below = file.slice(start === '' ? 0 : start.length + 1).split('/');
  if (below.slice(0, -1).some((name) => ALWAYS_SKIPPED_DIRS.has(name))) return false;
  if (!respectGitignore) return true;
  let stack = IgnoreStack.EMPTY;
  const dirs = ['', ...ancestorsOf(file)];
  for (const [index, dir] of dirs.entries()) {
    if (isBelow(start, dir) && stack.isIgnored(dir, true)) return false;
    const text = await gitignoreText(view, joinPath(dir, '.gitignore'));
    if (text !== undefined) stack = stack.with(parseGitignore(text, dir));
    if (index === dirs.length - 1) return !stack.isIgnored(file, false);
  }
  return true;
}

async function gitignoreText(view: MergedView, file: string): Promise<string | undefined> {
  try {
    const info = await view.statMerged(file);
    return info?.type === 'file' ? Buffer.from(await view.readMerged(file)).toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}
