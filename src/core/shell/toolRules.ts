// Argument rules for ordinary tools that are read-only except for a few options or operand forms
// (sort -o, uniq IN OUT, find -delete, rg --pre, …). Each rule names what it refuses and why.
import { scanOptions, type OptionSpec, type ScannedArgs } from './options';
import type { CommandRule } from './ruleTypes';
import { OK, refuse, type ShellVerdict } from './verdict';
import type { Arg } from './words';

export const anyArguments: CommandRule = () => OK;

/** A rule that only scans options (refusing what the spec refuses), then runs an optional check. */
export function withOptions(spec: OptionSpec, check?: (scanned: ScannedArgs, name: string) => ShellVerdict): CommandRule {
  return (args, _context, name) => {
    const result = scanOptions(name, args, spec);
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

/**
 * Interpreters, compilers and package managers: asking for the version is all that is safe. Only
 * the flags each program treats as "print the version and exit" count (python -v would instead
 * start an interpreter reading its input; `node version` would run a file named version).
 */
export function versionOnly(what: string, flags: readonly string[] = []): CommandRule {
  return (args, _context, name) => {
    const flag = args.length === 1 && args[0].kind === 'literal' ? args[0].value : undefined;
    if (flag === '--version' || (flag !== undefined && flags.includes(flag))) return OK;
    return refuse('command', `${name} ${what}; only ${name} --version is read-only`);
  };
}

/** find: its expression may delete, run programs or write files. */
const FIND_ACTIONS: Readonly<Record<string, string>> = {
  '-delete': 'deletes files',
  '-exec': 'runs a command', '-execdir': 'runs a command', '-ok': 'runs a command', '-okdir': 'runs a command',
  '-fprint': 'writes a file', '-fprint0': 'writes a file', '-fprintf': 'writes a file', '-fls': 'writes a file',
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
  longWithValue: ['key', 'field-separator', 'buffer-size', 'parallel', 'batch-size', 'files0-from', 'random-source'],
  refusedShort: { o: 'writes its output to a file', T: 'writes temporary files into a directory' },
  refusedLong: {
    output: 'writes its output to a file',
    'compress-program': 'runs another program',
    'temporary-directory': 'writes temporary files into a directory',
  },
});

export const uniq = atMostOneOperand({
  shortWithValue: 'fsw',
  longWithValue: ['skip-fields', 'skip-chars', 'check-chars'],
});

export const xxd = atMostOneOperand({ shortWithValue: 'cglson' });

export const tee = withOptions(
  { allowedShort: 'aip', allowedLong: ['append', 'ignore-interrupts', 'output-error'] },
  (scanned) =>
    scanned.operands.every((operand) => operand.kind === 'literal' && operand.value === '/dev/null')
      ? OK
      : refuse('argument', 'tee writes to files'),
);

export const dd: CommandRule = (args) => {
  for (const arg of args) {
    if (arg.kind !== 'literal') return refuse('argument', 'dd: an operand that is only known at run time may name an output file');
    if (arg.value.startsWith('of=')) return refuse('argument', 'dd of= writes a file');
  }
  return OK;
};

export const tree = withOptions({
  shortWithValue: 'LPIHT',
  refusedShort: { o: 'writes its output to a file', R: 'writes a file into every directory' },
  refusedLong: { output: 'writes its output to a file' },
});

export const file = withOptions({
  shortWithValue: 'mfFeP',
  longWithValue: ['magic-file', 'files-from', 'separator', 'exclude', 'exclude-quiet', 'parameter'],
  refusedShort: { C: 'compiles a magic file and writes it' },
  refusedLong: { compile: 'compiles a magic file and writes it' },
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
  refusedLong: {
    pre: 'runs a program on every file',
    'pre-glob': 'chooses files for --pre',
    'hostname-bin': 'runs a program',
  },
});

export const fd = withOptions({
  shortWithValue: 'dEeStcjo',
  longWithValue: ['max-depth', 'min-depth', 'exact-depth', 'exclude', 'extension', 'size', 'type', 'color', 'threads', 'owner', 'changed-within', 'changed-before', 'base-directory', 'search-path', 'ignore-file', 'max-results'],
  refusedShort: { x: 'runs a command for each result', X: 'runs a command with the results' },
  refusedLong: { exec: 'runs a command for each result', 'exec-batch': 'runs a command with the results' },
});

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

/** go version / go env (without -w or -u, which write the go env file). */
export const go: CommandRule = (args, context, name) => {
  const sub = args[0];
  if (sub?.kind === 'literal' && sub.value === 'version' && args.length === 1) return OK;
  if (sub?.kind === 'literal' && sub.value === 'env') {
    for (const arg of args.slice(1)) {
      if (arg.kind !== 'literal') return refuse('argument', 'go env: an argument that is only known at run time');
      if (/^--?[wu]($|=)/.test(arg.value)) return refuse('argument', `go env ${arg.value} writes the go environment file`);
    }
    return OK;
  }
  return versionOnly('builds, downloads or runs code')(args, context, name);
};
