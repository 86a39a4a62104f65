// The allow-list of commands: every command name that may run during speculation, with the rule
// for its arguments. Names not listed are refused, with a specific reason for well-known ones.
import * as archives from './archives';
import { awk } from './awk';
import { git } from './git';
import type { CommandContext, CommandRule } from './ruleTypes';
import { sed } from './sed';
import * as tools from './toolRules';
import { fileWords, followsEverySymlink } from './fileOperands';
import { OK, refuse, type ShellVerdict } from './verdict';
import { checkPathArg, checkPatternWords } from './workspacePaths';
import { REDIRECTED, redirectedCommand, VERSION_FLAGS, versionCommand } from './versionCommands';
import * as wrappers from './wrappers';
import type { Arg } from './words';

const READ_ONLY_ANY_ARGUMENTS = [
  'ls', 'dir', 'vdir', 'cat', 'tac', 'nl', 'head', 'tail', 'grep', 'egrep', 'fgrep', 'echo', 'pwd',
  'true', 'false', ':', 'basename', 'dirname', 'realpath', 'readlink', 'stat', 'df', 'cut', 'tr',
  'comm', 'join', 'paste', 'column', 'fold', 'fmt', 'expand', 'unexpand', 'rev', 'od', 'hexdump',
  'strings', 'sum', 'diff', 'cmp', 'whoami', 'id', 'groups', 'uname', 'arch', 'nproc',
  'uptime', 'tty', 'locale', 'getconf', 'printenv', 'which', 'whereis', 'type', 'pgrep', 'free',
  'seq', 'expr', 'sleep', 'numfmt', 'zcat', 'cal', 'lsb_release', 'help',
] as const;

const CHECKSUMS = ['md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum'] as const;

const RULES = new Map<string, CommandRule>([
  ...READ_ONLY_ANY_ARGUMENTS.map((name): [string, CommandRule] => [name, tools.anyArguments]),
  ['find', tools.find],
  ['sort', tools.sort],
  ['wc', tools.wc],
  ['du', tools.du],
  ...CHECKSUMS.map((name): [string, CommandRule] => [name, tools.checksum]),
  ['uniq', tools.uniq],
  ['xxd', tools.xxd],
  ['tee', tools.tee],
  ['dd', tools.dd],
  ['tree', tools.tree],
  ['file', tools.file],
  ['date', tools.date],
  ['hostname', tools.hostname],
  ['rg', tools.rg],
  ['fd', tools.fd],
  ['fdfind', tools.fd],
  ['printf', tools.printf],
  ['set', tools.listingOnly('set changes shell options')],
  ['read', wrappers.read],
  ['alias', tools.listingOnly('alias defines an alias')],
  ['test', tools.test],
  ['[', tools.test],
  ['sed', sed],
  ['awk', awk],
  ['gawk', awk],
  ['mawk', awk],
  ['nawk', awk],
  ['git', git],
  ['env', wrappers.env],
  ['nice', wrappers.nice],
  ['timeout', wrappers.timeout],
  ['time', wrappers.time],
  ['stdbuf', wrappers.stdbuf],
  ['command', wrappers.command],
  ['xargs', wrappers.xargs],
  ['bash', wrappers.shell],
  ['sh', wrappers.shell],
  ['dash', wrappers.shell],
  ['tar', archives.tar],
  ['unzip', archives.unzip],
  ['zipinfo', archives.unzip],
  ['base64', tools.base64],
  ['base32', tools.base32],
  ['ps', tools.ps],
  ['jq', tools.jq],
  // Interpreters, compilers, npm/pip (which run an update check for any other subcommand, even
  // `npm ls`): only the version, and only from an installation no workspace file can redirect.
  ...Object.keys(VERSION_FLAGS).map((name): [string, CommandRule] => [name, versionCommand]),
  ...[...REDIRECTED.keys()].map((name): [string, CommandRule] => [name, redirectedCommand]),
]);

