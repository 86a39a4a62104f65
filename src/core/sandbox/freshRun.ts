// One command in a sandbox of its own (the path of every command outside a speculation's kept
// sandbox): `unshare` makes the namespaces, the bash keeper (keeper.ts) mounts the fstab and runs
// the command, holds the namespaces open while its changes are read back, and everything it started
// ends with it — on exit, on its time limit, its write limit, its process limit, or an abort.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { OutputCap } from '../process/nodeProcessRunner';
import { KeeperChannel, keeperArgv, type KeeperEvent } from './keeper';
import { runCgroup } from './pidsCgroup';
import { readBack, type Readback } from './readback';
import { hitProcessLimit, resolveLimits } from './resourceLimits';
import type { FailureStage, RunFailure, SpawnedRun } from './runOutcome';
import type { SandboxRunRequest } from './shellSandbox';
import type { SystemTools } from './systemTools';
import { watchWrites } from './writeWatch';

const SETUP_FAILURES: Record<string, string> = {
  mount: 'its file system could not be mounted',
  pivot: 'it could not switch to its own root folder',
  cwd: 'the working folder does not exist inside it',
  limits: 'its limits could not be set',
};
/** The keeper and the bash it runs the command with, counted by the process limit beside the command's own. */
const KEEPER_PROCESSES = 3;

/** What the sandbox lends each fresh run. */
export interface FreshRunHost {
  /** Defaults for what a command may use when the request names none. */
  defaults: { maxProcesses?: number; maxMemoryBytes?: number } | undefined;
  /** A delegated pids cgroup for root's commands (RLIMIT_NPROC does not bind root), or null. */
  pidsCgroup: string | null;
  writeCheckMs: number | undefined;
}

