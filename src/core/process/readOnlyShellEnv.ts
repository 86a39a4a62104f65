// The environment a shell command runs in when it runs only because the classifier judged it
// read-only: git's configurable programs switched off, and a PATH through which no program name can
// resolve to a file the workspace (and so the model) controls.
import { realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { isWithin } from '../fs/paths';
import { GIT_FILTER_SETTINGS_QUERY, gitNeutralisingEnv } from '../shell/gitEnv';
import type { ProcessRunner } from './processRunner';

/** Used when no entry of the PATH survives; an empty PATH would mean "the working directory". */
const FALLBACK_PATH_ENTRIES = ['/usr/local/bin', '/usr/bin', '/bin'];
/** A PATH that finds nothing: only commands named by absolute path can run. */
const NOTHING_PATH = '/nonexistent/no-safe-path';
/** Listing filter settings reads config files only; a query that hangs is not waited for. */
const FILTER_QUERY_TIMEOUT_MS = 10_000;
const FILTER_QUERY_MAX_BYTES = 256 * 1024;

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
  const keep = async (entries: readonly string[]): Promise<string[]> => {
    const kept: string[] = [];
    for (const entry of entries) {
      if (!path.isAbsolute(entry)) continue;
      const absolute = path.resolve(entry);
      if (isWithin(workspaceRoot, absolute)) continue;
      let real: string;
      try {
        real = await realpath(absolute);
      } catch {
        continue;
      }
      // The resolved form is what runs, so a symlink swapped later cannot redirect the lookup.
      if (!isWithin(workspaceRoot, real) && !kept.includes(real)) kept.push(real);
    }
    return kept;
  };
  const kept = await keep((value ?? '').split(':'));
  if (kept.length > 0) return kept.join(':');
  const fallback = await keep(FALLBACK_PATH_ENTRIES);
  return fallback.length > 0 ? fallback.join(':') : NOTHING_PATH;
}

/** Quotes one word for bash -c. */
function shellWord(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The environment for a command that runs on the read-only verdict alone (the classifier's
 * author requires it for the verdict to hold): gitNeutralisingEnv with the repository's filter
 * drivers switched off too, a sanitised PATH, and no variables that make bash run a file or a
 * function before or instead of the command. Fails (closed) when the filter settings cannot be
 * listed completely.
 */
export async function readOnlyShellEnv(request: ReadOnlyShellEnvRequest): Promise<ReadOnlyShellEnvResult> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(request.env)) {
    // BASH_ENV/ENV name a file bash -c sources first (a relative one is read from the workspace);
    // BASH_FUNC_* are exported functions that would replace the command the classifier checked.
    if (key === 'BASH_ENV' || key === 'ENV' || key.startsWith('BASH_FUNC_')) continue;
    env[key] = value;
  }
  env.PATH = await sanitisedPath(request.env.PATH, request.workspaceRoot);

  // The query itself runs with the neutralising environment and the sanitised PATH: git config
  // runs no configured program, and `git` cannot be a workspace file.
  const query = `git ${GIT_FILTER_SETTINGS_QUERY.map(shellWord).join(' ')} 2>/dev/null`;
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
