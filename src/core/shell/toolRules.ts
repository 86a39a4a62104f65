// Argument rules for ordinary tools that are read-only except for a few options or operand forms
// (sort -o, uniq IN OUT, find -delete, rg --pre, …). Each rule names what it refuses and why.
import { scanOptions, type OptionSpec, type ScannedArgs } from './options';
import type { CommandRule } from './ruleTypes';
import { OK, refuse, type ShellVerdict } from './verdict';
import { isCheckedLoopValue } from './workspacePaths';
import type { Arg } from './words';

export const anyArguments: CommandRule = () => OK;

/** A rule that only scans options (refusing what the spec refuses), then runs an optional check. */
export function withOptions(spec: OptionSpec, check?: (scanned: ScannedArgs, name: string) => ShellVerdict): CommandRule {
  return (args, context, name) => {
    const result = scanOptions(name, args.map((arg) => (isCheckedLoopValue(arg, context.workspace) ? { ...arg, mayBeOption: false } : arg)), spec);
    if (!result.ok) return result.verdict;
    return check ? check(result.args, name) : OK;
  };
}

/** How many words the operands can become: a pattern or expansion may become several. */
function operandCount(operands: readonly Arg[]): number {
  return operands.some((operand) => operand.kind !== 'literal') ? Infinity : operands.length;
}

/** Tools whose second operand is an output file (uniq IN OUT, xxd IN OUT). */
function atMostOneOperand(spec: OptionSpec): CommandRule {
  return withOptions(spec, (scanned, name) =>
    operandCount(scanned.operands) <= 1 ? OK : refuse('argument', `${name} writes its output to a second file name`),
  );
}

/** Options that read a list of file names from a file: the names in it are never checked. */
const FILE_LIST_WHY = 'reads the names of the files to read from a file, which this check cannot see into';

/** find: its expression may delete, run programs or write files. */
const FIND_ACTIONS: Readonly<Record<string, string>> = {
  '-delete': 'deletes files',
  '-exec': 'runs a command', '-execdir': 'runs a command', '-ok': 'runs a command', '-okdir': 'runs a command',
  '-fprint': 'writes a file', '-fprint0': 'writes a file', '-fprintf': 'writes a file', '-fls': 'writes a file',
  '-files0-from': FILE_LIST_WHY,
};

export const find: CommandRule = (args) => {
  for (const arg of args) {
    if (arg.kind !== 'literal') {
      if (arg.mayBeOption) return refuse('argument', 'find: an argument that is only known at run time may be an action such as -delete');
      continue;
    }
    const why = FIND_ACTIONS[arg.value];
    if (why) return refuse('argument', `find ${arg.value} ${why}`);
  }
  return OK;
};

export const sort = withOptions({
  shortWithValue: 'ktS',
  longWithValue: ['key', 'field-separator', 'buffer-size', 'parallel', 'batch-size', 'random-source'],
  refusedShort: { o: 'writes its output to a file', T: 'writes temporary files into a directory' },
  refusedLong: {
    'files0-from': FILE_LIST_WHY,
    output: 'writes its output to a file',
    'compress-program': 'runs another program',
    'temporary-directory': 'writes temporary files into a directory',
  },
});

export const uniq = atMostOneOperand({
  shortWithValue: 'fsw',
  longWithValue: ['skip-fields', 'skip-chars', 'check-chars'],
});

/**
 * xxd reads its options by hand, not with getopt: only words before the first operand are options,
 * each word is one option named by its first letter (-ps is -p, "postscript"), and a value-taking
 * letter written out (-cols, -seek) takes the next word. After the input file, the next word is the
 * output file whatever it looks like (xxd in -ps writes a file named -ps).
 */
export const xxd: CommandRule = (args) => {
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i];
    if (arg.kind !== 'literal') return refuse('argument', 'xxd: an argument that is only known at run time may be an output file');
    const text = arg.value;
    if (text === '--') {
      i++;
      break;
    }
    if (!text.startsWith('-') || text === '-') break;
    const word = text.startsWith('--') && text.length > 2 ? text.slice(1) : text;
    // -c -g -l -o -s -n take a value: attached as digits (-c8), otherwise the next word.
    if ('cglson'.includes(word[1] ?? '') && !/^-[cglson][-+]?[0-9]/.test(word)) i++;
  }
  const operands = args.length - i;
  return operands <= 1 ? OK : refuse('argument', 'xxd writes its output to the file named by its second operand');
};

