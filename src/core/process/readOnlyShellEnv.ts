// The environment a shell command runs in when it runs only because the classifier judged it
// read-only: an allowlist of the session's variables (no secrets), git's configurable programs
// switched off, and a PATH through which no program name can resolve to a workspace file.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { isWithin } from '../fs/paths';
import { isHarmlessAssignment } from '../shell/environment';
import { gitNeutralisingEnv } from '../shell/gitEnv';
import { findProgram, safeSearchPath } from '../fs/programSearch';
import { gitWrapperDir } from './gitWrapper';
import { BASH_LOCATIONS } from './nodeProcessRunner';

/** A PATH that finds nothing: only commands named by absolute path can run. */
const NOTHING_PATH = '/nonexistent/no-safe-path';

/**
 * The variables a command run without approval keeps from the session: who and where the user is,
 * and how text is formatted. Everything else (API keys, tokens, SSH agent sockets, proxies,
 * LD_PRELOAD, NODE_OPTIONS, GIT_DIR, RUSTUP_TOOLCHAIN, whatever a direnv or the editor added) is
 * left out: an allowlist, because no denylist can know every secret's name.
 */
const KEPT_AS_IS = ['HOME', 'USER', 'LOGNAME'];
/** Kept when the value is a plain name (isHarmlessAssignment): a locale with a slash names files. */
const KEPT_IF_PLAIN = ['LANG', 'LANGUAGE', 'LC_ALL', 'LC_COLLATE', 'LC_CTYPE', 'LC_MESSAGES', 'LC_NUMERIC', 'LC_TIME', 'TZ'];

export interface ReadOnlyShellEnvRequest {
  /** The environment the command would otherwise get. */
  env: Record<string, string>;
  /** Absolute, symlink-resolved workspace root. */
  workspaceRoot: string;
}

export type ReadOnlyShellEnvResult = { ok: true; env: Record<string, string> } | { ok: false; reason: string };

/**
 * Keeps the absolute entries of a PATH value that resolve (through symlinks) outside the workspace.
 * Empty and relative entries go (bash looks them up from the working directory), and so do
 * entries that do not exist (nothing can be run from them today, and one might appear later).
 */
export async function sanitisedPath(value: string | undefined, workspaceRoot: string): Promise<string> {
  const kept = safeSearchPath(value, [workspaceRoot]);
  return kept.length > 0 ? kept.join(path.delimiter) : NOTHING_PATH;
}

/**
 * The allowlisted part of `env` (see KEPT_AS_IS), with TERM=dumb and a TMPDIR only when it lies
 * outside the workspace. PATH is set separately.
 */
export function cleanEnvironment(env: Record<string, string>, workspaceRoot: string): Record<string, string> {
  const clean: Record<string, string> = { TERM: 'dumb' };
  for (const key of KEPT_AS_IS) if (env[key] !== undefined && env[key] !== '') clean[key] = env[key];
  for (const key of KEPT_IF_PLAIN) if (env[key] !== undefined && isHarmlessAssignment(key, env[key])) clean[key] = env[key];
  const tmp = env.TMPDIR;
  if (tmp && path.isAbsolute(tmp) && !isWithin(workspaceRoot, path.resolve(tmp))) clean.TMPDIR = tmp;
  return clean;
}

/**
 * The environment for a command that runs on the read-only verdict alone (the classifier's
 * author requires it for the verdict to hold): the clean environment, gitNeutralisingEnv, and a
 * sanitised PATH with git's safe wrapper (gitWrapper.ts) in front. Fails (closed) when the wrapper
 * cannot be put where the model cannot change it. Without git on that PATH no git can run, so no
 * wrapper is needed.
 */
export async function readOnlyShellEnv(request: ReadOnlyShellEnvRequest): Promise<ReadOnlyShellEnvResult> {
  // Not inherited, so neither BASH_ENV/ENV (a file bash -c sources first) nor BASH_FUNC_* (exported
  // functions that would replace the command the classifier checked) can reach the command.
  const env: Record<string, string> = {
    ...cleanEnvironment(request.env, request.workspaceRoot),
    ...gitNeutralisingEnv(),
    // git looks for a repository no higher than the workspace (a home folder under git, say).
    GIT_CEILING_DIRECTORIES: path.dirname(request.workspaceRoot),
  };
  const searchPath = await sanitisedPath(request.env.PATH, request.workspaceRoot);
  env.PATH = searchPath;
  const excluded = [request.workspaceRoot];
  const git = findProgram('git', { pathValue: searchPath, excluded });
  if (!git) return { ok: true, env };
  const grep = findProgram('grep', { pathValue: searchPath, excluded });
  const bash = BASH_LOCATIONS.find((candidate) => existsSync(candidate));
  if (!grep || !bash) return { ok: false, reason: `git's safe wrapper needs ${bash ? 'grep' : 'bash'}, which was not found` };
  const wrapper = await gitWrapperDir({ git, bash, grep }, request.workspaceRoot);
  if (!wrapper.ok) return wrapper;
  env.PATH = `${wrapper.dir}${path.delimiter}${searchPath}`;
  return { ok: true, env };
}
