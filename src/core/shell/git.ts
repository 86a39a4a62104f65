// git: only subcommands that read the repository, with the options that write (--output), run
// programs from repository config (external diff, textconv, pager, gpg) or change refs refused.
// Diffs need --no-ext-diff/--no-textconv because per-driver programs cannot be switched off through
// the environment (see gitEnv.ts); the checks below ask for those flags where git would run them.
import type { CommandRule } from './ruleTypes';
import { OK, refuse, type ShellVerdict } from './verdict';
import type { Arg } from './words';

/** git [global options] subcommand …: global options that only change how git reads. */
const HARMLESS_GLOBAL_OPTIONS = new Set([
  '--no-pager', '-P', '--no-optional-locks', '--literal-pathspecs', '--glob-pathspecs',
  '--noglob-pathspecs', '--icase-pathspecs', '--no-replace-objects',
]);

/** Refused wherever they appear (git accepts unambiguous abbreviations of long options). */
const REFUSED_LONG_OPTIONS: Readonly<Record<string, string>> = {
  output: 'writes its output to a file',
  'ext-diff': 'runs an external diff program',
  textconv: 'runs textconv programs from the repository config',
  'show-signature': 'runs gpg',
  'open-files-in-pager': 'runs a pager program',
  help: 'runs man or a web browser chosen by the configuration',
};

interface GitArgs {
  /** Option words before "--". */
  options: string[];
  /** Non-option words before "--" (revisions, names, option values given separately). */
  operands: Arg[];
  /** Words after "--" (paths). */
  paths: Arg[];
}

type SubcommandRule = (args: GitArgs, sub: string) => ShellVerdict;

export const git: CommandRule = (args) => {
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i];
    if (arg.kind !== 'literal') return refuse('git', 'an argument only known at run time');
    const value = arg.value;
    if (!value.startsWith('-')) break;
    if (HARMLESS_GLOBAL_OPTIONS.has(value)) continue;
    if (value === '--version' || value === '-v') return OK;
    if (value === '-C') {
      const dir = args[++i];
      const verdict = checkDirectory(dir);
      if (!verdict.readOnly) return verdict;
      continue;
    }
    if (value === '-c' || value.startsWith('--config-env')) {
      return refuse('git', `git ${value} overrides configuration, which can make git run programs`);
    }
    return refuse('git', `git ${value} is not on the read-only list`);
  }
  const subArg = args[i];
  if (!subArg) return OK; // plain `git` prints its usage
  const sub = subArg.value;
  const rule = SUBCOMMANDS[sub];
  if (!rule) return refuse('git', `git ${sub} is not read-only`);
  const split = splitArgs(args.slice(i + 1), sub);
  if ('verdict' in split) return split.verdict;
  return rule(split, sub);
};

function checkDirectory(dir: Arg | undefined): ShellVerdict {
  if (!dir || dir.kind !== 'literal' || dir.value === '') return refuse('git', 'git -C needs a directory written out in full');
  if (dir.value.startsWith('/') || dir.value.startsWith('~') || dir.value.split('/').includes('..')) {
    return refuse('git', 'git -C with an absolute path or .. may leave the workspace');
  }
  return OK;
}

function splitArgs(args: readonly Arg[], sub: string): GitArgs | { verdict: ShellVerdict } {
  const result: GitArgs = { options: [], operands: [], paths: [] };
  let afterDashes = false;
  for (const arg of args) {
    if (afterDashes) {
      result.paths.push(arg);
      continue;
    }
    if (arg.kind !== 'literal') {
      if (arg.mayBeOption) return { verdict: refuse('git', `git ${sub}: an argument only known at run time may be an option`) };
      result.operands.push(arg);
      continue;
    }
    const value = arg.value;
    if (value.includes('%G')) return { verdict: refuse('git', 'the %G format placeholders run gpg') };
    if (value === '--') {
      afterDashes = true;
      continue;
    }
    if (!value.startsWith('-') || value === '-') {
      result.operands.push(arg);
      continue;
    }
    if (value.startsWith('--')) {
      const name = value.slice(2).split('=')[0];
      for (const [option, why] of Object.entries(REFUSED_LONG_OPTIONS)) {
        if (name.length > 0 && option.startsWith(name)) return { verdict: refuse('git', `git ${sub} --${option} ${why}`) };
      }
    }
    result.options.push(value);
  }
  return result;
}

const has = (args: GitArgs, ...names: string[]) => args.options.some((option) => names.includes(option));
const hasPrefix = (args: GitArgs, ...prefixes: string[]) =>
  args.options.some((option) => prefixes.some((prefix) => option.startsWith(prefix)));

