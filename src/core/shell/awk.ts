// awk: read-only unless its program runs commands (system(), "cmd" | getline, print | "cmd"),
// writes files (print > "f"), loads code (-f, @include, -l), edits in place (-i inplace), or opens a
// file by a name computed at run time: gawk opens a network connection for any /inet/… name, and a
// computed name can be built any way (concatenation, -v, operand assignments, brace expansion,
// xargs), so the rule is about the capability, not the spelling: no getline < …, no ARGV/ARGC.
import { scanOptions } from './options';
import type { CommandRule } from './ruleTypes';
import { OK, refuse, type ShellVerdict } from './verdict';

export const awk: CommandRule = (args, _context, name) => {
  const result = scanOptions(name, args, {
    allowedShort: 'FveSbcPMNnrstOVh',
    shortWithValue: 'Fve',
    allowedLong: [
      'field-separator', 'assign', 'source', 'sandbox', 'characters-as-bytes', 'traditional', 'posix',
      'bignum', 'use-lc-numeric', 'non-decimal-data', 're-interval', 'optimize', 'no-optimize', 'version', 'help',
    ],
    longWithValue: ['field-separator', 'assign', 'source'],
    stopAtOperand: true,
  });
  if (!result.ok) return result.verdict;
  const { options, operands } = result.args;
  const sources = options.filter((option) => option.name === 'e' || option.name === 'source').map((option) => option.value);
  const programs = sources.length > 0 ? sources : [operands[0]];
  const files = sources.length > 0 ? operands : operands.slice(1);
  if (options.some((option) => option.name === 'V' || option.name === 'version' || option.name === 'h' || option.name === 'help')) return OK;
  if (programs.some((program) => !program || program.kind !== 'literal')) {
    return refuse('argument', `${name}: the program is missing or only known at run time`);
  }
  if (files.some((operand) => operand.kind === 'literal' && operand.value.startsWith('/inet'))) {
    return refuse('argument', `${name}: /inet files open network connections`);
  }
  // Operand and -v assignments to ARGV/ARGC would choose the files awk opens.
  const assigned = [...files, ...options.filter((option) => option.name === 'v' || option.name === 'assign').map((option) => option.value)];
  if (assigned.some((arg) => arg && /^\s*(?:ARGV|ARGC)\b/.test(arg.value))) {
    return refuse('argument', `${name}: assigning ARGV or ARGC chooses which files awk opens`);
  }
  for (const program of programs) {
    const verdict = checkAwkProgram(program?.value ?? '');
    if (!verdict.readOnly) return verdict;
  }
  return OK;
};

/**
 * After `getline` (at `from`), whether an input redirection follows: getline [lvalue] < file. The
 * lvalue is a name, maybe with a subscript, or $expr; anything up to the "<" on the same line
 * counts, which refuses some comparisons too (the safe side).
 */
function redirectsInput(program: string, from: number): boolean {
  for (let i = from; i < program.length; i++) {
    const ch = program[i];
    if (ch === '<') return program[i + 1] !== '=';
    if (ch === '\n' || ch === ';' || ch === '}' || ch === '|' || ch === '&' || ch === ')' || ch === ',' || ch === '{') return false;
  }
  return false;
}

/** Tokens after which "/" starts a regex rather than a division; anything else means division. */
const REGEX_MAY_FOLLOW = new Set([
  '', '(', ',', '{', '}', ';', '\n', '!', '~', '&&', '||', '?', ':', '=', '+=', '-=', '*=', '/=', '%=', '^=',
  '==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '%', '^', 'print', 'printf', 'return', 'in', '!~',
]);

const CONTINUES_LINE = new Set([',', '&&', '||']);

/**
 * Tokenises the program (strings, regexes, comments) and refuses anything that writes or runs:
 * a "|" that is not "||", a ">" inside a print statement outside parentheses, system, @-directives.
 * When "/" could be either a regex or a division it is read as division, so that no code is ever
 * skipped as regex text.
 */
export function checkAwkProgram(program: string): ShellVerdict {
  const p = program;
  let i = 0;
  let previous = '';
  let depth = 0;
  let printDepth = -1; // depth at which the current print statement started; -1 = none
  while (i < p.length) {
    const ch = p[i];
    if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
      continue;
    }
    if (ch === '\\' && p[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (ch === '#') {
      while (i < p.length && p[i] !== '\n') i++;
      continue;
    }
    if (ch === '"') {
      const start = ++i;
      while (i < p.length && p[i] !== '"') i += p[i] === '\\' ? 2 : 1;
      if (i >= p.length) return refuse('argument', 'awk: an unterminated string');
      const text = p.slice(start, i);
      i++;
      if (text.includes('/inet')) return refuse('argument', 'awk: /inet files open network connections');
      previous = '"';
      continue;
    }
    if (ch === '/' && REGEX_MAY_FOLLOW.has(previous)) {
      i++;
      while (i < p.length && p[i] !== '/' && p[i] !== '\n') i += p[i] === '\\' ? 2 : 1;
      if (p[i] !== '/') return refuse('argument', 'awk: an unterminated regular expression');
      i++;
      previous = 'regex';
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      const start = i;
      while (i < p.length && /[A-Za-z0-9_]/.test(p[i])) i++;
      const word = p.slice(start, i);
      if (word === 'system') return refuse('argument', 'awk system() runs a command');
      if (word === 'ARGV' || word === 'ARGC') return refuse('argument', 'awk: changing ARGV or ARGC makes awk open files by a name computed at run time (gawk: /inet network connections)');
      if (word === 'getline' && redirectsInput(p, i)) {
        return refuse('argument', 'awk getline < file opens a file by a name computed at run time (gawk: /inet network connections)');
      }
      if (word === 'print' || word === 'printf') printDepth = depth;
      previous = word === 'print' || word === 'printf' || word === 'return' || word === 'in' ? word : 'name';
      continue;
    }
    if (/[0-9.]/.test(ch)) {
      while (i < p.length && /[0-9.eExXa-fA-F]/.test(p[i])) i++;
      previous = 'number';
      continue;
    }
    if (ch === '@') return refuse('argument', 'awk @-directives load or call code indirectly');
    if (ch === '|') {
      if (p[i + 1] === '|') {
        i += 2;
        previous = '||';
        continue;
      }
      return refuse('argument', 'awk | runs a command');
    }
    if (ch === '>') {
      if (printDepth >= 0 && depth <= printDepth) return refuse('argument', 'awk print > writes a file');
      const op = p[i + 1] === '=' ? '>=' : '>';
      i += op.length;
      previous = op;
      continue;
    }
    if (ch === '(' || ch === '[') depth++;
    else if (ch === ')' || ch === ']') depth = Math.max(0, depth - 1);
    // A statement ends at ";", a brace, or a newline that does not follow "," "&&" "||" (where
    // awk continues the statement on the next line).
    if (ch === ';' || ch === '{' || ch === '}' || (ch === '\n' && !CONTINUES_LINE.has(previous))) printDepth = -1;
    const two = p.slice(i, i + 2);
    const op = ['&&', '==', '!=', '<=', '+=', '-=', '*=', '/=', '%=', '^=', '!~', '++', '--', '**'].includes(two) ? two : ch;
    i += op.length;
    previous = op;
  }
  return OK;
}
