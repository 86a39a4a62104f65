// Glob patterns → regular expressions, shared by the glob tool, grep's file filter, .gitignore rules
// and the speculation overlay, so every place that matches paths agrees on what a pattern means.

export interface GlobSyntax {
  /** Allow `{a,b}` alternatives (globs do; .gitignore lines do not). */
  braces?: boolean;
}

const REGEX_SPECIALS = /[.*+?^${}()|[\]\\/]/g;

function escapeLiteral(text: string): string {
  return text.replace(REGEX_SPECIALS, '\\$&');
}

/** Index of the `}` closing the `{` at `open`, or -1; respects nesting and escapes. */
function findBraceEnd(pattern: string, open: number): number {
  let depth = 0;
  for (let i = open; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
    } else if (ch === '{') {
      depth++;
    } else if (ch === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** Splits the inside of a brace group on its top-level commas. */
function splitAlternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '\\') i++;
    else if (ch === '{') depth++;
    else if (ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/** Translates a `[...]` class starting at `open`; undefined when it is not closed (then `[` is literal). */
function translateClass(pattern: string, open: number): { source: string; end: number } | undefined {
  let i = open + 1;
  let negated = false;
  if (pattern[i] === '!' || pattern[i] === '^') {
    negated = true;
    i++;
  }
  let body = '';
  let first = true;
  for (; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === ']' && !first) {
      // A class never matches the path separator, whatever it says.
      return { source: `(?!/)[${negated ? '^' : ''}${body}]`, end: i };
    }
    first = false;
    if (ch === '\\' && i + 1 < pattern.length) {
      body += '\\' + pattern[++i];
    } else if (ch === '\\' || ch === '[' || ch === ']' || ch === '^') {
      body += '\\' + ch;
    } else {
      body += ch;
    }
  }
  return undefined;
}

function translate(pattern: string, syntax: GlobSyntax, atSegmentStart: boolean): string {
  let out = '';
  let segmentStart = atSegmentStart;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '*' && pattern[i + 1] === '*' && segmentStart && (i + 2 === pattern.length || pattern[i + 2] === '/')) {
      if (i + 2 === pattern.length) {
        out += '.*';
        i += 1;
      } else {
        // `**/` spans zero or more whole directories.
        out += '(?:.*/)?';
        i += 2;
      }
      segmentStart = true;
      continue;
    }
    segmentStart = false;
    if (ch === '*') {
      while (pattern[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (ch === '?') {
      out += '[^/]';
    } else if (ch === '[') {
      const cls = translateClass(pattern, i);
      if (cls) {
        out += cls.source;
        i = cls.end;
      } else {
        out += '\\[';
      }
    } else if (ch === '{' && syntax.braces) {
      const end = findBraceEnd(pattern, i);
      const alternatives = end > 0 ? splitAlternatives(pattern.slice(i + 1, end)) : [];
      if (alternatives.length > 1) {
        const startsSegment = i === 0 ? atSegmentStart : pattern[i - 1] === '/';
        out += `(?:${alternatives.map((alt) => translate(alt, syntax, startsSegment)).join('|')})`;
        i = end;
      } else {
        out += '\\{';
      }
    } else if (ch === '\\' && i + 1 < pattern.length) {
      out += escapeLiteral(pattern[++i]);
    } else {
      out += escapeLiteral(ch);
      segmentStart = ch === '/';
    }
  }
  return out;
}

/**
 * Compiles a glob to an anchored RegExp over POSIX paths. `*` and `?` stay within one path
 * segment, `**` as a whole segment spans any number of them, `[abc]`/`[!abc]` are classes, `{a,b}`
 * alternatives (when enabled). Dot files are matched like any other name.
 */
export function globToRegExp(pattern: string, syntax: GlobSyntax = { braces: true }): RegExp {
  return new RegExp(`^${translate(pattern, syntax, true)}$`);
}

/** True when the POSIX path matches the glob. */
export function matchGlob(pattern: string, path: string): boolean {
  return globToRegExp(pattern).test(path);
}

/** True when the text uses any glob syntax (otherwise it names one path literally). */
export function hasGlobMagic(pattern: string): boolean {
  return /[*?[{\\]/.test(pattern);
}

/**
 * Splits a pattern into the directory prefix that contains no glob syntax and the rest, so a walk
 * can start at `src/lib` for `src/lib/**\/*.ts` instead of at the root.
 */
export function literalPrefix(pattern: string): { prefix: string; rest: string } {
  const segments = pattern.split('/');
  const literal: string[] = [];
  while (segments.length > 1 && !hasGlobMagic(segments[0])) {
    literal.push(segments.shift() as string);
  }
  return { prefix: literal.join('/'), rest: segments.join('/') };
}

/**
 * Upper bound on how many path segments a match can have, or Infinity when `**` allows any depth;
 * lets a walk stop descending early.
 */
export function maxGlobDepth(pattern: string): number {
  if (pattern.includes('**')) return Infinity;
  return (pattern.match(/\//g)?.length ?? 0) + 1;
}
