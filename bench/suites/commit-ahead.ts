// Commit ahead (src/core/git): what Tab costs to apply a commit made in the sandbox (objects copied,
// the ref moved by update-ref, HEAD and the index under git's locks) against the same `git commit`
// run live, on twin repositories; and the sandboxed commit itself, which the user does not wait for.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { processLock } from '../../src/core/fs/workspaceLock';
import { SpeculatedGit } from '../../src/core/git/speculatedGit';
import { LinuxSandbox } from '../../src/core/sandbox/linuxSandbox';
import type { Figure } from '../types';

const SAMPLES = 15;
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: os.tmpdir(), GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' };

function git(dir: string, ...args: string[]): void {
  execFileSync('git', args, { cwd: dir, env: ENV, stdio: 'ignore' });
}

async function repository(dir: string): Promise<void> {
  await mkdir(path.join(dir, 'src'), { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Bench');
  git(dir, 'config', 'user.email', 'bench@example.com');
  for (let i = 0; i < 200; i++) await writeFile(path.join(dir, 'src', `file${i}.ts`), `export const value${i} = ${i};\n`);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'start');
  await writeFile(path.join(dir, 'src', 'file7.ts'), 'export const value7 = 77;\n');
}

export default async function commitAhead(): Promise<Figure[]> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-commit-ahead-')));
  const sandbox = new LinuxSandbox({ tmpRoot: base, hostEnv: { PATH: ENV.PATH, HOME: base, LANG: 'C.UTF-8' } });
  const apply: number[] = [];
  const live: number[] = [];
  const ahead: number[] = [];
  try {
    const availability = await sandbox.probe();
    if (!availability.available || availability.writes !== 'overlay') throw new Error('commit-ahead bench: no namespace sandbox on this machine');
    for (let i = 0; i <= SAMPLES; i++) {
      const speculated = path.join(base, `ahead-${i}`);
      const twin = path.join(base, `live-${i}`);
      await repository(speculated);
      await repository(twin);
      const opened = await SpeculatedGit.open(speculated, base);
      if ('refused' in opened) throw new Error(opened.refused);
      const started = performance.now();
      const outcome = await sandbox.run({ command: "git commit -q -am 'Change value7'", cwd: speculated, workspace: { root: speculated, writable: true }, limits: { timeoutMs: 60_000, maxOutputBytes: 65_536, maxWriteBytes: 64 << 20 }, git: await opened.access() });
      if (!outcome.ok || outcome.result.exitCode !== 0 || !outcome.result.gitUpper) throw new Error(`commit-ahead bench: the sandboxed commit failed (${outcome.ok ? outcome.result.output : outcome.reason})`);
      const absorbed = await opened.absorb(outcome.result.gitUpper);
      await outcome.result.dispose();
      if (!absorbed.ok) throw new Error(absorbed.detail);
      const aheadMs = performance.now() - started;
      const applyStart = performance.now();
      const result = await opened.apply({ lock: processLock(speculated), journalDir: path.join(base, 'journal') });
      const applyMs = performance.now() - applyStart;
      if (!result?.ok) throw new Error('commit-ahead bench: the apply did not go through');
      const liveStart = performance.now();
      git(twin, 'commit', '-q', '-am', 'Change value7');
      const liveMs = performance.now() - liveStart;
      await opened.dispose();
      if (i === 0) continue; // warm-up
      apply.push(applyMs);
      live.push(liveMs);
      ahead.push(aheadMs);
    }
  } finally {
    await rm(base, { recursive: true, force: true });
  }
  return [
    { name: 'commit ahead: apply on Tab (objects, update-ref transaction, HEAD and index under their locks)', unit: 'ms', samples: apply, note: `${SAMPLES} samples, a 200-file repository, one changed file; includes reading the layer and the refs for the compare-and-swap` },
    { name: 'commit ahead: the same git commit run live', unit: 'ms', samples: live, note: 'git commit -q -am in a twin repository (one process)' },
    { name: 'commit ahead: the commit made in the sandbox and read back (hidden from the user)', unit: 'ms', samples: ahead, note: 'sandbox start with the .git overlay, git commit, absorb into the layer and the preview' },
  ];
}
