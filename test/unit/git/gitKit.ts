// A real repository in a throw-away folder, the namespace sandbox over it, and a SpeculatedGit:
// runs git commands ahead as a speculation would and compares the result with the same commands
// run live in a twin repository.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile, lstat, readlink } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { processLock } from '../../../src/core/fs/workspaceLock';
import { SpeculatedGit } from '../../../src/core/git/speculatedGit';
import { LinuxSandbox } from '../../../src/core/sandbox/linuxSandbox';
import type { SandboxResult } from '../../../src/core/sandbox/shellSandbox';

export const IDENTITY = { GIT_AUTHOR_NAME: 'Ada Tester', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada Tester', GIT_COMMITTER_EMAIL: 'ada@example.com' };

/** Runs git in `dir` as the user would (their identity, no global config). */
/** Whether this machine's namespace sandbox gives commands an overlay (commit ahead runs only there). */
export async function overlaySandboxAvailable(): Promise<boolean> {
  const probe = await new LinuxSandbox().probe();
  return probe.available && probe.writes === 'overlay';
}

export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, GIT_CONFIG_NOSYSTEM: '1', ...IDENTITY } }).trim();
}

/** A digest of every file, folder and symlink under `dir` (paths, modes, bytes): equal digests, equal trees. */
export async function treeDigest(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const visit = async (relative: string): Promise<void> => {
    const names = (await readdir(path.join(dir, relative))).sort();
    for (const name of names) {
      const file = path.join(relative, name);
      const info = await lstat(path.join(dir, file));
      hash.update(`${file}\0${info.mode}\0`);
      if (info.isDirectory()) await visit(file);
      else if (info.isSymbolicLink()) hash.update(await readlink(path.join(dir, file)));
      else hash.update(await readFile(path.join(dir, file)));
    }
  };
  await visit('');
  return hash.digest('hex');
}

export class GitKit {
  private constructor(readonly base: string, readonly workspace: string, readonly sandbox: LinuxSandbox, readonly state: string) {}

  static async create(): Promise<GitKit> {
    const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-git-test-')));
    const workspace = path.join(base, 'workspace');
    const state = path.join(base, 'state');
    for (const dir of [workspace, state, path.join(base, 'sandbox-tmp'), path.join(base, 'home')]) await mkdir(dir);
    git(workspace, 'init', '-q', '-b', 'main');
    git(workspace, 'config', 'user.name', IDENTITY.GIT_AUTHOR_NAME);
    git(workspace, 'config', 'user.email', IDENTITY.GIT_AUTHOR_EMAIL);
    await writeFile(path.join(workspace, 'a.txt'), 'one\n');
    git(workspace, 'add', 'a.txt');
    git(workspace, 'commit', '-q', '-m', 'first');
    const hostEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.join(base, 'home'), LANG: 'C.UTF-8' };
    return new GitKit(base, workspace, new LinuxSandbox({ tmpRoot: path.join(base, 'sandbox-tmp'), hostEnv }), state);
  }

  /** A copy of the workspace (repository included) to make the same commit live in. */
  twin(): string {
    const dir = path.join(this.base, `twin-${Math.random().toString(36).slice(2, 8)}`);
    execFileSync('cp', ['-a', this.workspace, dir]);
    return dir;
  }

  async open(): Promise<SpeculatedGit> {
    const opened = await SpeculatedGit.open(this.workspace, path.join(this.base, 'sandbox-tmp'));
    if ('refused' in opened) throw new Error(opened.refused);
    return opened;
  }

  /** Runs `command` in the sandbox with .git writable over the speculation's layer, and absorbs its git writes when it succeeded. */
  async ahead(speculated: SpeculatedGit, command: string): Promise<{ result: SandboxResult; absorbed: Awaited<ReturnType<SpeculatedGit['absorb']>> | undefined }> {
    const access = await speculated.access();
    const outcome = await this.sandbox.run({
      command,
      cwd: this.workspace,
      workspace: { root: this.workspace, writable: true },
      limits: { timeoutMs: 30_000, maxOutputBytes: 64 * 1024, maxWriteBytes: 64 * 1024 * 1024 },
      git: access,
    });
    if (!outcome.ok) throw new Error(outcome.reason);
    const result = outcome.result;
    try {
      const absorbed = result.exitCode === 0 && result.gitUpper ? await speculated.absorb(result.gitUpper) : undefined;
      return { result, absorbed };
    } finally {
      await result.dispose();
    }
  }

  lock() {
    return processLock(this.workspace);
  }

  async gitDigest(): Promise<string> {
    return treeDigest(path.join(this.workspace, '.git'));
  }

  async cleanup(): Promise<void> {
    await rm(this.base, { recursive: true, force: true });
  }
}

/** The commit a ref points at: tree, parents, message (dates left out: they may differ). */
export function commitShape(dir: string, rev: string): { tree: string; parents: string; message: string; author: string } {
  return {
    tree: git(dir, 'rev-parse', `${rev}^{tree}`),
    parents: git(dir, 'log', '-1', '--format=%P', rev),
    message: git(dir, 'log', '-1', '--format=%B', rev),
    author: git(dir, 'log', '-1', '--format=%an <%ae>', rev),
  };
}

export function assertSameCommit(a: string, b: string, rev = 'HEAD'): void {
  assert.deepEqual(commitShape(a, rev), commitShape(b, rev));
}
