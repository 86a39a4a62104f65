// The speculation sandbox's costs and gains (SANDBOX.md): start overhead per command against a plain
// `bash -c` measured in the same run (a fresh sandbox, and the first and later commands of a
// speculation on both backends, beside bwrap), making 0 / 10 / 1000 earlier overlay writes visible to the
// command, reading back 1 / 100 / 10 000 files the command changed, and on the recorded demo session
// the share of suggestions that run ahead to the end without a boundary, with and without it.
import { chmod, cp, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { NodeProcessRunner } from '../../src/core/process/nodeProcessRunner';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { LandlockSandbox } from '../../src/core/sandbox/landlockSandbox';
import { LinuxSandbox } from '../../src/core/sandbox/linuxSandbox';
import type { ShellSandbox } from '../../src/core/sandbox/shellSandbox';
import { readBack } from '../../src/core/sandbox/readback';
import type { SandboxLayer, SandboxRunRequest, SandboxSession } from '../../src/core/sandbox/shellSandbox';
import { startSpeculation, type SpeculationSnapshot } from '../../src/core/followup/speculation';
import { OpenAiCompatibleClient } from '../../src/core/llm/openAiCompatibleClient';
import type { ChatSession } from '../../src/core/session';
import { openWorkspaceServices } from '../../src/core/workspaceServices';
import { demoReply } from '../../test/fixtures/scripted/demoScript';
import { ScriptedServer } from '../../test/fixtures/scriptedServer';
import { loadRecordedSession, recordedSessionChat, replayRecordedSession, SessionWatcher } from '../lib/recordedSession';
import type { Figure } from '../types';

const START_SAMPLES = 41;
const LAYER_SIZES = [0, 10, 1000];
const LAYER_SAMPLES = 15;
const READBACK_SIZES = [1, 100, 10_000];
const READBACK_SAMPLES = 9;
const LIMITS = { timeoutMs: 60_000, maxOutputBytes: 64 * 1024, maxWriteBytes: 256 * 1024 * 1024 };

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[samples.length >> 1];

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await run();
  return { ms: performance.now() - start, value };
}

async function runOk(sandbox: ShellSandbox, request: SandboxRunRequest): Promise<void> {
  const outcome = await sandbox.run(request);
  if (!outcome.ok) throw new Error(`sandbox bench: the run failed: ${outcome.reason}`);
  if (outcome.result.exitCode !== 0) throw new Error(`sandbox bench: the command failed: ${outcome.result.output}`);
  await outcome.result.dispose();
}

/** A layer of `count` files the speculation wrote (content files stored like the overlay's blobs; a new `version` is new blobs, as a rewrite is). */
async function makeLayer(dir: string, count: number, version = 0): Promise<SandboxLayer> {
  const files: { path: string; contentPath: string; mode: number }[] = [];
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const contentPath = path.join(dir, `blob${i}-v${version}`);
    await writeFile(contentPath, `export const speculated${i} = ${i};\n`, { mode: 0o644 });
    files.push({ path: `src/pkg${Math.floor(i / 100)}/file${i}.ts`, contentPath, mode: 0o644 });
  }
  return { files, deletedFiles: [], deletedDirs: [] };
}

const FIRST_SAMPLES = 9;
const LATER_SAMPLES = 31;

/** bubblewrap (Debian's 0.8) with the namespaces the namespace backend makes, the system read-only and the workspace bound read-only (0.8 has no overlay). */
function bwrapArgs(workspace: string): string[] {
  const args = ['--unshare-user', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', '--new-session'];
  for (const dir of ['/usr', '/etc', '/opt', '/bin', '/sbin', '/lib', '/lib32', '/lib64']) {
    if (!existsSync(dir)) continue;
    const info = lstatSync(dir);
    args.push(...(info.isSymbolicLink() ? ['--symlink', readlinkSync(dir), dir] : ['--ro-bind', dir, dir]));
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--ro-bind', workspace, workspace, '--chdir', workspace, '--clearenv', '--setenv', 'PATH', '/usr/bin:/bin', '/bin/bash', '--norc', '--noprofile', '-c', 'true');
  return args;
}

function runBwrap(workspace: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bwrap', bwrapArgs(workspace), { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`sandbox bench: bwrap failed (${code}): ${stderr}`))));
  });
}

let sessions = 0;

