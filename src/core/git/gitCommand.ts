// Runs the real git for commit-ahead's own steps outside the sandbox (reading refs, update-ref,
// the preview's log): with the settings a hostile repository config could use to run programs
// overridden (hooks, fsmonitor, pager, gpg …, gitEnv.ts), and nothing of the user's shell on the way.
import { spawn } from 'node:child_process';
import { gitNeutralisingEnv } from '../shell/gitEnv';

export interface GitCommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface GitCommandOptions {
  /** The repository's .git folder, named explicitly: no discovery walks up from a working folder. */
  gitDir: string;
  /** Written to git's stdin, then closed. */
  input?: string;
  /** Extra variables, e.g. GIT_OBJECT_DIRECTORY for a view of speculated objects. */
  env?: Record<string, string>;
  /** The user's global config is left out unless this is set (only `git var` for the identity needs it). */
  userConfig?: boolean;
}

/**
 * The environment of every accept-time git: the neutralising overrides (core.hooksPath=/dev/null
 * keeps update-ref's reference-transaction hook from running, core.fsmonitor=false keeps
 * index reads from starting a monitor), no terminal prompts, C locale for parseable messages.
 */
export function hardenedGitEnv(options: Pick<GitCommandOptions, 'gitDir' | 'env' | 'userConfig'>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LC_ALL: 'C',
    GIT_DIR: options.gitDir,
    ...gitNeutralisingEnv(),
    ...(options.env ?? {}),
  };
  if (options.userConfig) {
    if (process.env.HOME) env.HOME = process.env.HOME;
    if (process.env.XDG_CONFIG_HOME) env.XDG_CONFIG_HOME = process.env.XDG_CONFIG_HOME;
    delete env.GIT_CONFIG_GLOBAL;
    delete env.GIT_CONFIG_NOSYSTEM;
  }
  return env;
}

export function runGit(args: readonly string[], options: GitCommandOptions): Promise<GitCommandResult> {
  return new Promise((resolve) => {
    const child = spawn('git', [...args], { cwd: '/', env: hardenedGitEnv(options), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => resolve({ code: null, stdout: '', stderr: error.message }));
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(options.input ?? '');
  });
}

/** Like runGit, but a non-zero exit is an error naming the command and git's message. */
export async function gitOrThrow(args: readonly string[], options: GitCommandOptions): Promise<string> {
  const result = await runGit(args, options);
  if (result.code !== 0) throw new Error(`git ${args[0]} failed: ${result.stderr.trim() || `exit ${result.code}`}`);
  return result.stdout;
}