/** Options that make log/show/diff compute file contents (patches, pickaxe, line ranges). */
function producesPatch(args: GitArgs): boolean {
  if (has(args, '-p', '-u', '--patch', '--patch-with-stat', '--patch-with-raw', '--cc', '-c', '--dd', '--remerge-diff', '-W', '--function-context', '--binary')) {
    return true;
  }
  if (hasPrefix(args, '-U', '--unified', '-S', '-G', '-L', '--pickaxe', '--find-object', '--word-diff', '--color-words')) return true;
  // A cluster of short options (-pw) may hide one of the above.
  return args.options.some((option) => /^-[A-Za-z]{2,}/.test(option) && /[puUSGLWc]/.test(option.slice(1)));
}

/** Output formats that show no file contents. */
function onlySummaries(args: GitArgs): boolean {
  return (
    has(args, '--numstat', '--shortstat', '--name-only', '--name-status', '--summary', '--raw', '-s', '--no-patch', '--compact-summary') ||
    hasPrefix(args, '--stat', '--dirstat')
  );
}

function needsFlags(args: GitArgs, sub: string, flags: readonly string[]): ShellVerdict {
  const missing = flags.filter((flag) => !has(args, flag));
  if (missing.length === 0) return OK;
  return refuse('git', `git ${sub} may run diff programs from the repository config; add ${flags.join(' ')}`);
}

const anything: SubcommandRule = () => OK;

const diff: SubcommandRule = (args, sub) =>
  producesPatch(args) || !onlySummaries(args) ? needsFlags(args, sub, ['--no-ext-diff', '--no-textconv']) : OK;

const log: SubcommandRule = (args, sub) => (producesPatch(args) ? needsFlags(args, sub, ['--no-textconv']) : OK);

const show: SubcommandRule = (args, sub) => {
  // `git show rev:path` prints a blob or tree as stored, without textconv.
  const onlyBlobs = args.operands.length > 0 && args.operands.every((operand) => operand.kind === 'literal' && operand.value.includes(':'));
  const content = producesPatch(args) || (!onlySummaries(args) && !onlyBlobs);
  return content ? needsFlags(args, sub, ['--no-textconv']) : OK;
};

const blame: SubcommandRule = (args, sub) => needsFlags(args, sub, ['--no-textconv']);

const grep: SubcommandRule = (args) =>
  args.options.some((option) => /^-[A-Za-z]*O/.test(option)) ? refuse('git', 'git grep -O opens files in a pager program') : OK;

const catFile: SubcommandRule = (args) =>
  hasPrefix(args, '--filters') ? refuse('git', 'git cat-file --filters runs filter programs from the repository config') : OK;

const describe: SubcommandRule = (args) =>
  hasPrefix(args, '--dirty', '--broken') ? refuse('git', 'git describe --dirty refreshes and may write the index') : OK;

const BRANCH_OPTIONS = [
  '-a', '--all', '-r', '--remotes', '-l', '--list', '-v', '-vv', '--verbose', '-q', '--quiet', '--show-current',
  '--contains', '--no-contains', '--merged', '--no-merged', '--points-at', '--sort', '--format', '--color',
  '--no-color', '--column', '--no-column', '-i', '--ignore-case', '--abbrev', '--no-abbrev', '--omit-empty',
];
const LIST_FILTERS = ['--contains', '--no-contains', '--merged', '--no-merged', '--points-at'];

/** Options written as --name=value count as --name. */
const optionName = (option: string) => option.split('=')[0];

function onlyOptions(args: GitArgs, sub: string, allowed: readonly string[]): ShellVerdict {
  const unknown = args.options.find((option) => !allowed.includes(optionName(option)));
  return unknown ? refuse('git', `git ${sub} ${unknown} is not on the read-only list`) : OK;
}

/** git branch lists; with a name and no list option it creates a branch. */
const branch: SubcommandRule = (args, sub) => {
  const verdict = onlyOptions(args, sub, BRANCH_OPTIONS);
  if (!verdict.readOnly) return verdict;
  const listing = args.options.some((option) => ['-l', '--list', ...LIST_FILTERS].includes(optionName(option)));
  if (listing || (args.operands.length === 0 && args.paths.length === 0)) return OK;
  return refuse('git', 'git branch with a name creates a branch; use git branch --list <pattern> to list');
};

const TAG_OPTIONS = ['-l', '--list', '--sort', '--contains', '--no-contains', '--merged', '--no-merged', '--points-at', '--format', '--column', '--no-column', '-i', '--ignore-case', '--color', '--no-color', '--omit-empty'];