/** A speculation's lifetime, for the kept sandbox: its commands share one sandbox until end(). */
function newSession(): { session: SandboxSession; end: () => void } {
  const lifetime = new AbortController();
  return { session: { id: `bench-${process.pid}-${++sessions}`, lifetime: lifetime.signal }, end: () => lifetime.abort() };
}

/**
 * Per-command overhead over a plain `bash -c true` (interleaved), for a speculation's first command
 * (a sandbox whose probe is done, its first run in a workspace: environment and rules computed; on
 * the namespace backend the speculation's keeper starts with it) and for each later one (on the
 * namespace backend, forked inside the kept sandbox). Every command carries its speculation's
 * session; the Landlock backend has no namespaces to keep and starts each command alike.
 */
async function backendFigures(base: string, label: string, make: (tmpRoot: string) => ShellSandbox, writable: boolean, plainRunner: NodeProcessRunner): Promise<Figure[]> {
  const first: number[] = [];
  const firstPrepared: number[] = [];
  const later: number[] = [];
  const totals = { first: [] as number[], firstPrepared: [] as number[], later: [] as number[], floor: [] as number[] };
  const bare = async () => {
    const ms = (await timed(() => plainRunner.run('true', { cwd: base, timeoutMs: 60_000, maxOutputBytes: 64 * 1024 }))).ms;
    totals.floor.push(ms);
    return ms;
  };
  for (let i = 0; i < FIRST_SAMPLES; i++) {
    const dir = path.join(base, `${label}-first-${i}`);
    const workspace = path.join(dir, 'workspace');
    await mkdir(workspace, { recursive: true });
    await mkdir(path.join(dir, 'tmp'));
    const sandbox = make(path.join(dir, 'tmp'));
    const availability = await sandbox.probe();
    if (!availability.available) throw new Error(`sandbox bench: ${label} is not available (${availability.reason})`);
    const { session, end } = newSession();
    const request: SandboxRunRequest = { command: 'true', cwd: workspace, workspace: { root: workspace, writable }, limits: LIMITS, session };
    const boxed = await timed(() => runOk(sandbox, request));
    first.push(boxed.ms - (await bare()));
    totals.first.push(boxed.ms);
    if (i === 0) {
      for (let j = 0; j <= LATER_SAMPLES; j++) {
        const again = await timed(() => runOk(sandbox, request));
        const floor = await bare();
        if (j > 0) {
          later.push(again.ms - floor);
          totals.later.push(again.ms);
        }
      }
    }
    end();
    if (sandbox.prepareSession) {
      // The same, with the keeper started ahead, as a speculation does while its model writes the first answer.
      const ahead = newSession();
      const prepared = { ...request, session: ahead.session };
      await sandbox.prepareSession(ahead.session, workspace, LIMITS);
      const run = await timed(() => runOk(sandbox, prepared));
      firstPrepared.push(run.ms - (await bare()));
      totals.firstPrepared.push(run.ms);
      ahead.end();
      await sandbox.sessionEnded?.(ahead.session.id);
    }
  }
  const kept = label === 'namespaces';
  const preparedFigure: Figure[] = firstPrepared.length === 0 ? [] : [
    { name: `${label}: first command of a speculation, keeper started ahead, overhead over plain bash -c`, unit: 'ms', samples: firstPrepared, target: '≤ 15 ms median', note: `as above, after prepareSession (the speculation starts its keeper while the model writes its first answer) (${FIRST_SAMPLES} samples); median whole run ${median(totals.firstPrepared).toFixed(1)} ms` },
  ];
  return [
    { name: `${label}: first command of a speculation, overhead over plain bash -c`, unit: 'ms', samples: first, target: '≤ 15 ms median', note: `a fresh sandbox (probe done), its first run in a new workspace${kept ? ', the speculation\'s keeper started by it' : ''} (${FIRST_SAMPLES} samples); median whole run ${median(totals.first).toFixed(1)} ms, ${(median(totals.first) / median(totals.floor)).toFixed(1)}x plain bash -c` },
    ...preparedFigure,
    { name: `${label}: later command of a speculation, overhead over plain bash -c`, unit: 'ms', samples: later, target: '≤ 5 ms median', note: `same speculation and workspace (${LATER_SAMPLES} samples); median whole run ${median(totals.later).toFixed(1)} ms, ${(median(totals.later) / median(totals.floor)).toFixed(1)}x plain bash -c; ${kept ? 'forked inside the kept sandbox: its own mount and pid namespaces, workspace overlay, /tmp, HOME and /proc, no new keeper' : 'each command sets up its own rules (nothing to keep)'}` },
  ];
}

