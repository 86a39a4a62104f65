// What a sandboxed command may use of the machine besides disk (SANDBOX.md, "Limits"): processes,
// address space and CPU time, the same on every backend, and how a run that hit one is recognised
// from its output, so that it ends as a boundary naming the limit instead of a hang or a half result.
import { formatBytes } from './readback';
import type { SandboxLimits, SandboxProblem } from './shellSandbox';

/** Enough for a parallel build or test runner; a fork bomb stops there. */
export const DEFAULT_MAX_PROCESSES = 256;
/** Per process; V8, the JVM and compilers reserve far more address space than they use, so this is generous. */
export const DEFAULT_MAX_MEMORY_BYTES = 8 * 1024 * 1024 * 1024;

export interface ResolvedLimits {
  processes: number;
  memoryBytes: number;
  /** CPU seconds per process: the wall-time limit, a backstop for a process the timer cannot reach. */
  cpuSeconds: number;
  fileBytes: number;
}

export function resolveLimits(limits: SandboxLimits, defaults: { maxProcesses?: number; maxMemoryBytes?: number } = {}): ResolvedLimits {
  return {
    processes: Math.max(8, Math.floor(limits.maxProcesses ?? defaults.maxProcesses ?? DEFAULT_MAX_PROCESSES)),
    memoryBytes: Math.max(64 * 1024 * 1024, Math.floor(limits.maxMemoryBytes ?? defaults.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES)),
    cpuSeconds: Math.max(1, Math.ceil(limits.timeoutMs / 1000)),
    fileBytes: Math.max(1024, Math.ceil(limits.maxWriteBytes)),
  };
}

/** A fork that failed for want of processes: bash retries it (for seconds), so seeing it is enough to stop. */
const PROCESS_LIMIT = [/fork: retry: Resource temporarily unavailable/, /fork: Resource temporarily unavailable/, /\bspawn\b.*\bEAGAIN\b/, /can't fork/i, /cannot fork/i, /pthread_create.*Resource temporarily unavailable/i];
const MEMORY_LIMIT = [/Cannot allocate memory/, /\bENOMEM\b/, /out of memory/i, /\bMemoryError\b/, /allocation failed/i, /std::bad_alloc/, /memory exhausted/i, /xmalloc: cannot allocate/, /Fatal process OOM/, /reserve virtual memory/];

/** True once the output shows the process limit was hit: the run is stopped there. */
export function hitProcessLimit(output: string): boolean {
  return PROCESS_LIMIT.some((pattern) => pattern.test(output));
}

/** The limit a finished run hit, as a problem naming it; null when its output shows none. */
export function limitProblem(run: { exitCode: number | null; signal: string | null; output: string; stoppedForProcesses: boolean }, limits: ResolvedLimits): SandboxProblem | null {
  if (run.stoppedForProcesses || hitProcessLimit(run.output)) {
    return { kind: 'limit', path: '', detail: `it started more processes than the sandbox allows (the process limit, ${limits.processes}) and was stopped` };
  }
  if (run.signal === 'SIGXCPU') {
    return { kind: 'limit', path: '', detail: `it used more CPU time than the sandbox allows (the CPU-time limit, ${limits.cpuSeconds} s per process) and was stopped` };
  }
  if (run.exitCode !== 0 && MEMORY_LIMIT.some((pattern) => pattern.test(run.output))) {
    return { kind: 'limit', path: '', detail: `it ran out of the memory the sandbox allows (the memory limit, ${formatBytes(limits.memoryBytes)} of address space per process)` };
  }
  return null;
}