/** Why well-known commands are refused, so the user sees more than "not on the list". */
const REFUSAL_REASONS: ReadonlyArray<[code: string, why: string, names: readonly string[]]> = [
  ['command', 'writes or deletes files', [
    'rm', 'rmdir', 'mv', 'cp', 'mkdir', 'touch', 'chmod', 'chown', 'chgrp', 'ln', 'truncate', 'install',
    'shred', 'unlink', 'patch', 'split', 'csplit', 'mktemp', 'mkfifo', 'mknod', 'zip',
    'gzip', 'gunzip', 'bzip2', 'xz', 'sponge',
  ]],
  ['command', 'uses the network', ['curl', 'wget', 'ssh', 'scp', 'sftp', 'ftp', 'nc', 'ncat', 'telnet', 'rsync', 'ping', 'dig', 'nslookup', 'http']],
  ['session', 'changes the shell session', [
    'cd', 'pushd', 'popd', 'dirs', 'export', 'unset', 'unalias', 'shopt', 'trap', 'ulimit',
    'umask', 'readarray', 'mapfile', 'declare', 'local', 'typeset', 'readonly', 'let', 'shift',
    'getopts', 'hash', 'enable', 'exit', 'return', 'logout', 'history', 'fc', 'bind', 'complete',
    'compgen', 'compopt', 'disown', 'jobs', 'fg', 'bg', 'wait', 'suspend',
  ]],
  ['command', 'runs code this check cannot see', ['eval', 'exec', 'source', '.', 'builtin', 'coproc', 'zsh', 'fish', 'ksh', 'csh', 'tcsh']],
  ['command', 'runs a command as another user', ['sudo', 'doas', 'su', 'pkexec']],
  ['command', 'keeps running after the check (writes nohup.out)', ['nohup', 'setsid']],
  ['command', 'is interactive', ['vi', 'vim', 'nvim', 'nano', 'emacs', 'less', 'more', 'most', 'man', 'top', 'htop', 'watch']],
  ['command', 'stops processes', ['kill', 'pkill', 'killall']],
];

const REFUSALS = new Map<string, ShellVerdict>();
for (const [code, why, names] of REFUSAL_REASONS) {
  for (const name of names) if (!REFUSALS.has(name)) REFUSALS.set(name, refuse(code, `${name} ${why}`));
}

/** Directories whose programs may be named by full path (/usr/bin/cat is cat). */
const SYSTEM_BIN_DIRS = new Set(['/bin', '/usr/bin', '/usr/local/bin', '/sbin', '/usr/sbin']);

const MAX_DEPTH = 8;

/** Checks one command given as words: argv[0] names the command. */
export function classifyArgv(argv: readonly Arg[], context: CommandContext): ShellVerdict {
  if (context.depth > MAX_DEPTH) return refuse('command', 'commands nested too deeply to check');
  const resolved = resolveCommandName(argv[0]);
  if (typeof resolved !== 'string') return resolved;
  const rule = RULES.get(resolved);
  if (!rule) return REFUSALS.get(resolved) ?? refuse('command', `${resolved} is not a known read-only command`);
  const args = argv.slice(1);
  const verdict = rule(args, context, resolved);
  if (!verdict.readOnly) return verdict;
  return readsInsideWorkspace(resolved, args, context);
}

/** The files and folders the command reads, all inside the workspace (workspacePaths.ts). */
function readsInsideWorkspace(name: string, args: readonly Arg[], context: CommandContext): ShellVerdict {
  const follows = followsEverySymlink(name, args);
  if (follows) return refuse('path', `${follows}, which may lead outside the workspace`);
  const patterns = checkPatternWords(args, context.workspace);
  if (!patterns.readOnly) return patterns;
  for (const word of fileWords(name, args)) {
    const verdict = checkPathArg(word, context.workspace);
    if (!verdict.readOnly) return verdict;
  }
  return OK;
}

/** The program a command word runs, or a refusal when that cannot be known for sure. */
function resolveCommandName(word: Arg | undefined): string | ShellVerdict {
  if (!word) return refuse('command', 'a command without a name');
  if (word.kind !== 'literal') return refuse('command', 'the command name comes from a variable, pattern or expansion');
  const name = word.value;
  if (name === '') return refuse('command', 'an empty command name');
  const slash = name.lastIndexOf('/');
  if (slash < 0) return name;
  const dir = name.slice(0, slash) || '/';
  const base = name.slice(slash + 1);
  // git must be found on the PATH, where the read-only environment puts its safe wrapper first.
  if (base === 'git' && SYSTEM_BIN_DIRS.has(dir)) return refuse('command', `${name} skips the safe git wrapper; write git`);
  if (SYSTEM_BIN_DIRS.has(dir) && base !== '') return base;
  return refuse('command', `${name} runs a program by path`);
}