/** Suggestions the demo model makes that need a shell command: they finish only with the sandbox ('commit the change' with commit ahead). */
const SHELL_SUGGESTIONS = ['run the tests', 'build it', 'commit the change'];

/** The demo workspace as a user has it: a repository with one commit, so "commit the change" has something to commit into. */
function makeRepository(dir: string): void {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Demo User');
  git('config', 'user.email', 'demo@example.com');
  git('add', '-A');
  git('commit', '-q', '-m', 'Demo workspace');
}

interface DemoOutcome {
  /** Every speculation of the session that ran to an end of its own (ready, boundary or failed; not aborted). */
  runs: SpeculationSnapshot[];
  accepted: Set<string>;
  /** The final status of a speculation of each SHELL_SUGGESTIONS after the session. */
  shellRuns: { suggestion: string; status: string }[];
}

/** The recorded demo session on a ChatSession with the demo model, with or without the sandbox. */
export async function replayDemo(base: string, withSandbox: boolean): Promise<DemoOutcome> {
  const scratch = path.join(base, withSandbox ? 'demo-with-sandbox' : 'demo-without-sandbox');
  const workspace = path.join(scratch, 'workspace');
  const tmpRoot = path.join(scratch, 'tmp');
  await cp(path.join(process.cwd(), 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
  makeRepository(workspace);
  await mkdir(tmpRoot, { recursive: true });
  const recorded = loadRecordedSession();
  // The demo model without its pacing: only what finishes counts here, not how fast.
  const server = new ScriptedServer({ script: (request) => ({ ...demoReply(request.body ?? {}), latencyMs: 0, tokensPerSecond: undefined }) });
  await server.start();
  let session: ChatSession | undefined;
  try {
    const shellSandbox = withSandbox ? new LinuxSandbox({ tmpRoot, hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.join(scratch, 'home'), LANG: 'C.UTF-8' } }) : undefined;
    const services = await openWorkspaceServices(workspace, { tmpRoot, ...(shellSandbox ? { toolContext: { shellSandbox } } : {}) });
    const llm = new OpenAiCompatibleClient({ baseURL: server.baseUrl, apiKey: 'bench' });
    session = recordedSessionChat(recorded, services, llm);
    const watcher = new SessionWatcher(session, 'sandbox bench');
    await replayRecordedSession(session, recorded, watcher);
    const params = session.cacheSafeParams;
    if (!params) throw new Error('sandbox bench: the session saved no CacheSafeParams');
    const shellRuns: DemoOutcome['shellRuns'] = [];
    for (const suggestion of SHELL_SUGGESTIONS) {
      const run = startSpeculation(suggestion, { llm, params, tools: services.tools, approvalMode: recorded.approvalMode, createOverlay: services.createOverlay, classifyShell: services.classifyShell, toolContext: services.toolContext });
      shellRuns.push({ suggestion, status: (await run.done).status });
      await run.abort();
    }
    return { runs: watcher.finishedSnapshots.filter((run) => run.status !== 'aborted'), accepted: new Set(watcher.accepted), shellRuns };
  } finally {
    await session?.dispose();
    await server.close();
  }
}

function demoFigures(without: DemoOutcome, withSandbox: DemoOutcome): Figure[] {
  const share = (runs: SpeculationSnapshot[]) => (runs.length === 0 ? 0 : (100 * runs.filter((run) => run.status === 'completed').length) / runs.length);
  const describe = (outcome: DemoOutcome) =>
    outcome.runs.map((run) => `"${run.suggestion}" ${run.status === 'completed' ? 'ready' : run.status}${outcome.accepted.has(run.id) ? ' (Tab)' : ''}`).join(', ');
  const acceptedOf = (outcome: DemoOutcome) => outcome.runs.filter((run) => outcome.accepted.has(run.id));
  const shell = (outcome: DemoOutcome) => outcome.shellRuns.filter((run) => run.status === 'completed').length;
  return [
    { name: 'demo session: suggestions that run ahead to the end, without the sandbox', unit: '%', samples: [share(without.runs)], note: describe(without) },
    { name: 'demo session: suggestions that run ahead to the end, with the sandbox', unit: '%', samples: [share(withSandbox.runs)], target: '"run the tests" finishes', note: describe(withSandbox) },
    { name: 'demo session: accepted (Tab) suggestions that finished without a boundary, without the sandbox', unit: '%', samples: [share(acceptedOf(without))], note: 'the recording tabs only ready runs; at a boundary the user typed instead' },
    { name: 'demo session: accepted (Tab) suggestions that finished without a boundary, with the sandbox', unit: '%', samples: [share(acceptedOf(withSandbox))] },
    { name: '"run the tests", "build it" and "commit the change" after the session that finish, without the sandbox', unit: 'count', samples: [shell(without)], note: without.shellRuns.map((r) => `${r.suggestion}: ${r.status}`).join(', ') },
    { name: '"run the tests", "build it" and "commit the change" after the session that finish, with the sandbox', unit: 'count', samples: [shell(withSandbox)], target: 'all three (3)', note: withSandbox.shellRuns.map((r) => `${r.suggestion}: ${r.status}`).join(', ') },
  ];
}

export default async function sandbox(): Promise<Figure[]> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-sandbox-')));
  // As root, the Landlock backend runs commands as a user of their own, who must pass through to the workspace.
  await chmod(base, 0o755);
  const workspace = path.join(base, 'workspace');
  await mkdir(path.join(workspace, 'src'), { recursive: true });
  await writeFile(path.join(workspace, 'package.json'), '{}\n');
  const sandbox = new LinuxSandbox({ tmpRoot: path.join(base, 'tmp'), hostEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: os.homedir(), LANG: 'C.UTF-8' } });
  await mkdir(path.join(base, 'tmp'));
  const plainRunner = new NodeProcessRunner();
  try {
    const availability = await sandbox.probe();
    if (!availability.available) throw new Error(`sandbox bench: no sandbox on this machine (${availability.reason})`);
    const request = (extra: Partial<SandboxRunRequest> = {}): SandboxRunRequest => ({ command: 'true', cwd: workspace, workspace: { root: workspace, writable: true }, limits: LIMITS, ...extra });

    // Start overhead: sandboxed and plain runs interleaved, so both see the same machine load.
    const sandboxed: number[] = [];
    const plain: number[] = [];
    const overhead: number[] = [];
    for (let i = 0; i <= START_SAMPLES; i++) {
      const boxed = await timed(() => runOk(sandbox, request()));
      const bare = await timed(() => plainRunner.run('true', { cwd: workspace, timeoutMs: 60_000, maxOutputBytes: 64 * 1024 }));
      if (i === 0) continue; // warm-up
      sandboxed.push(boxed.ms);
      plain.push(bare.ms);
      overhead.push(boxed.ms - bare.ms);
    }

    // Earlier writes visible, in a speculation's kept sandbox: N files written since its last command
    // (new blobs, as the overlay makes them) against the next command with nothing new, interleaved.
    const layerFigures: Figure[] = [];
    for (const size of LAYER_SIZES) {
      const { session, end } = newSession();
      const blobs = path.join(base, `blobs-${size}`);
      const samples: number[] = [];
      const aheadSamples: number[] = [];
      const takeInSamples: number[] = [];
      const command = size > 0 ? 'test -f src/pkg0/file0.ts' : 'true';
      try {
        for (let i = 0; i <= LAYER_SAMPLES; i++) {
          const layer = await makeLayer(blobs, size, i);
          const withNew = await timed(() => runOk(sandbox, request({ workspace: { root: workspace, writable: true, layer }, command, session })));
          const nothingNew = await timed(() => runOk(sandbox, request({ workspace: { root: workspace, writable: true, layer }, command, session })));
          // As a speculation does: the sandbox takes the new writes in right after they are made, before the command.
          const next = await makeLayer(blobs, size, i + 1000);
          const takeIn = await timed(() => sandbox.prepareSession(session, workspace, LIMITS, next));
          const takenIn = await timed(() => runOk(sandbox, request({ workspace: { root: workspace, writable: true, layer: next }, command, session })));
          const nothingNewAgain = await timed(() => runOk(sandbox, request({ workspace: { root: workspace, writable: true, layer: next }, command, session })));
          if (i > 0) {
            samples.push(withNew.ms - nothingNew.ms);
            aheadSamples.push(takenIn.ms - nothingNewAgain.ms);
            takeInSamples.push(takeIn.ms);
          }
          await rm(blobs, { recursive: true, force: true });
        }
      } finally {
        end();
      }
      layerFigures.push({
        name: `making ${size} earlier overlay writes visible`,
        unit: 'ms',
        samples,
        target: size === 1000 ? '≤ 15 ms' : undefined,
        note: `on the command's path: a command in the kept sandbox after ${size} files were written since the speculation's previous command, minus the next command with nothing new, interleaved; the session's layer is updated by difference, files hard-linked from their blobs (${LAYER_SAMPLES} samples)`,
      });
      layerFigures.push({
        name: `making ${size} earlier overlay writes visible, taken in ahead`,
        unit: 'ms',
        samples: aheadSamples,
        target: size === 1000 ? '≤ 15 ms' : undefined,
        note: `as a speculation does it: the writes taken into the kept sandbox's layer right after they were made (prepareSession, while the model writes its next answer; that step's own median ${median(takeInSamples).toFixed(1)} ms), then the command, minus the next command with nothing new (${LAYER_SAMPLES} samples)`,
      });
    }

    // Reading back N changed files: the read-back step itself over an upper folder of N new files.
    const readbackFigures: Figure[] = [];
    for (const size of READBACK_SIZES) {
      const upper = path.join(base, `upper-${size}`);
      for (let i = 0; i < size; i++) {
        const dir = path.join(upper, 'out', `pkg${Math.floor(i / 100)}`);
        if (i % 100 === 0) await mkdir(dir, { recursive: true });
        await writeFile(path.join(dir, `file${i}.js`), `exports.value${i} = ${i};\n`);
      }
      const samples: number[] = [];
      for (let i = 0; i <= READBACK_SAMPLES; i++) {
        const { ms, value } = await timed(() => readBack({ upper, layer: undefined, realRoot: workspace, merged: workspace, maxWriteBytes: LIMITS.maxWriteBytes }));
        if (value.changes.length !== size) throw new Error(`sandbox bench: read back ${value.changes.length} of ${size} files`);
        if (i > 0) samples.push(ms);
      }
      readbackFigures.push({ name: `reading back ${size} changed files`, unit: 'ms', samples, note: `walk of the upper folder, one write per new file (${READBACK_SAMPLES} samples)` });
    }

    const backends = [
      ...(await backendFigures(base, 'namespaces', (tmpRoot) => new LinuxSandbox({ tmpRoot, hostEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: os.homedir(), LANG: 'C.UTF-8' } }), true, plainRunner)),
      ...(await backendFigures(base, 'Landlock', (tmpRoot) => new LandlockSandbox({ tmpRoot, hostEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: os.homedir(), LANG: 'C.UTF-8' } }), false, plainRunner)),
    ];
    const bwrap: number[] = [];
    const bwrapTotals: number[] = [];
    const bwrapFloor: number[] = [];
    for (let i = 0; i <= LATER_SAMPLES; i++) {
      const boxed = await timed(() => runBwrap(workspace));
      const bare = await timed(() => plainRunner.run('true', { cwd: workspace, timeoutMs: 60_000, maxOutputBytes: 64 * 1024 }));
      if (i > 0) {
        bwrap.push(boxed.ms - bare.ms);
        bwrapTotals.push(boxed.ms);
        bwrapFloor.push(bare.ms);
      }
    }
    backends.push({ name: 'bwrap (bubblewrap 0.8, same namespaces, workspace bound read-only): overhead over plain bash -c', unit: 'ms', samples: bwrap, note: `for comparison; no overlay, no read-back, no limits (${LATER_SAMPLES} samples); median whole run ${median(bwrapTotals).toFixed(1)} ms, ${(median(bwrapTotals) / median(bwrapFloor)).toFixed(1)}x plain bash -c` });

    const demo = demoFigures(await replayDemo(base, false), await replayDemo(base, true));

    return [
      { name: 'sandboxed `true`, whole run, a fresh sandbox per command', unit: 'ms', samples: sandboxed, note: `no session (the fallback when a speculation's kept sandbox cannot serve a command); probe done; namespaces, mounts, keeper, read-back and clean-up (${START_SAMPLES} samples)` },
      { name: 'plain `bash -c true` (same run, interleaved)', unit: 'ms', samples: plain, note: 'NodeProcessRunner, the floor' },
      { name: 'fresh sandbox start overhead over plain bash -c', unit: 'ms', samples: overhead, target: '≤ 30 ms median', note: `median ratio ${(median(sandboxed) / median(plain)).toFixed(1)}x` },
      ...backends,
      ...layerFigures,
      ...readbackFigures,
      ...demo,
    ];
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}
