// What a command needs that the sandbox cannot give (SANDBOX.md, "when speculation still stops"):
// the network (install, fetch, push, curl), a person (editors, sudo, `read`), or the git repository
// itself (commit, checkout, stash, …). Such commands stay boundaries; everything else may run inside.
// When a command's needs cannot be read from its text, it is run: the sandbox contains it.
import { loadShellParser } from '../shell/parser';
import type { ParsedScript, SyntaxNode } from '../shell/syntaxTree';
import { evaluateWord } from '../shell/words';

/**
 * `ahead`: a git write that commit-ahead can make in a private .git (src/core/git): add, commit,
 * branch and tag creation, `switch -c`, `checkout -b`, `restore --staged`. Where the speculation
 * offers that, such a command runs in the sandbox with .git writable; elsewhere it stops as before.
 */
export type CommandNeed = { kind: 'network' | 'person'; detail: string } | { kind: 'git-write'; detail: string; ahead?: true };

const NETWORK_PROGRAMS = new Set([
  'curl', 'wget', 'ssh', 'scp', 'sftp', 'ftp', 'telnet', 'nc', 'ncat', 'netcat', 'socat', 'ping', 'ping6', 'traceroute', 'dig',
  'nslookup', 'host', 'whois', 'gh', 'hub', 'aws', 'gcloud', 'az', 'kubectl', 'helm', 'docker', 'podman', 'http', 'https', 'xh',
]);
/** Package managers and the subcommands that download (install, add, update, publish …). */
const NETWORK_SUBCOMMANDS: Record<string, ReadonlySet<string>> = {
  npm: new Set(['install', 'i', 'in', 'ins', 'inst', 'add', 'ci', 'clean-install', 'install-test', 'it', 'update', 'up', 'upgrade', 'publish', 'login', 'adduser', 'logout', 'audit', 'outdated', 'view', 'v', 'info', 'show', 'search', 'unpublish', 'deprecate', 'dist-tag', 'owner', 'ping', 'whoami', 'create', 'init']),
  pnpm: new Set(['install', 'i', 'add', 'update', 'up', 'upgrade', 'fetch', 'publish', 'dlx', 'create', 'outdated', 'audit']),
  yarn: new Set(['install', 'add', 'upgrade', 'up', 'dlx', 'publish', 'create', 'outdated', 'audit', 'login', 'npm']),
  bun: new Set(['install', 'i', 'add', 'update', 'x', 'create', 'publish', 'upgrade']),
  pip: new Set(['install', 'download', 'wheel', 'search']),
  pip3: new Set(['install', 'download', 'wheel', 'search']),
  pipx: new Set(['install', 'run', 'upgrade', 'inject']),
  uv: new Set(['add', 'sync', 'lock', 'pip', 'tool', 'python']),
  poetry: new Set(['install', 'add', 'update', 'lock', 'publish', 'self']),
  cargo: new Set(['install', 'add', 'update', 'fetch', 'search', 'publish', 'login', 'owner', 'yank']),
  go: new Set(['get', 'install']),
  gem: new Set(['install', 'update', 'push', 'fetch']),
  bundle: new Set(['install', 'update', 'add', 'outdated']),
  composer: new Set(['install', 'require', 'update', 'create-project']),
  apt: new Set(['install', 'update', 'upgrade', 'full-upgrade', 'dist-upgrade', 'source', 'download']),
  'apt-get': new Set(['install', 'update', 'upgrade', 'dist-upgrade', 'source', 'download', 'build-dep']),
  dnf: new Set(['install', 'update', 'upgrade', 'download']),
  yum: new Set(['install', 'update', 'upgrade']),
  brew: new Set(['install', 'update', 'upgrade', 'tap', 'fetch']),
  apk: new Set(['add', 'update', 'upgrade', 'fetch']),
  pacman: new Set(['-S', '-Sy', '-Syu', '-Su']),
  snap: new Set(['install', 'refresh']),
  flatpak: new Set(['install', 'update']),
};
const PERSON_PROGRAMS = new Set([
  'sudo', 'su', 'doas', 'pkexec', 'passwd', 'vi', 'vim', 'nvim', 'nano', 'emacs', 'pico', 'joe', 'code', 'subl', 'less', 'more', 'most',
  'man', 'info', 'top', 'htop', 'btop', 'watch', 'tmux', 'screen', 'read', 'select', 'fzf', 'dialog', 'whiptail',
]);
/** git subcommands that write the repository (or talk to a remote). */
const GIT_WRITES = new Set([
  'add', 'rm', 'mv', 'commit', 'checkout', 'switch', 'merge', 'rebase', 'reset', 'revert', 'cherry-pick', 'am', 'notes', 'replace',
  'update-ref', 'update-index', 'symbolic-ref', 'gc', 'prune', 'repack', 'init', 'worktree', 'submodule', 'filter-branch',
  'filter-repo', 'bisect', 'sparse-checkout', 'maintenance', 'pack-refs', 'read-tree', 'commit-tree', 'write-tree', 'mktag', 'mktree', 'fast-import',
]);
const GIT_NETWORK = new Set(['clone', 'fetch', 'pull', 'push', 'ls-remote', 'archive', 'request-pull', 'send-email']);
/** git's options that take the next word as their value (before the subcommand). */
const GIT_OPTIONS_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env', '--super-prefix']);
/** Wrappers that run the rest of their words as a command; how many leading words are theirs. */
const WRAPPERS: Record<string, (args: string[]) => number> = {
  env: (args) => args.findIndex((arg) => !arg.startsWith('-') && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)),
  time: leadingOptions,
  nice: (args) => (args[0] === '-n' ? 2 : leadingOptions(args)),
  nohup: leadingOptions,
  command: leadingOptions,
  exec: leadingOptions,
  builtin: leadingOptions,
  stdbuf: leadingOptions,
  ionice: leadingOptions,
  chrt: leadingOptions,
  timeout: (args) => {
    const options = leadingOptions(args);
    return options < 0 ? -1 : options + 1;
  },
  xargs: leadingOptions,
};

