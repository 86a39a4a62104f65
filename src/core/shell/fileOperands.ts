// Which words of an accepted command name files it reads (so checkPathArg must place them inside
// the workspace), and the options that make a tool follow every symlink it meets while recursing,
// so that even a path inside the workspace reads beyond it.
import type { Arg } from './words';

/** Commands none of whose own words is a file they read (their inner commands are checked apart). */
const NO_FILE_WORDS = new Set([
  'echo', 'printf', 'true', 'false', ':', 'seq', 'expr', 'sleep', 'numfmt', 'whoami', 'id', 'groups',
  'uname', 'arch', 'nproc', 'uptime', 'tty', 'locale', 'getconf', 'printenv', 'which', 'whereis', 'type',
  'ps', 'free', 'cal', 'lsb_release', 'help', 'basename', 'dirname', 'tr', 'test', '[', 'set',
  'alias', 'hostname', 'df', 'read',
  // Wrappers: the command they run is checked as a command of its own.
  'env', 'nice', 'timeout', 'time', 'stdbuf', 'command', 'bash', 'sh', 'dash',
]);

/** Commands whose first operand is a pattern or program, not a file (unless -e/-f/--regexp… name it). */
const FIRST_OPERAND_IS_CODE: Readonly<Record<string, RegExp>> = {
  grep: /^(?:-[A-Za-z]*[ef]|--(?:regexp|file)(?:=|$))/,
  egrep: /^(?:-[A-Za-z]*[ef]|--(?:regexp|file)(?:=|$))/,
  fgrep: /^(?:-[A-Za-z]*[ef]|--(?:regexp|file)(?:=|$))/,
  rg: /^(?:-[A-Za-z]*[ef]|--(?:regexp|file)(?:=|$)|--files$|--type-list$)/,
  fd: /(?!)/, // the pattern comes first, glob or regex alike
  fdfind: /(?!)/,
  jq: /^(?:-[A-Za-z]*f|--from-file(?:=|$))/,
  sed: /^(?:-[A-Za-z]*[ef]|--(?:expression|file)(?:=|$))/,
  awk: /^(?:-[A-Za-z]*[fe]|--(?:file|source|exec)(?:=|$))/,
  gawk: /^(?:-[A-Za-z]*[fe]|--(?:file|source|exec)(?:=|$))/,
  mawk: /^(?:-[A-Za-z]*[fe]|--(?:file|source|exec)(?:=|$))/,
  nawk: /^(?:-[A-Za-z]*[fe]|--(?:file|source|exec)(?:=|$))/,
};

const AWK = new Set(['awk', 'gawk', 'mawk', 'nawk']);

/**
 * Options whose value is no file (a pattern, a number, a separator, a format), as short letters and
 * long names. Their value, attached or the next word, is not checked as a path; every other
 * option's value is (the safe side).
 */