/** base64/base32: BSD and macOS write to the file of -o/--output (GNU has no such option). */
const encoder = withOptions({
  shortWithValue: 'bwio',
  longWithValue: ['wrap', 'break', 'input'],
  refusedShort: { o: 'writes its output to a file (BSD and macOS)' },
  refusedLong: { output: 'writes its output to a file (BSD and macOS)' },
});
export const base64 = encoder;
export const base32 = encoder;

export const tee = withOptions(
  { allowedShort: 'aip', allowedLong: ['append', 'ignore-interrupts', 'output-error'] },
  (scanned) =>
    scanned.operands.every((operand) => operand.kind === 'literal' && operand.value === '/dev/null')
      ? OK
      : refuse('argument', 'tee writes to files'),
);

/** dd's operands that neither read nor write a file; if= reads one (checked as a path). */
const DD_OPERANDS = new Set(['if', 'ibs', 'obs', 'bs', 'cbs', 'skip', 'iseek', 'seek', 'oseek', 'count', 'conv', 'iflag', 'oflag', 'status']);

export const dd: CommandRule = (args) => {
  for (const arg of args) {
    if (arg.kind !== 'literal') return refuse('argument', 'dd: an operand that is only known at run time may name an output file');
    if (arg.value.startsWith('of=')) return refuse('argument', 'dd of= writes a file');
    const key = arg.value.slice(0, Math.max(0, arg.value.indexOf('=')));
    if (!DD_OPERANDS.has(key)) return refuse('argument', `dd ${arg.value}: not an operand this check knows`);
  }
  return OK;
};

export const wc = withOptions({ refusedLong: { 'files0-from': FILE_LIST_WHY } });
export const du = withOptions({
  shortWithValue: 'dtBX',
  longWithValue: ['max-depth', 'threshold', 'block-size', 'time', 'time-style', 'exclude', 'exclude-from'],
  refusedLong: { 'files0-from': FILE_LIST_WHY },
});
/** md5sum, sha256sum, …: -c reads file names (and hashes) from a file and reports on each. */
export const checksum = withOptions({ refusedShort: { c: FILE_LIST_WHY }, refusedLong: { check: FILE_LIST_WHY } });

/** tree reads its options by hand: -Lo 1 out.txt is -L 1 -o out.txt (each letter takes the next word). */
export const tree = withOptions({
  shortWithValue: 'LPIHT',
  valuesFromNextWords: true,
  refusedShort: { o: 'writes its output to a file', R: 'writes a file into every directory' },
  refusedLong: { output: 'writes its output to a file' },
});

export const file = withOptions({
  shortWithValue: 'mFeP',
  longWithValue: ['magic-file', 'separator', 'exclude', 'exclude-quiet', 'parameter'],
  refusedShort: { C: 'compiles a magic file and writes it', f: FILE_LIST_WHY },
  refusedLong: { compile: 'compiles a magic file and writes it', 'files-from': FILE_LIST_WHY },
});

export const date = withOptions(
  {
    shortWithValue: 'dfr',
    longWithValue: ['date', 'file', 'reference', 'rfc-3339'],
    refusedShort: { s: 'sets the system clock' },
    refusedLong: { set: 'sets the system clock' },
  },
  (scanned) =>
    scanned.operands.every((operand) => operand.kind === 'literal' && operand.value.startsWith('+'))
      ? OK
      : refuse('argument', 'date with an operand other than +FORMAT sets the system clock'),
);

export const hostname = withOptions(
  {
    allowedShort: 'aAdfiIsyV',
    allowedLong: ['alias', 'all-fqdns', 'domain', 'fqdn', 'long', 'ip-address', 'all-ip-addresses', 'short', 'yp', 'nis', 'version'],
  },
  (scanned) => (scanned.operands.length === 0 ? OK : refuse('argument', 'hostname with a name sets the host name')),
);