function leadingOptions(args: string[]): number {
  const index = args.findIndex((arg) => !arg.startsWith('-'));
  return index;
}

/** The first need found among the words of one simple command (literal words; others are unknown). */
function needOfArgv(words: (string | undefined)[], inner: (script: string) => CommandNeed | null): CommandNeed | null {
  const [name, ...rest] = words;
  if (name === undefined) return null;
  const program = name.includes('/') ? name.slice(name.lastIndexOf('/') + 1) : name;
  const args = rest.map((word) => word ?? '');
  const wrapped = WRAPPERS[program];
  if (wrapped) {
    const skip = wrapped(args);
    return skip < 0 ? null : needOfArgv(rest.slice(skip), inner);
  }
  if ((program === 'bash' || program === 'sh' || program === 'dash' || program === 'zsh') && args[0] === '-c' && rest[1] !== undefined) return inner(rest[1]);
  if (PERSON_PROGRAMS.has(program)) return { kind: 'person', detail: `${program} waits for someone at a terminal` };
  if (NETWORK_PROGRAMS.has(program)) return { kind: 'network', detail: `${program} talks to other machines` };
  if (program === 'git') return gitNeed(args);
  if ((program === 'python' || program === 'python3') && args[0] === '-m' && (args[1] === 'pip' || args[1] === 'pip3')) return needOfArgv(args.slice(1), inner);
  const subcommands = NETWORK_SUBCOMMANDS[program];
  if (subcommands) {
    const sub = args.find((arg) => !arg.startsWith('-') || program === 'pacman');
    // `yarn` alone installs.
    if (sub === undefined && program === 'yarn') return { kind: 'network', detail: 'yarn installs packages from a registry' };
    if (sub !== undefined && subcommands.has(sub)) return { kind: 'network', detail: `${program} ${sub} downloads or publishes packages` };
  }
  return null;
}

/** Options that make commit or tag open an editor or ask interactively. */
const INTERACTIVE_GIT_OPTIONS = new Set(['-i', '--interactive', '-p', '--patch', '-e', '--edit']);
/** Where a commit or an annotated tag takes its message from without an editor. */
const MESSAGE_OPTION = /^(-m|--message|-F|--file|-C|--reuse-message|--no-edit|--fixup|--squash)(=|$)|^-[a-zA-Z]*m/;

/**
 * Whether a git write is one commit-ahead takes on ('ahead'), needs someone at an editor ('person'),
 * or neither (null: an ordinary git-write boundary). Forms that would change working-tree files
 * (a switch to an existing branch, a start point) stay boundaries.
 */
function gitAheadForm(sub: string, rest: string[]): 'ahead' | 'person' | null {
  const options = rest.filter((arg) => arg.startsWith('-'));
  const operands = rest.filter((arg) => !arg.startsWith('-'));
  switch (sub) {
    case 'add':
      return options.some((arg) => INTERACTIVE_GIT_OPTIONS.has(arg)) ? 'person' : 'ahead';
    case 'commit':
      if (options.some((arg) => INTERACTIVE_GIT_OPTIONS.has(arg))) return 'person';
      return options.some((arg) => MESSAGE_OPTION.test(arg)) ? 'ahead' : 'person';
    case 'switch':
    case 'checkout': {
      const create = sub === 'switch' ? ['-c', '--create'] : ['-b'];
      const rest2 = rest.filter((arg) => arg !== '-q' && arg !== '--quiet');
      return rest2.length === 2 && create.includes(rest2[0]) && !rest2[1].startsWith('-') ? 'ahead' : null;
    }
    case 'branch':
      return options.length === 0 && operands.length >= 1 && operands.length <= 2 ? 'ahead' : null;
    case 'tag': {
      if (options.some((arg) => !/^(-a|--annotate|-m|--message(=.*)?|-F|--file(=.*)?)$/.test(arg))) return null;
      const annotated = options.length > 0;
      return annotated && !options.some((arg) => /^(-m|--message|-F|--file)/.test(arg)) ? 'person' : 'ahead';
    }
    case 'restore':
      return rest.some((arg) => arg === '--staged' || arg === '-S') && !rest.some((arg) => arg === '--worktree' || arg === '-W' || arg === '-p' || arg === '--patch') ? 'ahead' : null;
    default:
      return null;
  }
}

