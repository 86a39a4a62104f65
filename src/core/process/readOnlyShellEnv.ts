// The environment a shell command runs in when it runs only because the classifier judged it
// read-only: an allowlist of the session's variables (no secrets), git's configurable programs
// switched off, and a PATH through which no program name can resolve to a workspace file.
import * as path from 'node:path';
import { isWithin } from '../fs/paths';
import { isHarmlessAssignment } from '../shell/environment';
import { GIT_FILTER_SETTINGS_QUERY, gitNeutralisingEnv } from '../shell/gitEnv';
import type { ProcessRunner } from './processRunner';
import { findProgram, safeSearchPath } from '../fs/programSearch';

/** A PATH that finds nothing: only commands named by absolute path can run. */
const NOTHING_PATH = '/nonexistent/no-safe-path';
/** Listing filter settings reads config files only; a query that hangs is not waited for. */
const FILTER_QUERY_TIMEOUT_MS = 10_000;
const FILTER_QUERY_MAX_BYTES = 256 * 1024;

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
  /** The command's working directory: the repository whose filter settings count. */
  cwd: string;
  processRunner: ProcessRunner;
  signal?: AbortSignal;
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

/** Quotes one word for bash -c. */
function shellWord(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The environment for a command that runs on the read-only verdict alone (the classifier's
 * author requires it for the verdict to hold): the clean environment, gitNeutralisingEnv with the
 * repository's filter drivers switched off too, and a sanitised PATH. Fails (closed) when the
 * filter settings cannot be listed completely. Without git on that PATH no git can run, so there
 * is nothing to list.
 */
export async function readOnlyShellEnv(request: ReadOnlyShellEnvRequest): Promise<ReadOnlyShellEnvResult> {
  // Not inherited, so neither BASH_ENV/ENV (a file bash -c sources first) nor BASH_FUNC_* (exported
  // functions that would replace the command the classifier checked) can reach the command.
  const env = cleanEnvironment(request.env, request.workspaceRoot);
  env.PATH = await sanitisedPath(request.env.PATH, request.workspaceRoot);

  // The query itself runs with the neutralising environment, and git by absolute path from that
  // PATH: git config runs no configured program, and `git` cannot be a workspace file.
  const git = findProgram('git', { pathValue: env.PATH, excluded: [request.workspaceRoot] });
  if (!git) return { ok: true, env: { ...env, ...gitNeutralisingEnv() } };
  const query = `${shellWord(git)} ${GIT_FILTER_SETTINGS_QUERY.map(shellWord).join(' ')} 2>/dev/null`;
  let listed: Awaited<ReturnType<ProcessRunner['run']>>;
  try {
    listed = await request.processRunner.run(query, {
      cwd: request.cwd,
      timeoutMs: FILTER_QUERY_TIMEOUT_MS,
      maxOutputBytes: FILTER_QUERY_MAX_BYTES,
      ...(request.signal ? { signal: request.signal } : {}),
      env: { ...env, ...gitNeutralisingEnv() },
    });
  } catch (error) {
    return { ok: false, reason: `the repository's git filter settings could not be listed (${error instanceof Error ? error.message : String(error)})` };
  }
  if (listed.timedOut || listed.exitCode === null) {
    return { ok: false, reason: "listing the repository's git filter settings did not finish" };
  }
  if (listed.truncated) {
    return { ok: false, reason: 'the repository configures more git filters than can be switched off' };
  }
  // Exit code 1 means "no filters"; any other failure (no git, a broken config) stops the
  // command's own git the same way before it could run a filter.
  return { ok: true, env: { ...env, ...gitNeutralisingEnv(listed.output.split('\n')) } };
}