const NOT_FILE_VALUES: Readonly<Record<string, { short: string; long: readonly string[] }>> = {
  grep: { short: 'eABCmdD', long: ['regexp', 'max-count', 'context', 'after-context', 'before-context', 'include', 'exclude', 'exclude-dir', 'label', 'color', 'colour', 'devices', 'directories', 'binary-files', 'group-separator'] },
  rg: { short: 'eABCmMtTErjdg', long: ['regexp', 'after-context', 'before-context', 'context', 'glob', 'iglob', 'threads', 'max-count', 'max-columns', 'type', 'type-not', 'encoding', 'replace', 'max-depth', 'type-add', 'sort', 'sortr', 'max-filesize', 'colors', 'color', 'context-separator', 'field-match-separator', 'field-context-separator', 'path-separator', 'engine', 'dfa-size-limit', 'regex-size-limit'] },
  sed: { short: 'el', long: ['expression', 'line-length'] },
  awk: { short: 'Fve', long: ['field-separator', 'assign', 'source'] },
  cut: { short: 'dfcb', long: ['delimiter', 'fields', 'characters', 'bytes', 'output-delimiter'] },
  sort: { short: 'tkS', long: ['key', 'field-separator', 'buffer-size', 'parallel', 'batch-size'] },
  head: { short: 'nc', long: ['lines', 'bytes'] },
  tail: { short: 'ncs', long: ['lines', 'bytes', 'sleep-interval', 'pid', 'max-unchanged-stats'] },
  uniq: { short: 'fsw', long: ['skip-fields', 'skip-chars', 'check-chars'] },
  // Not S: a pickaxe string for log, but blame -S names a revisions file.
  git: { short: 'eGnLUNl', long: ['author', 'committer', 'grep', 'format', 'pretty', 'since', 'until', 'after', 'before', 'date', 'max-count', 'skip', 'abbrev', 'sort', 'contains', 'points-at', 'merged', 'no-merged', 'type', 'default', 'color'] },
  jq: { short: '', long: ['indent', 'arg', 'argjson'] },
  ls: { short: 'IwT', long: ['color', 'hide', 'ignore', 'format', 'sort', 'time', 'time-style', 'width', 'tabsize', 'block-size', 'indicator-style', 'quoting-style'] },
  du: { short: 'dtB', long: ['max-depth', 'threshold', 'block-size', 'time', 'time-style', 'exclude'] },
  tree: { short: 'LPIHT', long: ['charset', 'sort', 'filelimit', 'timefmt'] },
  column: { short: 'sotcNWHRTEd', long: ['separator', 'output-separator', 'table-columns', 'table-name'] },
  paste: { short: 'd', long: ['delimiters'] },
  join: { short: 'tjo12ae', long: [] },
  date: { short: 'dI', long: ['date', 'iso-8601', 'rfc-3339'] },
  stat: { short: 'c', long: ['format', 'printf'] },
  od: { short: 'AtNjSw', long: ['address-radix', 'format', 'read-bytes', 'skip-bytes', 'strings', 'width'] },
  hexdump: { short: 'nse', long: [] },
  strings: { short: 'ntTe', long: ['bytes', 'radix', 'target', 'encoding'] },
  nl: { short: 'bdfhilnsvw', long: [] },
  // Not X: -X names an exclude file (--exclude-from).
  diff: { short: 'UCFIx', long: ['unified', 'context', 'label', 'ignore-matching-lines', 'show-function-line', 'exclude', 'width', 'tabsize', 'color'] },
  file: { short: 'FeP', long: ['separator', 'exclude', 'exclude-quiet', 'parameter'] },
  cmp: { short: 'in', long: ['ignore-initial', 'bytes'] },
  fd: { short: 'dEetcjS', long: ['max-depth', 'min-depth', 'exact-depth', 'exclude', 'extension', 'type', 'color', 'threads', 'size', 'changed-within', 'changed-before', 'max-results', 'owner'] },
  wc: { short: '', long: [] },
  xargs: { short: 'dnLIPsEe', long: ['delimiter', 'max-args', 'max-lines', 'replace', 'max-procs', 'max-chars', 'eof'] },
};
for (const alias of ['egrep', 'fgrep']) (NOT_FILE_VALUES as Record<string, unknown>)[alias] = NOT_FILE_VALUES.grep;
for (const alias of ['gawk', 'mawk', 'nawk']) (NOT_FILE_VALUES as Record<string, unknown>)[alias] = NOT_FILE_VALUES.awk;
(NOT_FILE_VALUES as Record<string, unknown>).fdfind = NOT_FILE_VALUES.fd;

const literal = (value: string): Arg => ({ value, kind: 'literal', mayBeOption: false });

/**
 * The words of `name args…` that may be read as files or folders. Over-inclusive on purpose: an
 * option's separate value is taken as an operand, and every option's attached value (--file=x,
 * -fx) as a path too, so that no option that reads a file is missed.
 */
