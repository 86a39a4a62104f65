// The pieces of a content search that do not depend on how files are read: compiling the pattern,
// matching lines, filtering by a glob, ordering and trimming results. Both search backends (ripgrep
// and plain JavaScript) and the speculation overlay build on these so their results agree.
import type { SearchMatch } from './workspaceFs';
import { globToRegExp } from './globMatch';
import { comparePaths } from './treeWalk';

/** Files larger than this are not searched (generated bundles, data dumps). */
export const MAX_SEARCH_FILE_BYTES = 1024 * 1024;
/** A matched line is cut to this many characters so one minified line cannot flood a result. */
export const MAX_MATCH_LINE_CHARS = 500;

/** The search pattern is not a valid regular expression. */
export class SearchPatternError extends Error {
  constructor(readonly pattern: string, detail: string) {
    super(`Invalid search pattern "${pattern}": ${detail}. Use a regular expression (escape special characters such as ( [ . with a backslash).`);
    this.name = 'SearchPatternError';
  }
}

export function compileSearchPattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (error) {
    throw new SearchPatternError(pattern, (error as Error).message.replace(/^Invalid regular expression: /, ''));
  }
}

/** A NUL byte anywhere marks a file as binary (what ripgrep reports as binary_offset). */
export function isBinary(data: Uint8Array): boolean {
  return data.includes(0);
}

export function clipLine(text: string): string {
  return text.length > MAX_MATCH_LINE_CHARS ? `${text.slice(0, MAX_MATCH_LINE_CHARS)}…` : text;
}

/** Matching lines of one file's text, at most `limit`. */
export function matchLines(path: string, text: string, regex: RegExp, limit: number): SearchMatch[] {
  const matches: SearchMatch[] = [];
  // Most files do not match at all; one pass over the whole text rules them out cheaply.
  if (!couldMatch(text, regex)) return matches;
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  for (let index = 0; index < lines.length && matches.length < limit; index++) {
    const line = lines[index].endsWith('\r') ? lines[index].slice(0, -1) : lines[index];
    if (regex.test(line)) matches.push({ path, line: index + 1, text: clipLine(line) });
  }
  return matches;
}

const wholeTextForms = new WeakMap<RegExp, RegExp | null>();

/**
 * False only when no line can match: the pattern is tried once on the whole text in multiline
 * mode. Patterns whose verdict could change when they see past a line end (lookbehind, negative
 * lookahead, \r) and CRLF texts skip this shortcut.
 */
function couldMatch(text: string, regex: RegExp): boolean {
  let whole = wholeTextForms.get(regex);
  if (whole === undefined) {
    whole = /\(\?<|\(\?!|\\r/.test(regex.source) ? null : new RegExp(regex.source, regex.flags.includes('m') ? regex.flags : `${regex.flags}m`);
    wholeTextForms.set(regex, whole);
  }
  if (whole === null || text.includes('\r')) return true;
  whole.lastIndex = 0;
  return whole.test(text);
}

export function compareMatches(a: SearchMatch, b: SearchMatch): number {
  return comparePaths(a.path, b.path) || a.line - b.line;
}

/**
 * The file filter of a search: a glob without `/` matches the file name at any depth (like
 * `rg -g '*.ts'`); one with `/` matches the workspace-relative path or the path relative to the
 * searched directory.
 */
export function searchGlobFilter(glob: string | undefined, searchRoot: string): (path: string) => boolean {
  if (glob === undefined || glob === '') return () => true;
  // Used as given (no trimming): " *.ts" is a different pattern from "*.ts".
  const relative = glob.replace(/^\.\//, '');
  const regex = globToRegExp(relative);
  if (!relative.includes('/')) return (path) => regex.test(path.slice(path.lastIndexOf('/') + 1));
  const prefix = searchRoot === '' ? '' : `${searchRoot}/`;
  return (path) => regex.test(path) || (prefix !== '' && path.startsWith(prefix) && regex.test(path.slice(prefix.length)));
}