/** git tag lists; with a name and no list option it creates a tag. */
const tag: SubcommandRule = (args, sub) => {
  const lineCount = (option: string) => /^-n[0-9]*$/.test(option);
  const unknown = args.options.find((option) => !TAG_OPTIONS.includes(optionName(option)) && !lineCount(option));
  if (unknown) return refuse('git', `git tag ${unknown} is not on the read-only list`);
  const listing = args.options.some((option) => ['-l', '--list', ...LIST_FILTERS].includes(optionName(option)) || lineCount(option));
  if (listing || (args.operands.length === 0 && args.paths.length === 0)) return OK;
  return refuse('git', `git ${sub} with a name creates a tag; use git tag --list <pattern> to list`);
};

/** git remote [-v] | get-url NAME | show -n NAME (without -n it contacts the remote). */
const remote: SubcommandRule = (args, sub) => {
  const action = args.operands[0]?.value;
  if (action === undefined) return onlyOptions(args, sub, ['-v', '--verbose']);
  if (action === 'get-url') return onlyOptions(args, sub, ['--push', '--all']);
  if (action === 'show') {
    if (!has(args, '-n')) return refuse('git', 'git remote show contacts the remote over the network; add -n');
    return onlyOptions(args, sub, ['-n', '-v', '--verbose']);
  }
  return refuse('git', `git remote ${action} changes the repository configuration`);
};

const CONFIG_READ_MODES = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool', '--list', '-l'];
const CONFIG_MODIFIERS = [
  '--global', '--system', '--local', '--worktree', '--file', '-f', '--blob', '--show-origin', '--show-scope',
  '--name-only', '-z', '--null', '--type', '--bool', '--int', '--bool-or-int', '--path', '--expiry-date',
  '--default', '--includes', '--no-includes', '--fixed-value',
];

const CONFIG_WRITE_WORDS = ['set', 'unset', 'edit', 'rename-section', 'remove-section'];

/** git config: reading only (--get…, --list, or a single key). A key with a value sets it. */
const config: SubcommandRule = (args, sub) => {
  const verdict = onlyOptions(args, sub, [...CONFIG_READ_MODES, ...CONFIG_MODIFIERS]);
  if (!verdict.readOnly) return verdict;
  // Newer git spells the modes as words: `git config get|list` read, the others write or edit.
  const first = args.operands[0]?.value;
  if (first !== undefined && CONFIG_WRITE_WORDS.includes(first)) {
    return refuse('git', `git config ${first} changes the configuration`);
  }
  const modeWord = first === 'get' || first === 'list' ? 1 : 0;
  // --file/-f/--blob/--type/--default take their value as the next word.
  const valued = args.options.filter((option) => ['--file', '-f', '--blob', '--type', '--default'].includes(option)).length;
  const names = args.operands.length - valued - modeWord;
  const reading = modeWord === 1 || args.options.some((option) => CONFIG_READ_MODES.includes(optionName(option)));
  if (args.paths.length === 0 && (reading ? names <= 2 : names === 1)) return OK;
  return refuse('git', 'git config with a value changes the configuration; use git config --get <key>');
};

/** git stash list / git stash show; everything else (including plain `git stash`) changes files. */
const stash: SubcommandRule = (args, sub) => {
  const action = args.operands[0]?.value;
  if (action === 'list') return OK;
  if (action === 'show') return producesPatch(args) ? needsFlags(args, `${sub} show`, ['--no-ext-diff', '--no-textconv']) : OK;
  return refuse('git', 'git stash (other than list and show) changes the working tree');
};

/** git reflog [show|exists|list] [ref]: expire/delete/drop rewrite the reflog. */
const reflog: SubcommandRule = (args) => {
  const first = args.operands[0];
  if (!first) return OK;
  const word = first.value;
  if (['show', 'exists', 'list'].includes(word) || /^[0-9]+$/.test(word) || /[A-Z@/~^{}]/.test(word)) return OK;
  return refuse('git', `git reflog ${word} is not read-only`);
};

const SUBCOMMANDS: Readonly<Record<string, SubcommandRule>> = {
  status: anything,
  log: log,
  whatchanged: log,
  shortlog: log,
  show: show,
  diff: diff,
  blame: blame,
  annotate: blame,
  branch: branch,
  tag: tag,
  remote: remote,
  config: config,
  stash: stash,
  reflog: reflog,
  grep: grep,
  'cat-file': catFile,
  describe: describe,
  'rev-parse': anything,
  'rev-list': anything,
  'ls-files': anything,
  'ls-tree': anything,
  'show-ref': anything,
  'for-each-ref': anything,
  'merge-base': anything,
  'name-rev': anything,
  'count-objects': anything,
  'check-ignore': anything,
  'check-attr': anything,
  cherry: anything,
  version: anything,
};
