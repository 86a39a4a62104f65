// A real VS Code workbench for the benchmarks: test/e2e/workbench's openWorkbench with the host
// probe (bench/lib/hostProbe) loaded into the extension host, whose JSON lines the bench reads.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWorkbench, type Workbench, type WorkbenchOptions } from '../../test/e2e/workbench';
import type { ProbeLine } from './hostProbe';

export interface BenchWorkbench extends Workbench {
  /** Everything the host probe wrote so far. */
  probeLines(): ProbeLine[];
  /** Resolves with the first probe line that matches, polling the file. */
  waitForProbe(predicate: (line: ProbeLine) => boolean, timeoutMs?: number): Promise<ProbeLine>;
}

export type BenchWorkbenchOptions = Omit<WorkbenchOptions, 'testsPath'>;

export async function openBenchWorkbench(options: BenchWorkbenchOptions = {}): Promise<BenchWorkbench> {
  const probeDir = mkdtempSync(join(tmpdir(), 'speculate-bench-probe-'));
  const probeOut = join(probeDir, 'probe.jsonl');
  let workbench: Workbench;
  try {
    workbench = await openWorkbench({
      ...options,
      settings: { 'workbench.startupEditor': 'none', ...options.settings },
      env: { ...options.env, SPECULATE_BENCH_PROBE_OUT: probeOut },
      testsPath: join(__dirname, 'hostProbe.js'),
    });
  } catch (error) {
    rmSync(probeDir, { recursive: true, force: true });
    throw error;
  }
  const probeLines = (): ProbeLine[] =>
    existsSync(probeOut) ? readFileSync(probeOut, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as ProbeLine) : [];
  return {
    ...workbench,
    probeLines,
    async waitForProbe(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = probeLines().find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`the host probe wrote no matching line within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      await workbench.close();
      rmSync(probeDir, { recursive: true, force: true });
    },
  };
}
