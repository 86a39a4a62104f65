// What the two ways of running a namespace-sandboxed command share — a fresh sandbox per command
// (linuxSandbox.ts) and a command inside the speculation's kept sandbox (keptSandbox.ts): the skeleton
// root they pivot into, and how a finished run becomes a SandboxResult (exit, limits hit, problems).
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sandboxFailureCause } from './failureCause';
import type { MountPlan } from './mountPlan';
import { formatBytes, type Readback } from './readback';
import { limitProblem, resolveLimits } from './resourceLimits';
import type { SandboxProblem, SandboxResult, SandboxRunRequest } from './shellSandbox';

/** Where a run that did not run failed; the probe turns these into reasons a user can act on. */
export type FailureStage = 'tools' | 'workspace' | 'aborted' | 'start' | 'namespaces' | 'mount' | 'pivot' | 'cwd' | 'limits' | 'readback';
export interface RunFailure {
  ok: false;
  reason: string;
  aborted: boolean;
  stage: FailureStage;
  /** What the setup programs said (stderr), for the probe's reason. */
  diagnostics?: string;
}

/** A command that ran (to its end, or stopped by a limit or its time). */
export interface SpawnedRun {
  ok: true;
  exitStatus: number | null;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  stoppedForSize: boolean;
  stoppedForProcesses: boolean;
  readback: Readback | undefined;
  /** Removes what the run left (the kept sandbox's command folder); absent when the caller's own folder holds everything. */
  dispose?: () => Promise<void>;
}

/** Exit statuses above this are 128 + the signal that ended the command (bash's convention). */
const SIGNAL_BASE = 128;

function signalName(status: number): string | null {
  const number = status - SIGNAL_BASE;
  const entry = Object.entries(os.constants.signals).find(([, value]) => value === number);
  return entry ? entry[0] : null;
}

/** Makes the folders, empty files and symlinks of the plan's read-only root. */
export function makeSkeleton(skeleton: string, plan: MountPlan): void {
  // A few dozen tiny metadata operations: done synchronously, they cost less than the thread-pool
  // round trips their promises would (which dominate on a loaded machine).
  mkdirSync(skeleton, { recursive: true, mode: 0o755 });
  for (const dir of plan.dirs) mkdirSync(path.join(skeleton, dir), { recursive: true, mode: 0o755 });
  for (const file of plan.files) {
    mkdirSync(path.dirname(path.join(skeleton, file)), { recursive: true, mode: 0o755 });
    writeFileSync(path.join(skeleton, file), '', { mode: 0o644 });
  }
  for (const link of plan.symlinks) {
    mkdirSync(path.dirname(path.join(skeleton, link.path)), { recursive: true, mode: 0o755 });
    symlinkSync(link.target, path.join(skeleton, link.path));
  }
}

export interface ResultContext {
  request: SandboxRunRequest;
  defaults: { maxProcesses?: number; maxMemoryBytes?: number } | undefined;
  hostEnv: NodeJS.ProcessEnv;
  /** Whether a path exists on the machine but not inside the sandbox (for the "outside" failure cause). */
  hiddenPath: (absolute: string) => boolean;
  startedAt: number;
}

export function sandboxResult(ran: SpawnedRun, context: ResultContext): SandboxResult {
  const { request } = context;
  const { limits, workspace } = request;
  const { exitStatus, output, truncated, timedOut, readback, stoppedForSize, stoppedForProcesses } = ran;
  const problems: SandboxProblem[] = [...(readback?.problems ?? [])];
  const exitCodeOrSignal = exitStatus !== null && exitStatus > SIGNAL_BASE ? signalName(exitStatus) : null;
  // RLIMIT_FSIZE stops a single file at the limit with SIGXFSZ (bash reports it for a pipeline's member).
  const fileTooLarge = exitCodeOrSignal === 'SIGXFSZ' || /file size limit exceeded/i.test(output);
  if (fileTooLarge && !problems.some((problem) => problem.kind === 'too-large')) {
    problems.push({ kind: 'too-large', path: '', detail: `it wrote a file larger than the limit of ${formatBytes(limits.maxWriteBytes)} and was stopped` });
  }
  if (stoppedForSize) problems.push({ kind: 'too-large', path: '', detail: `it wrote more than the limit of ${formatBytes(limits.maxWriteBytes)} and was stopped` });
  const exitCode = exitStatus === null ? null : exitStatus > SIGNAL_BASE && signalName(exitStatus) ? null : exitStatus;
  const signal = exitStatus !== null && exitCode === null ? signalName(exitStatus) : timedOut ? 'SIGKILL' : null;
  const limit = limitProblem({ exitCode, signal, output, stoppedForProcesses }, resolveLimits(limits, context.defaults));
  if (limit) problems.push(limit);
  const hostHome = context.hostEnv.HOME && path.isAbsolute(context.hostEnv.HOME) && context.hostEnv.HOME !== '/' ? path.resolve(context.hostEnv.HOME) : undefined;
  return {
    exitCode,
    signal,
    output,
    truncated,
    timedOut,
    startedAt: context.startedAt,
    changes: readback && problems.length === 0 ? readback.changes : [],
    problems,
    blockedBy: sandboxFailureCause({ exitCode, timedOut, output, hostHome, workspaceWritable: workspace.writable, hiddenPath: context.hiddenPath }),
    dispose: async () => undefined,
  };
}