export function fileWords(name: string, args: readonly Arg[]): Arg[] {
  if (NO_FILE_WORDS.has(name)) return [];
  if (name === 'find') return findStartingPoints(args);
  if (name === 'xargs') return xargsFiles(args);
  // dd key=value operands: if= is the file it reads (the dd rule refuses of= and unknown keys).
  if (name === 'dd') return args.filter((arg) => arg.kind !== 'literal' || arg.value.startsWith('if=')).map((arg) => (arg.kind === 'literal' ? literal(arg.value.slice(3)) : arg));
  const words: Arg[] = [];
  const codeFirst = FIRST_OPERAND_IS_CODE[name];
  const notFiles = NOT_FILE_VALUES[name] ?? { short: '', long: [] };
  let skipFirst = codeFirst !== undefined && !args.some((arg) => arg.kind === 'literal' && codeFirst.test(arg.value));
  let endOfOptions = false;
  let skipValue = false;
  for (const arg of args) {
    if (skipValue) {
      skipValue = false;
      continue;
    }
    if (arg.kind === 'literal' && !endOfOptions && arg.value === '--') {
      endOfOptions = true;
      continue;
    }
    if (arg.kind === 'literal' && !endOfOptions && arg.value.startsWith('-') && arg.value !== '-') {
      const text = arg.value;
      const eq = text.indexOf('=');
      if (text.startsWith('--')) {
        const option = text.slice(2, eq < 0 ? undefined : eq);
        const known = notFiles.long.includes(option);
        if (eq > 0 && !known) words.push(literal(text.slice(eq + 1)));
        if (eq < 0 && known) skipValue = true;
        continue;
      }
      // A cluster is read letter by letter, as getopt does: a letter whose value is no file takes
      // the rest of the word (or the next word) and ends it. Any letter before it may take the
      // rest as its value, which may be a file (-f/etc/x: the letters of that path are no options),
      // so every such rest is checked — and then the next word is an operand, so it is skipped
      // only when the cluster is that one letter.
      const letters = text.slice(1);
      for (let i = 0; i < letters.length; i++) {
        if (notFiles.short.includes(letters[i])) {
          if (i === 0 && letters.length === 1) skipValue = true;
          break;
        }
        if (i + 1 < letters.length) words.push(literal(letters.slice(i + 1)));
      }
      continue;
    }
    // --author="$USER": a known non-file option whose value only comes at run time.
    const prefix = arg.kind === 'literal' ? '' : (arg.literalPrefix ?? '');
    if (!endOfOptions && prefix.startsWith('--') && prefix.includes('=') && notFiles.long.includes(prefix.slice(2, prefix.indexOf('=')))) continue;
    if (skipFirst) {
      skipFirst = false;
      continue;
    }
    // awk var=value operands are assignments, not files.
    if (AWK.has(name) && arg.kind === 'literal' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(arg.value)) continue;
    words.push(arg);
  }
  return words;
}

/** xargs: only -a/--arg-file names a file; the rest is the command it runs (checked as such). */
function xargsFiles(args: readonly Arg[]): Arg[] {
  const words: Arg[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.kind !== 'literal' || !arg.value.startsWith('-')) break;
    if (arg.value === '-a' || arg.value === '--arg-file') {
      if (args[i + 1]) words.push(args[++i]);
    } else if (arg.value.startsWith('--arg-file=')) words.push(literal(arg.value.slice('--arg-file='.length)));
    else if (/^-a./.test(arg.value)) words.push(literal(arg.value.slice(2)));
  }
  return words;
}

/** find [-H|-L|-P…] start… expression: the starting points, and the tests that read another file. */
function findStartingPoints(args: readonly Arg[]): Arg[] {
  const words: Arg[] = [];
  let i = 0;
  while (i < args.length && args[i].kind === 'literal' && /^-[HLPO]|^-D$/.test(args[i].value)) i += args[i].value === '-D' ? 2 : 1;
  for (; i < args.length; i++) {
    const arg = args[i];
    if (arg.kind === 'literal' && /^[-(!)]/.test(arg.value) && arg.value !== '-') break;
    words.push(arg);
  }
  for (; i < args.length; i++) {
    const arg = args[i];
    if (arg.kind === 'literal' && /^-(?:[acm]?newer|newer[aBcmt][aBcmt]|samefile|files0-from)$/.test(arg.value) && args[i + 1]) words.push(args[++i]);
  }
  return words;
}

/** Options that make a recursive tool follow every symlink it meets (what is under them is elsewhere). */
export function followsEverySymlink(name: string, args: readonly Arg[]): string | undefined {
  const values = args.filter((arg) => arg.kind === 'literal').map((arg) => arg.value);
  const short = (letters: string) => values.some((value) => /^-[A-Za-z]+$/.test(value) && [...letters].some((letter) => value.includes(letter)));
  const long = (...names: string[]) => values.some((value) => names.some((option) => value === `--${option}` || value.startsWith(`--${option}=`)));
  switch (name) {
    case 'grep':
    case 'egrep':
    case 'fgrep':
      return short('R') || long('dereference-recursive') ? `${name} -R follows every symlink (use -r)` : undefined;
    case 'rg':
    case 'fd':
    case 'fdfind':
      return short('L') || long('follow') ? `${name} -L follows every symlink` : undefined;
    case 'find':
      return values.some((value) => value === '-L' || value === '-follow') ? 'find -L follows every symlink' : undefined;
    case 'tree':
      return short('l') ? 'tree -l follows every symlink' : undefined;
    case 'ls':
    case 'du':
      return short('L') || long('dereference') ? `${name} -L follows every symlink` : undefined;
    case 'diff':
      // GNU diff follows symlinks while comparing folders unless told not to.
      return (short('r') || long('recursive')) && !long('no-dereference') ? 'diff -r follows symlinks; add --no-dereference' : undefined;
    default:
      return undefined;
  }
}
