// What a sandboxed command inherits: a clean environment (no tokens or keys of the session), a
// PATH without relative or workspace entries, and the toolchain folders of that PATH (bound
// read-only inside) — plus the system layout those binds sit next to.
import { access, constants, lstat, readdir, readlink } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { isWithin } from '../fs/paths';
import { sanitisedPath } from '../process/readOnlyShellEnv';
import { PROC_READ_ONLY, type SystemEntry } from './mountPlan';

const LOCALE_VARIABLES = ['LANG', 'LANGUAGE', 'LC_ALL', 'LC_COLLATE', 'LC_CTYPE', 'LC_MESSAGES', 'LC_NUMERIC', 'LC_TIME', 'TZ'];
const PLAIN_VALUE = /^[A-Za-z0-9_.,:@%+/-]*$/;
/** Top-level system folders shown read-only (or recreated as symlinks on merged-/usr systems). */
const SYSTEM_CANDIDATES = ['/usr', '/etc', '/opt', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/nix'];
/** Bounds the walk of /etc for files others may not read. */
const MASK_WALK_LIMIT = 20_000;

export interface SandboxEnvInput {
  hostEnv: NodeJS.ProcessEnv;
  workspaceRoot: string;
  home: string;
  bash: string;
  system: readonly SystemEntry[];
}

export interface SandboxEnv {
  env: Record<string, string>;
  /** PATH folders outside the system ones, to bind read-only at their own path. */
  toolchains: string[];
}

function covered(system: readonly SystemEntry[], dir: string): boolean {
  return system.some((entry) => entry.kind === 'bind' && isWithin(entry.path, dir));
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await lstat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/** The HOME the command gets: the real one's path (tools find ~ where they expect it), fresh and empty. */
export function sandboxHome(hostEnv: NodeJS.ProcessEnv, workspaceRoot: string): string {
  const home = hostEnv.HOME;
  const usable =
    typeof home === 'string' &&
    path.isAbsolute(home) &&
    path.resolve(home) !== '/' &&
    !/[,:\\"'\s]/.test(home) &&
    // HOME inside (or equal to) the workspace would turn ~/.cache writes into workspace changes.
    !isWithin(workspaceRoot, path.resolve(home)) &&
    path.resolve(home) !== '/tmp' &&
    !['/usr', '/etc', '/proc', '/sys', '/dev', '/bin', '/sbin', '/lib', '/lib64'].some((dir) => isWithin(dir, path.resolve(home)));
  return usable ? path.resolve(home!) : '/home/sandbox';
}

export async function sandboxEnv(input: SandboxEnvInput): Promise<SandboxEnv> {
  const entries = (await sanitisedPath(input.hostEnv.PATH, input.workspaceRoot)).split(':').filter((entry) => path.isAbsolute(entry));
  const toolchains = new Set<string>();
  // A folder that contains the home folder or the workspace would show what they hide.
  const exposes = (dir: string) => dir === '/' || isWithin(dir, input.home) || isWithin(dir, input.workspaceRoot) || isWithin(input.workspaceRoot, dir);
  const visible: string[] = [];
  for (const entry of entries) {
    if (covered(input.system, entry)) {
      visible.push(entry);
      continue;
    }
    if (exposes(entry)) continue;
    toolchains.add(entry);
    visible.push(entry);
    // A toolchain's bin/ usually needs its lib/ (npm under an nvm node, a user's Python packages).
    if (path.basename(entry) === 'bin') {
      for (const sibling of ['lib', 'libexec']) {
        const dir = path.join(path.dirname(entry), sibling);
        if (!exposes(dir) && !covered(input.system, dir) && (await isDirectory(dir))) toolchains.add(dir);
      }
    }
  }
  const env: Record<string, string> = {
    PATH: visible.length > 0 ? visible.join(':') : '/usr/local/bin:/usr/bin:/bin',
    HOME: input.home,
    TMPDIR: '/tmp',
    SHELL: input.bash,
    TERM: 'dumb',
    CI: 'true',
    NO_COLOR: '1',
    // git status would otherwise refresh .git/index, a change to the repository to be read back.
    GIT_OPTIONAL_LOCKS: '0',
  };
  const user = safeUserName();
  if (user) {
    env.USER = user;
    env.LOGNAME = user;
  }
  for (const name of LOCALE_VARIABLES) {
    const value = input.hostEnv[name];
    if (typeof value === 'string' && PLAIN_VALUE.test(value) && !value.includes('..')) env[name] = value;
  }
  if (!env.LANG && !env.LC_ALL) env.LANG = 'C.UTF-8';
  return { env, toolchains: [...toolchains] };
}

function safeUserName(): string | undefined {
  try {
    const name = os.userInfo().username;
    return /^[A-Za-z0-9._-]+$/.test(name) ? name : undefined;
  } catch {
    return undefined;
  }
}

export interface SystemLayout {
  system: SystemEntry[];
  procReadOnly: string[];
  masked: { path: string; type: 'file' | 'directory' }[];
}

/** The machine's top-level system folders and the secrets in /etc we could read but others cannot. */
export async function systemLayout(): Promise<SystemLayout> {
  const system: SystemEntry[] = [];
  for (const candidate of SYSTEM_CANDIDATES) {
    try {
      const info = await lstat(candidate);
      if (info.isSymbolicLink()) system.push({ path: candidate, kind: 'symlink', target: await readlink(candidate) });
      else if (info.isDirectory()) system.push({ path: candidate, kind: 'bind' });
    } catch {
      // Not on this machine.
    }
  }
  const procReadOnly: string[] = [];
  for (const name of PROC_READ_ONLY) if (await lstat(path.join('/proc', name)).then(() => true, () => false)) procReadOnly.push(name);
  return { system, procReadOnly, masked: await unreadableToOthers('/etc') };
}

/**
 * Files and folders below `dir` that others may not read but this process can (as root: shadow,
 * private keys): the sandbox shows them empty, so a command sees only what any user could.
 */
async function unreadableToOthers(dir: string): Promise<{ path: string; type: 'file' | 'directory' }[]> {
  const found: { path: string; type: 'file' | 'directory' }[] = [];
  let visited = 0;
  const walk = async (folder: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      return;
    }
    for (const name of names) {
      if (++visited > MASK_WALK_LIMIT) return;
      const child = path.join(folder, name);
      let info;
      try {
        info = await lstat(child);
      } catch {
        continue;
      }
      if (!info.isFile() && !info.isDirectory()) continue;
      const othersMay = info.isDirectory() ? (info.mode & 0o005) === 0o005 : (info.mode & 0o004) !== 0;
      if (!othersMay) {
        if (await canRead(child)) found.push({ path: child, type: info.isDirectory() ? 'directory' : 'file' });
        continue;
      }
      if (info.isDirectory()) await walk(child);
    }
  };
  await walk(dir);
  return found;
}

async function canRead(file: string): Promise<boolean> {
  try {
    await access(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