export function spawnFreshRun(
  request: SandboxRunRequest,
  { tools, env, fstab, skeleton }: { tools: SystemTools; env: Record<string, string>; fstab: string; skeleton: string },
  where: { upper: string; lowerLayer: string | undefined; writable: boolean; runDir: string },
  host: FreshRunHost,
): Promise<SpawnedRun | RunFailure> {
  const { limits, signal } = request;
  const resolved = resolveLimits(limits, host.defaults);
  const argv = [
    '--user', '--map-current-user', '--keep-caps', '--mount', '--net', '--pid', '--ipc', '--uts', '--cgroup', '--fork', '--kill-child', '--',
    // --norc: bash sources ~/.bashrc when its stdin is a socket (Node's pipes are), even for -c.
    tools.bash,
    '--norc',
    '--noprofile',
    ...keeperArgv({ ...tools, fstab, skeleton, cwd: request.cwd, maxFileKb: limits.maxWriteBytes / 1024, command: request.command, maxMemoryKb: resolved.memoryBytes / 1024, cpuSeconds: resolved.cpuSeconds, maxProcesses: resolved.processes + KEEPER_PROCESSES }),
  ];
  // The host's root: RLIMIT_NPROC does not bind it, a pids cgroup does (joined before unshare starts).
  const cgroup = host.pidsCgroup ? runCgroup(host.pidsCgroup, resolved.processes + KEEPER_PROCESSES + 1) : undefined;
  const program = cgroup ? '/bin/sh' : tools.unshare;
  const programArgs = cgroup ? ['-c', 'echo 0 > "$0" && exec "$@"', cgroup.procs, tools.unshare, ...argv] : argv;
  return new Promise((resolve) => {
    // Fd 4 is the keeper's lifeline (see keeper.ts); --kill-child ends the keeper if unshare is killed first.
    const child = spawn(program, programArgs, { cwd: '/', env, stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'], detached: true });
    const output = new OutputCap(limits.maxOutputBytes);
    const channel = new KeeperChannel();
    let diagnostics = '';
    let keeperPid: number | undefined;
    let started = false;
    let failedStep: string | undefined;
    let exitStatus: number | null = null;
    let timedOut = false;
    let aborted = false;
    let stoppedForSize = false;
    let stoppedForProcesses = false;
    let recent = '';
    let readback: Readback | undefined;
    let readbackError: unknown;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    let stopping = false;
    const killKeeper = () => {
      try {
        process.kill(keeperPid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const stop = () => {
      stopping = true;
      // SIGKILL to PID 1 of the namespace ends every process in it. Before the keeper said its pid,
      // the process group goes (unshare, and the keeper if it is forked: it runs nothing of the
      // command before saying its pid); --kill-child alone misses a keeper forked just before
      // unshare died and not yet bound to it, so the pid, when it comes, is killed too.
      if (keeperPid !== undefined) return killKeeper();
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const onAbort = () => {
      aborted = true;
      stop();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // Aborted while the run was being prepared (the layer, the environment): the listener came too late for it.
    if (signal?.aborted) onAbort();
    timers.push(
      setTimeout(() => {
        timedOut = true;
        stop();
      }, limits.timeoutMs),
    );
    const stopWatching = where.writable
      ? watchWrites(where.runDir, limits.maxWriteBytes, where.upper, () => {
          stoppedForSize = true;
          stop();
        }, host.writeCheckMs)
      : () => undefined;

    const onEvent = async (event: KeeperEvent) => {
      if (event.type === 'pid') {
        keeperPid = event.pid;
        if (stopping) killKeeper();
      }
      else if (event.type === 'started') started = true;
      else if (event.type === 'fail') failedStep = event.step;
      else if (event.type === 'exit') {
        exitStatus = event.status;
        timers.forEach(clearTimeout);
        stopWatching();
        if (where.writable && !timedOut && !aborted && !stoppedForSize && keeperPid !== undefined) {
          try {
            readback = await readBack({
              upper: where.upper,
              layer: where.lowerLayer,
              realRoot: request.workspace.root,
              merged: path.join(`/proc/${keeperPid}/root`, request.workspace.root),
              maxWriteBytes: limits.maxWriteBytes,
            });
          } catch (error) {
            readbackError = error;
          }
        }
        child.stdin?.end('done\n');
      }
    };
    let events = Promise.resolve();
    child.stdio[3]?.on('data', (chunk: Buffer) => {
      for (const event of channel.feed(chunk.toString('utf8'))) events = events.then(() => onEvent(event));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output.add(chunk);
      // A fork bomb makes bash retry for seconds: the first refusal is enough to stop it.
      recent = (recent + chunk.toString('utf8')).slice(-512);
      if (!stoppedForProcesses && hitProcessLimit(recent)) {
        stoppedForProcesses = true;
        stop();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (diagnostics.length < 8192) diagnostics += chunk.toString('utf8');
    });
    child.stdin?.on('error', () => undefined);

    const finish = (failure?: { stage: FailureStage; reason: string }) => {
      if (settled) return;
      settled = true;
      cgroup?.remove();
      timers.forEach(clearTimeout);
      stopWatching();
      signal?.removeEventListener('abort', onAbort);
      if (aborted) return resolve({ ok: false, reason: 'stopped', aborted: true, stage: 'aborted' });
      if (failure) return resolve({ ok: false, reason: failure.reason, aborted: false, stage: failure.stage, diagnostics });
      if (readbackError) {
        const why = readbackError instanceof Error ? readbackError.message : String(readbackError);
        return resolve({ ok: false, reason: `its changes could not be read back (${why})`, aborted: false, stage: 'readback' });
      }
      resolve({ ok: true, exitStatus, output: output.text(), truncated: output.truncated, timedOut, stoppedForSize, stoppedForProcesses, readback });
    };
    child.on('error', (error) => finish({ stage: 'start', reason: `it could not start (${error.message})` }));
    child.on('close', () => {
      void events.then(() => {
        if (!started && !timedOut && !aborted && !stoppedForProcesses) {
          const why = failedStep ? SETUP_FAILURES[failedStep] ?? `setup step ${failedStep} failed` : 'it could not create its namespaces';
          const detail = diagnostics.trim().split('\n').slice(-2).join(' ').slice(0, 300);
          const stage = (failedStep && failedStep in SETUP_FAILURES ? failedStep : 'namespaces') as FailureStage;
          return finish({ stage, reason: detail ? `${why}: ${detail}` : why });
        }
        finish();
      });
    });
  });
}