function gitNeed(args: string[]): CommandNeed | null {
  let i = 0;
  let explicitRepository = false;
  while (i < args.length && args[i].startsWith('-')) {
    if (args[i] === '--git-dir' || args[i] === '--work-tree' || args[i].startsWith('--git-dir=') || args[i].startsWith('--work-tree=')) explicitRepository = true;
    i += GIT_OPTIONS_WITH_VALUE.has(args[i]) ? 2 : 1;
  }
  const sub = args[i];
  if (sub === undefined) return null;
  const rest = args.slice(i + 1);
  if (GIT_NETWORK.has(sub)) return { kind: 'network', detail: `git ${sub} talks to a remote` };
  const form = gitAheadForm(sub, rest);
  if (form === 'person') return { kind: 'person', detail: `git ${sub} opens an editor or asks interactively here` };
  const writes = (() => {
    if (GIT_WRITES.has(sub)) return true;
    switch (sub) {
      case 'stash':
        return !['list', 'show'].includes(rest[0] ?? 'push');
      case 'tag':
        return rest.some((arg) => !arg.startsWith('-')) && !rest.some((arg) => ['-l', '--list', '-v', '--verify', '--contains', '--points-at'].includes(arg));
      case 'branch':
        return rest.some((arg) => ['-d', '-D', '--delete', '-m', '-M', '--move', '-c', '-C', '--copy', '-u', '--set-upstream-to', '--unset-upstream', '-f', '--force', '--edit-description'].includes(arg)) || (rest.some((arg) => !arg.startsWith('-')) && !rest.some((arg) => ['-l', '--list', '--contains', '--merged', '--no-merged', '--points-at'].includes(arg)));
      case 'remote':
        return ['add', 'remove', 'rm', 'rename', 'set-url', 'set-head', 'set-branches', 'prune', 'update'].includes(rest[0] ?? '');
      case 'config':
        return !rest.some((arg) => /^(--get|--get-all|--get-regexp|--get-urlmatch|--list|-l|get|list)$/.test(arg));
      case 'apply':
        return rest.some((arg) => arg === '--index' || arg === '--cached' || arg === '-3' || arg === '--3way');
      case 'restore':
        return rest.some((arg) => arg === '--staged' || arg === '-S');
      case 'reflog':
        return ['expire', 'delete'].includes(rest[0] ?? '');
      default:
        return false;
    }
  })();
  if (!writes) return null;
  return form === 'ahead' && !explicitRepository ? { kind: 'git-write', detail: `git ${sub} writes to .git`, ahead: true } : { kind: 'git-write', detail: `git ${sub} writes to .git` };
}

/** The words of a `command` node, literal where they can be known. */
function wordsOf(script: ParsedScript, node: SyntaxNode): (string | undefined)[] {
  const words: (string | undefined)[] = [];
  for (const child of node.children) {
    if (child.field !== 'name' && child.field !== 'argument') continue;
    const word = evaluateWord(script, child.type === 'command_name' ? child.children[0] ?? child : child);
    words.push(word?.kind === 'literal' ? word.value : undefined);
  }
  return words;
}

/** The more binding of two needs: any other need outranks a git write commit-ahead can take. */
function firmer(a: CommandNeed | null, b: CommandNeed | null): CommandNeed | null {
  if (!a) return b;
  if (!b) return a;
  return a.kind === 'git-write' && a.ahead ? b : a;
}

function isFinal(need: CommandNeed | null): boolean {
  return need !== null && !(need.kind === 'git-write' && need.ahead);
}

function scan(script: ParsedScript, node: SyntaxNode, inner: (source: string) => CommandNeed | null): CommandNeed | null {
  let found: CommandNeed | null = null;
  if (node.type === 'command') {
    found = firmer(found, needOfArgv(wordsOf(script, node), inner));
    if (isFinal(found)) return found;
  }
  if (node.type === 'for_statement' && node.children.some((child) => !child.named && child.type === 'select')) {
    return { kind: 'person', detail: 'select waits for a choice at the terminal' };
  }
  for (const child of node.children) {
    found = firmer(found, scan(script, child, inner));
    if (isFinal(found)) return found;
  }
  return found;
}

/** The first thing the command needs that the sandbox withholds, or null when it may run inside. */
export async function commandNeeds(command: string): Promise<CommandNeed | null> {
  const parser = await loadShellParser();
  const check = (source: string, depth: number): CommandNeed | null => {
    if (depth > 3) return null;
    const script = parser.parse(source);
    return scan(script, script.root, (inner) => check(inner, depth + 1));
  };
  return check(command, 0);
}
