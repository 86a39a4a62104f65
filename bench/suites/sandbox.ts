// The speculation sandbox's costs (SANDBOX.md): start overhead per command against a plain
// `bash -c` measured in the same run, making 0 / 10 / 1000 earlier overlay writes visible to the
// command, and reading back 1 / 100 / 10 000 files the command changed.
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { NodeProcessRunner } from '../../src/core/process/nodeProcessRunner';
import { LinuxSandbox } from '../../src/core/sandbox/linuxSandbox';
import { readBack } from '../../src/core/sandbox/readback';
import type { SandboxLayer, SandboxRunRequest } from '../../src/core/sandbox/shellSandbox';
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

async function runOk(sandbox: LinuxSandbox, request: SandboxRunRequest): Promise<void> {
  const outcome = await sandbox.run(request);
  if (!outcome.ok) throw new Error(`sandbox bench: the run failed: ${outcome.reason}`);
  if (outcome.result.exitCode !== 0) throw new Error(`sandbox bench: the command failed: ${outcome.result.output}`);
  await outcome.result.dispose();
}

/** A layer of `count` files the speculation wrote (content files stored like the overlay's blobs). */
async function makeLayer(dir: string, count: number): Promise<SandboxLayer> {
  const files: { path: string; contentPath: string; mode: number }[] = [];
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const contentPath = path.join(dir, `blob${i}`);
    await writeFile(contentPath, `export const speculated${i} = ${i};\n`, { mode: 0o644 });
    files.push({ path: `src/pkg${Math.floor(i / 100)}/file${i}.ts`, contentPath, mode: 0o644 });
  }
  return { files, deletedFiles: [], deletedDirs: [] };
}

export default async function sandbox(): Promise<Figure[]> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-sandbox-')));
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

    // Earlier writes visible: the run of `true` over a layer of N files, against the same run without one.
    const layerFigures: Figure[] = [];
    const withoutLayer: number[] = [];
    for (const size of LAYER_SIZES) {
      const layer = await makeLayer(path.join(base, `blobs-${size}`), size);
      const samples: number[] = [];
      for (let i = 0; i <= LAYER_SAMPLES; i++) {
        const noLayer = await timed(() => runOk(sandbox, request()));
        const withLayer = await timed(() => runOk(sandbox, request({ workspace: { root: workspace, writable: true, layer }, command: size > 0 ? `test -f src/pkg0/file0.ts` : 'true' })));
        if (i === 0) continue;
        samples.push(withLayer.ms - noLayer.ms);
        if (size === 0) withoutLayer.push(noLayer.ms);
      }
      layerFigures.push({
        name: `making ${size} earlier overlay writes visible`,
        unit: 'ms',
        samples,
        target: size === 1000 ? '≤ 30 ms' : undefined,
        note: `run with a layer of ${size} written files minus the same run without one, interleaved; files are hard-linked from their blobs, not copied (${LAYER_SAMPLES} samples)`,
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

    return [
      { name: 'sandboxed `true`, whole run', unit: 'ms', samples: sandboxed, note: `probe done; namespaces, mounts, keeper, read-back and clean-up (${START_SAMPLES} samples)` },
      { name: 'plain `bash -c true` (same run, interleaved)', unit: 'ms', samples: plain, note: 'NodeProcessRunner, the floor' },
      { name: 'sandbox start overhead over plain bash -c', unit: 'ms', samples: overhead, target: '≤ 30 ms median', note: `median ratio ${(median(sandboxed) / median(plain)).toFixed(1)}x` },
      ...layerFigures,
      ...readbackFigures,
    ];
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}
