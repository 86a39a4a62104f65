// A real sandbox over a throw-away workspace for the namespace scenarios: a workspace next to an
// "outside" folder and a home folder that each hold a secret, layers built from content files,
// and checks that a run left no process and no file of its own behind.
import * as assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SANDBOX_CLOCK_SLACK_MS } from '../../../src/core/followup/overlayFs';
import { LinuxSandbox } from '../../../src/core/sandbox/linuxSandbox';
import type { SandboxLayer, SandboxLimits, SandboxOutcome, SandboxResult, SandboxSession } from '../../../src/core/sandbox/shellSandbox';
import type { LinuxSandboxOptions } from '../../../src/core/sandbox/linuxSandbox';

export const OUTSIDE_SECRET = 'outside-secret-7f3a';
export const HOME_SECRET = 'home-secret-91c2';
export const ENV_SECRET = 'sk-env-secret-5d0e';

export interface RunOptions {
  writable?: boolean;
  layer?: SandboxLayer;
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
  cwd?: string;
  /** The speculation the run belongs to: its runs share one kept sandbox. */
  session?: SandboxSession;
}

/**
 * The kept sandbox's keeper: the build's, or (in the bundled child that runs as another user, whose
 * code lies in a temp folder) the copy named by SPECULATE_TEST_KEEPER.
 */
export function testKeeper(): string {
  return process.env.SPECULATE_TEST_KEEPER ?? path.join(process.cwd(), 'dist/native/sandbox-keeper');
}

export class SandboxKit {
  private constructor(
    /** Holds everything of this kit; removed by cleanup(). */
    readonly base: string,
    readonly workspace: string,
    readonly outside: string,
    readonly home: string,
    /** The sandbox's own temp folder: must be empty after every run. */
    readonly sandboxTmp: string,
    readonly sandbox: LinuxSandbox,
  ) {}

  static async create(): Promise<SandboxKit> {
    const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-sandbox-test-')));
    const workspace = path.join(base, 'workspace');
    const outside = path.join(base, 'outside');
    const home = path.join(base, 'home');
    const sandboxTmp = path.join(base, 'sandbox-tmp');
    for (const dir of [workspace, outside, home, sandboxTmp, path.join(base, 'blobs')]) await mkdir(dir);
    await writeFile(path.join(outside, 'secret.txt'), OUTSIDE_SECRET);
    await writeFile(path.join(home, 'secret.txt'), HOME_SECRET);
    return new SandboxKit(base, workspace, outside, home, sandboxTmp, new LinuxSandbox(SandboxKit.options(sandboxTmp, home)));
  }

  private static options(sandboxTmp: string, home: string): LinuxSandboxOptions {
    const hostEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', OPENAI_API_KEY: ENV_SECRET, GITHUB_TOKEN: ENV_SECRET };
    return { tmpRoot: sandboxTmp, hostEnv, writeCheckMs: 100, keeper: testKeeper() };
  }

  /** Another sandbox over the same folders, with some options changed. */
  sandboxWith(options: Partial<LinuxSandboxOptions>): LinuxSandbox {
    return new LinuxSandbox({ ...SandboxKit.options(this.sandboxTmp, this.home), ...options });
  }

  async write(relative: string, content: string, mode = 0o644): Promise<void> {
    const target = path.join(this.workspace, relative);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
    await chmod(target, mode);
  }

  async link(relative: string, target: string): Promise<void> {
    await symlink(target, path.join(this.workspace, relative));
  }

  read(relative: string): Promise<string> {
    return readFile(path.join(this.workspace, relative), 'utf8');
  }

  private blobs = 0;

  /** A content file for a layer, stored outside the workspace as the overlay stores its blobs. */
  async blob(content: string, mode = 0o644): Promise<string> {
    const file = path.join(this.base, 'blobs', String(++this.blobs));
    await writeFile(file, content);
    await chmod(file, mode);
    return file;
  }

  async outcome(command: string, options: RunOptions = {}, sandbox: LinuxSandbox = this.sandbox): Promise<SandboxOutcome> {
    return sandbox.run({
      command,
      cwd: options.cwd ?? this.workspace,
      workspace: { root: this.workspace, writable: options.writable ?? true, ...(options.layer ? { layer: options.layer } : {}) },
      limits: { timeoutMs: 20_000, maxOutputBytes: 64 * 1024, maxWriteBytes: 64 * 1024 * 1024, ...options.limits },
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.session ? { session: options.session } : {}),
    });
  }

  /** Runs and returns the result (asserting the sandbox ran); the caller disposes it. */
  async run(command: string, options: RunOptions = {}, sandbox: LinuxSandbox = this.sandbox): Promise<SandboxResult> {
    const outcome = await this.outcome(command, options, sandbox);
    assert.ok(outcome.ok, `the sandbox should run the command: ${outcome.ok ? '' : outcome.reason}`);
    return outcome.result;
  }

  /** Runs in a session's kept sandbox, asserts it succeeded, disposes, and returns its output. */
  async runOnceIn(session: SandboxSession, command: string, limits?: Partial<SandboxLimits>): Promise<string> {
    const result = await this.run(command, { session, ...(limits ? { limits } : {}) });
    await result.dispose();
    assert.equal(result.exitCode, 0, result.output);
    return result.output;
  }

  /** Runs, disposes, and checks that nothing of the run stayed in the sandbox's temp folder. */
  async runOnce(command: string, options: RunOptions = {}): Promise<SandboxResult> {
    const result = await this.run(command, options);
    await result.dispose();
    await this.assertNothingLeft();
    return result;
  }

  async assertNothingLeft(): Promise<void> {
    const left: string[] = [];
    const walk = async (dir: string) => {
      for (const name of await readdir(dir)) {
        const child = path.join(dir, name);
        left.push(path.relative(this.sandboxTmp, child));
        await walk(child).catch(() => undefined);
      }
    };
    await walk(this.sandboxTmp);
    // The per-user parent folder may stay (empty), like the overlay's; nothing below it.
    assert.deepEqual(left.filter((entry) => entry.includes('/')), [], 'nothing of the run is left in the temp folder');
  }

  async cleanup(): Promise<void> {
    await rm(this.base, { recursive: true, force: true });
  }
}

/** Processes whose command line contains a marker, found through /proc (the test's own view). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) found.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** The kept sandboxes' keepers (and the commands' PID 1s they fork) whose sessions lie below `folder`. */
export function keeperProcesses(folder: string): number[] {
  return processesWith(folder).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0].endsWith('/sandbox-keeper');
    } catch {
      return false;
    }
  });
}

/** Processes whose program name (argv[0], as `exec -a` sets it) is exactly `name`. */
export function processesNamed(name: string): number[] {
  return processesWith(name).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === name;
    } catch {
      return false;
    }
  });
}

export function sorted(changes: SandboxResult['changes']): string[] {
  return changes.map((change) => (change.kind === 'write' ? `write ${change.path} ${change.mode.toString(8)}` : `delete ${change.type} ${change.path}`)).sort();
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the files a test just made are older than the overlay's clock slack. A sandboxed
 * command's change is held against a file (or, for a new file, its folder) that changed within that
 * slack of the command's start as "the user may have changed it meanwhile" (a new file then shows as
 * modified and accept asks). A fixture written just before the run would trip that by accident; a
 * real workspace has not been touched in the same 100 ms.
 */
export async function fixtureSettled(): Promise<void> {
  await sleep(SANDBOX_CLOCK_SLACK_MS + 20);
}
