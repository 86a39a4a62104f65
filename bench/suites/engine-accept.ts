// How long Tab takes to land a finished speculation: OverlayFs.applyToReal for 1–1000 modified
// files of 1 KB and 1 MB (conflict check with a full hash of each real file, fsync'd temps, renames).
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeWorkspaceFs } from '../../src/core/fs/nodeWorkspaceFs';
import { OverlayFs } from '../../src/core/followup/overlayFs';
import type { Figure } from '../types';

const KB = 1024;
const MB = 1024 * KB;

interface Case {
  count: number;
  size: number;
  samples: number;
}

const CASES: Case[] = [
  { count: 1, size: KB, samples: 7 },
  { count: 10, size: KB, samples: 7 },
  { count: 100, size: KB, samples: 5 },
  { count: 1000, size: KB, samples: 3 },
  { count: 1, size: MB, samples: 5 },
  { count: 10, size: MB, samples: 5 },
  { count: 100, size: MB, samples: 3 },
  // 1000 × 1 MB would write 1 GB to the workspace plus 1 GB to the overlay per sample: capped at 100.
];

function label(size: number): string {
  return size >= MB ? `${size / MB} MB` : `${size / KB} KB`;
}

/** One sample: a fresh workspace of `count` files, an overlay that rewrote all of them, timed accept. */
async function sample({ count, size }: Case, scratch: string): Promise<number> {
  const ws = path.join(scratch, 'ws');
  const tmpRoot = path.join(scratch, 'tmp');
  await mkdir(tmpRoot, { recursive: true });
  // 100 files per folder, like a real tree, so directory fsyncs and lookups are not all in one place.
  const fileName = (i: number) => `pkg${Math.floor(i / 100)}/file${i}.txt`;
  for (let i = 0; i < count; i++) {
    const file = path.join(ws, fileName(i));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, randomBytes(size));
  }
  const base = await NodeWorkspaceFs.open(ws);
  const overlay = await OverlayFs.create({ base, tmpRoot });
  try {
    for (let i = 0; i < count; i++) await overlay.writeFile(fileName(i), randomBytes(size));
    const started = process.hrtime.bigint();
    const result = await overlay.applyToReal();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.applied.length !== count || result.conflicts.length > 0) throw new Error(`accept applied ${result.applied.length} of ${count} files`);
    return elapsed;
  } finally {
    await overlay.cleanup();
    await rm(ws, { recursive: true, force: true });
    await rm(tmpRoot, { recursive: true, force: true });
  }
}

export default async function engineAccept(): Promise<Figure[]> {
  const scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-accept-')));
  const figures: Figure[] = [];
  try {
    for (const benchCase of CASES) {
      const samples: number[] = [];
      for (let i = 0; i < benchCase.samples; i++) samples.push(await sample(benchCase, scratch));
      const capped = benchCase.count === 100 && benchCase.size === MB ? '; 1000 × 1 MB is not run (1 GB per sample), 100 × 1 MB is the cap' : '';
      figures.push({
        name: `accept ${benchCase.count} × ${label(benchCase.size)} modified files`,
        unit: 'ms',
        samples,
        target: benchCase.count <= 10 && benchCase.size === KB ? '≤ 100 ms median (Tab feels instant)' : undefined,
        note: `applyToReal wall time: hash check of each real file, temp + fsync + rename per file, journal; ${benchCase.samples} samples in ${os.tmpdir()}${capped}`,
      });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return figures;
}
