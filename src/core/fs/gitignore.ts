// .gitignore rules: parsing one file and deciding, for a path, what the stack of files from the
// root down says. Covers what projects actually use: `!` negation, dir-only `/` suffix, anchored
// patterns (a `/` at the start or in the middle), `**`, `#` comments and `\` escapes. The same
// syntax in .ignore and .rgignore files (read by ripgrep, fd, ag) is honoured too, as ripgrep does.
import { globToRegExp } from './globMatch';

/** Ignore files by name, lowest precedence first (ripgrep's order). */
export const IGNORE_FILE_NAMES = ['.gitignore', '.ignore', '.rgignore'] as const;
export type IgnoreFileName = (typeof IGNORE_FILE_NAMES)[number];

export interface GitignoreRule {
  /** Which kind of file it came from: a match in a higher kind beats any match in a lower one. */
  kind: IgnoreFileName;
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

/** Parses the text of one ignore file located in workspace-relative directory `base`. */
export function parseGitignore(content: string, base: string, kind: IgnoreFileName = '.gitignore'): GitignoreRule[] {
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
    const pattern = anchored ? line : `**/${line}`;
    rules.push({ kind, base, regex: globToRegExp(pattern, { braces: false }), negate, dirOnly, source: rawLine });
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
   * Whether a workspace-relative path is ignored by these rules. Within one kind of file the last
   * matching rule wins (deeper files come later); across kinds .rgignore beats .ignore beats
   * .gitignore. Callers must not descend into ignored directories (git cannot re-include below them).
   */
  isIgnored(path: string, isDirectory: boolean): boolean {
    const verdicts = new Map<IgnoreFileName, boolean>();
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
      if (rule.regex.test(relative)) verdicts.set(rule.kind, !rule.negate);
    }
    for (let index = IGNORE_FILE_NAMES.length - 1; index >= 0; index--) {
      const verdict = verdicts.get(IGNORE_FILE_NAMES[index]);
      if (verdict !== undefined) return verdict;
    }
    return false;
  }
}
