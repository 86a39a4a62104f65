// .gitignore rules: parsing one file and deciding, for a path, what the stack of files from the
// root down says. Covers what projects actually use: `!` negation, dir-only `/` suffix, anchored
// patterns (a `/` at the start or in the middle), `**`, `#` comments and `\` escapes.
import { globToRegExp } from './globMatch';

export interface GitignoreRule {
  /** Workspace-relative directory holding the .gitignore ('' for the root). */
  base: string;
  regex: RegExp;
  negate: boolean;
  dirOnly: boolean;
  /** The line as written, for diagnostics. */
  source: string;
}

/** Trailing spaces are dropped unless escaped with a backslash (git's rule). */
function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line[end - 1] === ' ' && !(end > 1 && line[end - 2] === '\\')) end--;
  return line.slice(0, end);
}

/** Parses the text of one .gitignore located in workspace-relative directory `base`. */
export function parseGitignore(content: string, base: string): GitignoreRule[] {
  const rules: GitignoreRule[] = [];
  for (const rawLine of content.split(/\r?\n/)) {
    let line = trimTrailingSpaces(rawLine);
    if (line === '' || line.startsWith('#')) continue;
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith('\\!') || line.startsWith('\\#')) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith('/')) {
      dirOnly = true;
      line = line.replace(/\/+$/, '');
    }
    if (line === '') continue;
    // A slash anywhere but the end anchors the pattern to the .gitignore's directory.
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    const pattern = anchored || line.startsWith('**') ? line : `**/${line}`;
    rules.push({ base, regex: globToRegExp(pattern, { braces: false }), negate, dirOnly, source: rawLine });
  }
  return rules;
}

/** The rules in force in one directory: those of every .gitignore from the root down to it. */
export class IgnoreStack {
  static readonly EMPTY = new IgnoreStack([]);

  private constructor(private readonly rules: readonly GitignoreRule[]) {}

  /** A stack with the rules of a deeper .gitignore added (they take precedence). */
  with(rules: readonly GitignoreRule[]): IgnoreStack {
    return rules.length === 0 ? this : new IgnoreStack([...this.rules, ...rules]);
  }

  /**
   * Whether a workspace-relative path is ignored by these rules. The last matching rule wins;
   * callers must not descend into ignored directories (git cannot re-include below them either).
   */
  isIgnored(path: string, isDirectory: boolean): boolean {
    let ignored = false;
    for (const rule of this.rules) {
      if (rule.dirOnly && !isDirectory) continue;
      let relative: string;
      if (rule.base === '') {
        relative = path;
      } else if (path.startsWith(rule.base + '/')) {
        relative = path.slice(rule.base.length + 1);
      } else {
        continue;
      }
      if (rule.regex.test(relative)) ignored = !rule.negate;
    }
    return ignored;
  }
}
