// The real ProcessRunner: a shell command in its own process group, so a timeout or an abort stops
// everything it started (pipelines, background jobs), with its combined output capped.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { ProcessRunner } from './processRunner';

export interface NodeProcessRunnerOptions {
  /**
   * Absolute path of the bash run as `<shell> -c <command>`; by default the first of
   * BASH_LOCATIONS that exists. Never the user's login shell ($SHELL): the read-only classifier
   * judges commands as bash reads them.
   */
  shell?: string;
  /** Time between SIGTERM and SIGKILL after a timeout (default 2000 ms). */
  killGraceMs?: number;
  /**
   * After the shell exits, how long to wait for background jobs that still hold its output open
   * before returning without them (default 250 ms).
   */
  drainMs?: number;
}

type RunOptions = Parameters<ProcessRunner['run']>[1];
type RunResult = Awaited<ReturnType<ProcessRunner['run']>>;

/**
 * Keeps the start and the end of a long output (compiler errors come first, test summaries last)
 * within a byte budget.
 */
export class OutputCap {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(private readonly maxBytes: number) {
    this.headLimit = Math.ceil(maxBytes * 0.6);
    this.tailLimit = maxBytes - this.headLimit;
  }

  add(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(rest.length, this.headLimit - this.headBytes);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.tailLimit === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > this.tailLimit && this.tail.length > 0) {
      const excess = this.tailBytes - this.tailLimit;
      const first = this.tail[0];
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  get truncated(): boolean {
    return this.total > this.maxBytes;
  }

  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    if (!this.truncated) return head + tail;
    const omitted = this.total - this.headBytes - this.tailBytes;
    return `${head}\n… [${omitted} bytes of output omitted] …\n${tail}`;
  }
}

/** Where bash is looked for; fixed paths, so a PATH entry (or the workspace) cannot supply it. */
export const BASH_LOCATIONS: readonly string[] = ['/bin/bash', '/usr/bin/bash', '/usr/local/bin/bash', '/opt/homebrew/bin/bash'];

function defaultShell(): string | undefined {
  return BASH_LOCATIONS.find((candidate) => existsSync(candidate));
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    // A negative pid addresses the whole process group the detached shell leads.
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export class NodeProcessRunner implements ProcessRunner {
  private readonly shell: string | undefined;
  private readonly killGraceMs: number;
  private readonly drainMs: number;

  constructor(options: NodeProcessRunnerOptions = {}) {
    // A relative name would be looked up on the command's PATH, which may point into the workspace.
    if (options.shell !== undefined && !path.isAbsolute(options.shell)) {
      throw new Error(`The shell must be given by absolute path (got "${options.shell}").`);
    }
    this.shell = options.shell ?? defaultShell();
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.drainMs = options.drainMs ?? 250;
  }

  run(command: string, options: RunOptions): Promise<RunResult> {
    const { signal } = options;
    if (signal?.aborted) {
      return Promise.resolve({ exitCode: null, signal: null, output: '', truncated: false, timedOut: false });
    }
    const shell = this.shell;
    if (shell === undefined) {
      // No silent fallback to sh: commands are written, and judged read-only, as bash.
      return Promise.reject(new Error(`Shell commands need bash, which was not found (looked in ${BASH_LOCATIONS.join(', ')}). Install bash to run them.`));
    }
    return new Promise((resolve, reject) => {
      const output = new OutputCap(options.maxOutputBytes);
      let timedOut = false;
      let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      let settled = false;
      const timers: NodeJS.Timeout[] = [];

      // Not a login or interactive shell: no profile or rc file runs before the command.
      const child = spawn(shell, ['-c', command], {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });

      const finish = () => {
        if (settled || !exit) return;
        settled = true;
        timers.forEach(clearTimeout);
        signal?.removeEventListener('abort', onAbort);
        child.stdout?.destroy();
        child.stderr?.destroy();
        resolve({ exitCode: exit.code, signal: exit.signal, output: output.text(), truncated: output.truncated, timedOut });
      };

      const onAbort = () => killGroup(child.pid, 'SIGKILL');
      signal?.addEventListener('abort', onAbort, { once: true });

      if (options.timeoutMs > 0) {
        timers.push(
          setTimeout(() => {
            timedOut = true;
            killGroup(child.pid, 'SIGTERM');
            // Not cleared on return: a job ignoring SIGTERM must still be stopped.
            setTimeout(() => killGroup(child.pid, 'SIGKILL'), this.killGraceMs).unref();
          }, options.timeoutMs),
        );
      }

      child.stdout?.on('data', (chunk: Buffer) => output.add(chunk));
      child.stderr?.on('data', (chunk: Buffer) => output.add(chunk));
      child.on('error', (error) => {
        if (settled) return;
        settled = true;
        timers.forEach(clearTimeout);
        signal?.removeEventListener('abort', onAbort);
        reject(new Error(`Could not start ${shell} in ${options.cwd}: ${error.message}`));
      });
      child.on('exit', (code, exitSignal) => {
        exit = { code, signal: exitSignal };
        // Background jobs may keep the pipes open; give them a moment, then return without them.
        timers.push(setTimeout(finish, this.drainMs));
      });
      child.on('close', () => finish());
    });
  }
}