export const rg = withOptions({
  shortWithValue: 'ABCefgjmMtTErd',
  longWithValue: [
    'after-context', 'before-context', 'context', 'regexp', 'file', 'glob', 'iglob', 'threads', 'max-count',
    'max-columns', 'type', 'type-not', 'encoding', 'replace', 'max-depth', 'type-add', 'sort', 'sortr',
    'max-filesize', 'colors', 'color', 'context-separator', 'field-match-separator', 'field-context-separator',
    'path-separator', 'ignore-file', 'engine', 'dfa-size-limit', 'regex-size-limit',
  ],
  refusedShort: { z: 'runs decompression programs on compressed files' },
  refusedLong: {
    pre: 'runs a program on every file',
    'pre-glob': 'chooses files for --pre',
    'hostname-bin': 'runs a program',
    'search-zip': 'runs decompression programs on compressed files',
  },
});

export const fd = withOptions({
  shortWithValue: 'dEeStcjo',
  longWithValue: ['max-depth', 'min-depth', 'exact-depth', 'exclude', 'extension', 'size', 'type', 'color', 'threads', 'owner', 'changed-within', 'changed-before', 'base-directory', 'search-path', 'ignore-file', 'max-results'],
  refusedShort: { x: 'runs a command for each result', X: 'runs a command with the results' },
  refusedLong: { exec: 'runs a command for each result', 'exec-batch': 'runs a command with the results' },
});

/** set and alias print what the shell has when given no arguments, and change the session otherwise. */
export function listingOnly(what: string): CommandRule {
  return (args) => (args.length === 0 ? OK : refuse('session', what));
}

/** printf -v NAME assigns a shell variable instead of printing. */
export const printf: CommandRule = (args) => {
  const first = args[0];
  if (!first) return OK;
  if (first.kind !== 'literal' && first.mayBeOption) return refuse('argument', 'printf: a first argument only known at run time may be -v');
  if (first.kind === 'literal' && first.value.startsWith('-v')) return refuse('session', 'printf -v assigns a shell variable');
  return OK;
};

/** test/[: -v and -R evaluate array subscripts; expanded words may turn into those operators. */
export const test: CommandRule = (args, _context, name) => {
  for (const arg of args) {
    if (arg.kind !== 'literal') return refuse('expansion', `${name}: an expanded word may become an operator such as -v; use [[ … ]]`);
    if (arg.value === '-v' || arg.value === '-R') return refuse('expansion', `${arg.value} evaluates an array subscript, which can run code`);
  }
  return OK;
};

/**
 * ps: BSD-style e (ps e, ps auxe, ps eww) and the environ format print other processes'
 * environments, the editor's own among them, with its keys and tokens.
 */
export const ps: CommandRule = (args) => {
  for (const arg of args) {
    if (arg.kind !== 'literal') return refuse('argument', 'ps: an argument that is only known at run time may ask for environments');
    const text = arg.value;
    if (!text.startsWith('-') && /^[A-Za-z]+$/.test(text) && text.includes('e')) return refuse('argument', `ps ${text} prints the environment of processes, with their secrets`);
    if (/env/i.test(text)) return refuse('argument', 'ps: showing the environment of processes reveals their secrets');
  }
  return OK;
};

/**
 * jq: read-only, but modules (import/include, -L) are read from any folder (~/.jq, next to jq,
 * or one the command names), and `import "…" as $x` prints a JSON file's data.
 */
export const jq: CommandRule = (args) => {
  for (const arg of args) {
    if (arg.kind !== 'literal') continue;
    if (/^-[A-Za-z]*L/.test(arg.value) || arg.value.startsWith('--library-path')) return refuse('argument', 'jq -L loads modules from a folder');
    // A program file may import modules by any path, and this check does not read it.
    if (/^-[A-Za-z]*f/.test(arg.value) || /^--from-f/.test(arg.value)) return refuse('argument', 'jq -f runs a program from a file, whose imports this check cannot see');
    if (/\b(?:import|include|modulemeta|get_search_list)\b/.test(arg.value)) return refuse('argument', 'jq modules (import/include) are read from folders outside the workspace');
  }
  return OK;
};
