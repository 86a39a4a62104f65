// git: only subcommands that read the repository, with the options that write (--output), run
// programs (--ext-diff, --textconv, a pager, gpg, merge drivers), or render a submodule's patches
// in a child git refused. What the repository's own config and attributes can make git run is
// switched off by the environment and git wrapper these commands run with
// (src/core/process/gitWrapper.ts has the rule), so plain git diff/show/log -p/blame are fine.
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
  /** Every word before "--", in order (options with separate values keep their place). */
  words: string[];
}

type SubcommandRule = (args: GitArgs, sub: string) => ShellVerdict;

/** Options whose value is only matched or shown, so it may come from a variable. */
const DATA_VALUED_OPTION = /^--(?:author|committer|grep|since|until|after|before)=/;

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
  const result: GitArgs = { options: [], operands: [], paths: [], words: [] };
  let afterDashes = false;
  for (const arg of args) {
    if (afterDashes) {
      result.paths.push(arg);
      continue;
    }
    if (arg.kind !== 'literal') {
      // --author="$USER": the option is written out, only its value (data) comes at run time.
      if (arg.kind === 'dynamic' && DATA_VALUED_OPTION.test(arg.literalPrefix ?? '')) {
        result.options.push(arg.value);
        result.words.push(arg.value);
        continue;
      }
      if (arg.mayBeOption) return { verdict: refuse('git', `git ${sub}: an argument only known at run time may be an option`) };
      result.operands.push(arg);
      result.words.push(arg.value);
      continue;
    }
    const value = arg.value;
    if (value !== '--') result.words.push(value);
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

/**
 * Options that make git run a program the wrapper's flags cannot reach: --remerge-diff (and
 * --diff-merges=remerge) re-merges every merge commit, running the repository's merge drivers and
 * writing temporary objects; --submodule=diff renders a submodule's patches in a child git, where
 * the submodule's own diff.external and textconv would run.
 */
function runsUnreachedProgram(args: GitArgs, sub: string): ShellVerdict {
  for (const option of args.options) {
    const [name, value] = option.startsWith('--') ? [option.slice(2).split('=')[0], option.slice(option.indexOf('=') + 1)] : ['', ''];
    if (name === 'remerge-diff' || (name === 'diff-merges' && option.includes('=') && /^r(emerge)?$/.test(value))) {
      return refuse('git', `git ${sub} --remerge-diff re-merges commits, which runs the repository's merge drivers`);
    }
    if (name === 'submodule' && option.includes('=') && value === 'diff') {
      return refuse('git', `git ${sub} --submodule=diff runs the submodule's own diff programs`);
    }
  }
  // --diff-merges may also take its value as the next word.
  const words = args.words;
  for (let i = 0; i + 1 < words.length; i++) {
    if (words[i] === '--diff-merges' && /^r(emerge)?$/.test(words[i + 1])) return refuse('git', `git ${sub} --diff-merges remerge runs the repository's merge drivers`);
  }
  return OK;
}

const anything: SubcommandRule = () => OK;

const diff: SubcommandRule = runsUnreachedProgram;
const log: SubcommandRule = runsUnreachedProgram;
const show: SubcommandRule = runsUnreachedProgram;
const blame: SubcommandRule = () => OK;

/** status -v shows a diff, with textconv (status takes no --no-textconv). */
const status: SubcommandRule = (args) => {
  const verbose = args.options.some((option) => /^-[A-Za-z]*v/.test(option) || (option.startsWith('--') && option.length > 2 && 'verbose'.startsWith(option.slice(2).split('=')[0])));
  return verbose ? refuse('git', 'git status -v shows a diff through the repository\'s textconv programs') : OK;
};

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

/** --includes is not among them: an include may name any file, and --list would print what it parses. */
const CONFIG_READ_MODES = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool', '--list', '-l'];
const CONFIG_MODIFIERS = [
  '--global', '--system', '--local', '--worktree', '--file', '-f', '--blob', '--show-origin', '--show-scope',
  '--name-only', '-z', '--null', '--type', '--bool', '--int', '--bool-or-int', '--path', '--expiry-date',
  '--default', '--no-includes', '--fixed-value',
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
  if (action === 'list') return runsUnreachedProgram(args, `${sub} list`);
  if (action === 'show') return runsUnreachedProgram(args, `${sub} show`);
  return refuse('git', 'git stash (other than list and show) changes the working tree');
};

/** git reflog [show|exists|list] [ref]: expire/delete/drop rewrite the reflog. */
const reflog: SubcommandRule = (args, sub) => {
  const unreached = runsUnreachedProgram(args, sub);
  if (!unreached.readOnly) return unreached;
  const first = args.operands[0];
  if (!first) return OK;
  const word = first.value;
  if (['show', 'exists', 'list'].includes(word) || /^[0-9]+$/.test(word) || /[A-Z@/~^{}]/.test(word)) return OK;
  return refuse('git', `git reflog ${word} is not read-only`);
};

const SUBCOMMANDS: Readonly<Record<string, SubcommandRule>> = {
  status: status,
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
