// Unattended reads stay inside the workspace: a word a command reads as a file or folder must
// resolve inside it from every folder the command may be in, through `..`, absolute paths and
// symlinks alike (read_file's rule). Globs are expanded the way bash would; words only known at
// run time cannot be placed, so in a file position they make the command not read-only.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import type { ShellWorkspace } from './ruleTypes';
import { OK, refuse, type ShellVerdict } from './verdict';
import { PIPE_NAME, type Arg } from './words';

/** Devices that name no file of anybody's: reading them reveals nothing. */
const HARMLESS_DEVICES = new Set(['/dev/null', '/dev/stdin', '/dev/stdout', '/dev/stderr', '/dev/zero', '/dev/random', '/dev/urandom', '-', PIPE_NAME]);
/** A glob that would make the check list more than this is refused rather than followed. */
const MAX_GLOB_ENTRIES = 5000;

function isWithin(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith('/') ? root : `${root}/`);
}

const outside = (word: string, how: string) => refuse('path', `${word} ${how}; unattended commands read only inside the workspace`);

/** One literal path, from one working directory. */
function checkLiteral(word: string, cwd: string, workspace: ShellWorkspace): ShellVerdict {
  if (HARMLESS_DEVICES.has(word)) return OK;
  if (word.startsWith('~')) return outside(word, 'is in a home folder');
  const joined = word.startsWith('/') ? word : `${cwd}/${word}`;
  if (!isWithin(workspace.root, path.resolve(joined))) return outside(word, 'resolves outside the workspace');
  // Nothing there (or a dangling link): nothing to read, nor could the command open anything.
  // existsSync first: a failing realpath throws, which costs several times more.
  if (!existsSync(joined)) return OK;
  let real: string;
  try {
    // The kernel's reading: `link/..` is the parent of wherever link points (path.resolve would
    // cancel the two lexically).
    real = realpathSync.native(joined);
  } catch {
    return OK;
  }
  return isWithin(workspace.root, real) ? OK : outside(word, 'leads outside the workspace through a symlink');
}

/** {a,b} alternatives, unnested (nested or unbalanced braces are refused by the caller). */
function expandBraces(word: string): string[] | undefined {
  const open = word.indexOf('{');
  if (open < 0) return [word];
  const close = word.indexOf('}', open);
  if (close < 0) return [word];
  const inner = word.slice(open + 1, close);
  if (inner.includes('{')) return undefined;
  const parts = inner.includes(',') ? inner.split(',') : inner.includes('..') ? undefined : [`{${inner}}`];
  if (!parts) return undefined; // {1..9}: a sequence; not worth expanding
  const out: string[] = [];
  for (const part of parts) {
    const rest = expandBraces(word.slice(close + 1));
    if (!rest) return undefined;
    for (const tail of rest) out.push(word.slice(0, open) + part + tail);
  }
  return out;
}

/**
 * One path component of a glob as a matcher, or undefined where the translation could under-match
 * (and so miss a symlink out): bracket classes ([[:alpha:]], [[=a=]], [[.a.]]) and a "]" first in
 * the brackets, which is one of its characters in bash but ends the class in JavaScript.
 */
function globToRegExp(component: string): RegExp | undefined {
  let source = '';
  for (let i = 0; i < component.length; i++) {
    const ch = component[i];
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else if (ch === '[') {
      const negated = component[i + 1] === '!' || component[i + 1] === '^';
      const first = negated ? i + 2 : i + 1;
      const end = component.indexOf(']', first + 1);
      if (end < 0) {
        source += '\\[';
        continue;
      }
      const members = component.slice(first, end);
      if (members.startsWith(']') || /\[[:=.]/.test(members)) return undefined;
      source += `[${negated ? '^' : ''}${members.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else source += ch.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/**
 * The paths a glob may expand to (over-matching: quoted glob characters count as globs too), or a
 * refusal when there are too many to check or the glob has a part the check cannot follow.
 */
function expandGlob(pattern: string, cwd: string): string[] | ShellVerdict {
  const absolute = pattern.startsWith('/');
  const components = pattern.split('/').filter((part, index) => part !== '' || index === 0);
  let current = [absolute ? '' : '.'];
  let listed = 0;
  for (const component of components.slice(absolute ? 1 : 0)) {
    if (!/[*?[]/.test(component)) {
      current = current.map((base) => `${base}/${component}`);
      continue;
    }
    const matcher = globToRegExp(component);
    if (!matcher) return refuse('path', `${pattern}: a bracket expression this check does not follow ([:class:], [=c=], [.c.] or a leading ])`);
    const next: string[] = [];
    for (const base of current) {
      let names: string[];
      try {
        names = readdirSync(absolute ? base || '/' : path.join(cwd, base));
      } catch {
        continue;
      }
      listed += names.length;
      if (listed > MAX_GLOB_ENTRIES) return refuse('path', `${pattern} matches too many files to check`);
      for (const name of names) if (matcher.test(name)) next.push(`${base}/${name}`);
    }
    current = next;
  }
  return current.map((entry) => (absolute ? entry : entry.replace(/^\.\//, '')));
}

/**
 * A glob or brace word that bash would turn into a word starting with "-": the command would read
 * it as an option (a planted file named --files0-from=/etc/passwd makes `wc -l *` read that file).
 */
function expandsToOption(arg: Arg, alternatives: readonly string[], cwd: string): ShellVerdict | undefined {
  const writtenAsOption = alternatives.length === 1 && (arg.literalPrefix ?? '').startsWith('-');
  for (const alternative of alternatives) {
    if (alternative.startsWith('-')) {
      // --include=*.ts as written: an option of the author's, fine while bash leaves it as it is
      // (no file matches it); braces that make an option, or matches that replace it, are not.
      const matches = writtenAsOption && /[*?[]/.test(alternative) ? expandGlob(alternative, cwd) : undefined;
      if (matches && !Array.isArray(matches)) return matches;
      if (matches && matches.length === 0) continue;
      return refuse('argument', `${arg.value} expands to ${matches?.[0] ?? alternative}, which the command reads as an option`);
    }
    if (!/[*?[]/.test(alternative)) continue;
    const matches = expandGlob(alternative, cwd);
    if (!Array.isArray(matches)) return matches;
    const dashed = matches.find((match) => match.startsWith('-'));
    if (dashed) return refuse('argument', `${arg.value} matches ${dashed}, which the command reads as an option`);
  }
  return undefined;
}

/** Patterns anywhere in a command (file or not) must not expand to words read as options. */
export function checkPatternWords(args: readonly Arg[], workspace: ShellWorkspace): ShellVerdict {
  for (const arg of args) {
    if (arg.kind !== 'pattern' || arg.value.startsWith('~')) continue;
    const alternatives = expandBraces(arg.value);
    if (!alternatives) return refuse('path', `${arg.value}: a brace expansion this check does not follow`);
    for (const cwd of workspace.cwds) {
      const option = expandsToOption(arg, alternatives, cwd);
      if (option) return option;
    }
  }
  return OK;
}

/**
 * "$f" of a loop whose values were all checked (paths inside, none an option) from every folder
 * the command may be in now.
 */
export function isCheckedLoopValue(arg: Arg, workspace: ShellWorkspace): boolean {
  return arg.kind !== 'literal' && arg.boundTo !== undefined && workspace.checkedVariables.get(arg.boundTo) === workspace.cwds.join('\u0000');
}

/** Every folder the command may be in when it reads `arg` must see it inside the workspace. */
export function checkPathArg(arg: Arg, workspace: ShellWorkspace): ShellVerdict {
  if (arg.kind === 'dynamic') {
    if (isCheckedLoopValue(arg, workspace)) return OK;
    const shown = arg.value.trim() === '' ? 'an argument' : `${arg.value} (known only at run time)`;
    return refuse('path', `${shown} names a file only known at run time, which may lead outside the workspace`);
  }
  for (const cwd of workspace.cwds) {
    if (arg.kind === 'literal') {
      const verdict = checkLiteral(arg.value, cwd, workspace);
      if (!verdict.readOnly) return verdict;
      continue;
    }
    const alternatives = expandBraces(arg.value);
    if (!alternatives) return refuse('path', `${arg.value}: a brace expansion this check does not follow`);
    const option = expandsToOption(arg, alternatives, cwd);
    if (option) return option;
    for (const alternative of alternatives) {
      const literal = checkLiteral(alternative.replace(/[*?[].*$/, ''), cwd, workspace);
      if (!literal.readOnly) return literal;
      const matches = expandGlob(alternative, cwd);
      if (!Array.isArray(matches)) return matches;
      for (const match of matches) {
        const verdict = checkLiteral(match, cwd, workspace);
        if (!verdict.readOnly) return refuse('path', `${arg.value} matches ${match}, which ${verdict.reason.replace(/^path: \S+ /, '')}`);
      }
    }
  }
  return OK;
}

/**
 * The folders `cd target` may lead to from `cwd`: bash's logical reading (the path with `..`
 * cancelled, which later `cd ..` build on) and the physical one (where files are then opened),
 * both inside the workspace; or a refusal.
 */
export function changeDirectory(target: string, cwd: string, workspace: ShellWorkspace): string[] | ShellVerdict {
  const verdict = checkLiteral(target, cwd, workspace);
  if (!verdict.readOnly) return verdict;
  const joined = target.startsWith('/') ? target : `${cwd}/${target}`;
  try {
    const physical = realpathSync.native(joined);
    return [...new Set([path.resolve(joined), physical])];
  } catch {
    return []; // cd fails and the shell stays where it was
  }
}
