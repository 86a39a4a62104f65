// What one overlay operation costs beside the same operation on the plain file system: first write,
// rewrite, create, read-through and read-of-written at 1 KB and 1 MB, interleaved with their floors.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeWorkspaceFs } from '../../src/core/fs/nodeWorkspaceFs';
import { OverlayFs } from '../../src/core/followup/overlayFs';
import { RACY_WINDOW_MS } from '../../src/core/followup/overlay/observations';
import type { Figure } from '../types';

const KB = 1024;
const MB = 1024 * KB;

interface Size {
  bytes: number;
  /** Operations per timed batch (one sample is the batch's mean per operation). */
  batch: number;
  samples: number;
}

const SIZES: Size[] = [
  { bytes: KB, batch: 50, samples: 15 },
  { bytes: MB, batch: 8, samples: 11 },
];

type Operation = 'first write' | 'edit' | 'rewrite' | 'create' | 'read-through' | 'read-of-written';

const OPERATIONS: { name: Operation; what: string; floor: string }[] = [
  { name: 'first write', what: 'writeFile of a workspace file the speculation has not read (its base is recorded: the original is hashed in the background)', floor: 'fs.promises.writeFile over an existing file of the same size' },
  { name: 'edit', what: 'readFile then writeFile of a workspace file (what the edit tool does; the read is the base)', floor: 'fs.promises.readFile then fs.promises.writeFile of the same file' },
  { name: 'rewrite', what: 'writeFile of a file the overlay already holds', floor: 'fs.promises.writeFile over an existing file of the same size' },
  { name: 'create', what: 'writeFile of a new file in an existing folder', floor: 'fs.promises.writeFile of a new file in an existing folder' },
  { name: 'read-through', what: 'readFile of a workspace file the overlay does not hold (falls through, records what was read)', floor: 'fs.promises.readFile of the same file' },
  { name: 'read-of-written', what: 'readFile of a file the overlay wrote', floor: 'fs.promises.readFile of a file holding the same bytes' },
];

function label(bytes: number): string {
  return bytes >= MB ? `${bytes / MB} MB` : `${bytes / KB} KB`;
}

const fileName = (i: number) => `src/file${i}.txt`;

type Setup = Awaited<ReturnType<typeof prepare>>;

/** A workspace of `size.batch` files and an overlay over it; `floor` is a plain folder holding the same tree. */
async function prepare(scratch: string, size: Size, index: number) {
  const ws = path.join(scratch, `ws${index}`);
  const floor = path.join(scratch, `floor${index}`);
  const tmpRoot = path.join(scratch, `tmp${index}`);
  for (const dir of [path.join(ws, 'src'), path.join(floor, 'src'), tmpRoot]) await mkdir(dir, { recursive: true });
  for (let i = 0; i < size.batch; i++) {
    const data = randomBytes(size.bytes);
    await writeFile(path.join(ws, fileName(i)), data);
    await writeFile(path.join(floor, fileName(i)), data);
  }
  const base = await NodeWorkspaceFs.open(ws);
  const overlay = await OverlayFs.create({ base, tmpRoot });
  return {
    overlay,
    floor,
    async dispose() {
      await overlay.cleanup().catch(() => undefined);
      for (const dir of [ws, floor, tmpRoot]) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Mean µs per operation over the batch. */
async function timed(batch: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < batch; i++) await op(i);
  return Number(process.hrtime.bigint() - started) / 1e3 / batch;
}

/** Times both sides, in the given order (alternated across samples so neither always runs on a warmer machine). */
async function pair(floorFirst: boolean, overlaySide: () => Promise<number>, floorSide: () => Promise<number>): Promise<{ overlay: number; floor: number }> {
  if (floorFirst) {
    const floor = await floorSide();
    return { floor, overlay: await overlaySide() };
  }
  const overlay = await overlaySide();
  return { overlay, floor: await floorSide() };
}

/** One sample of an operation and its floor, each on fresh files (the overlay's set up as the operation needs). */
async function sample(setup: Setup, size: Size, operation: Operation, floorFirst: boolean): Promise<{ overlay: number; floor: number }> {
  const { overlay, floor } = setup;
  const data = Array.from({ length: size.batch }, () => randomBytes(size.bytes));
  const real = (i: number) => path.join(floor, fileName(i));
  try {
    switch (operation) {
      case 'first write':
        return await pair(floorFirst, () => timed(size.batch, (i) => overlay.writeFile(fileName(i), data[i])), () => timed(size.batch, (i) => writeFile(real(i), data[i])));
      case 'edit':
        return await pair(
          floorFirst,
          () => timed(size.batch, async (i) => overlay.writeFile(fileName(i), (await overlay.readFile(fileName(i))).length ? data[i] : data[i])),
          () => timed(size.batch, async (i) => writeFile(real(i), (await readFile(real(i))).length ? data[i] : data[i])),
        );
      case 'rewrite':
        for (let i = 0; i < size.batch; i++) await overlay.writeFile(fileName(i), randomBytes(size.bytes));
        return await pair(floorFirst, () => timed(size.batch, (i) => overlay.writeFile(fileName(i), data[i])), () => timed(size.batch, (i) => writeFile(real(i), data[i])));
      case 'create':
        return await pair(floorFirst, () => timed(size.batch, (i) => overlay.writeFile(`src/new${i}.txt`, data[i])), () => timed(size.batch, (i) => writeFile(path.join(floor, `src/new${i}.txt`), data[i])));
      case 'read-through':
        return await pair(floorFirst, () => timed(size.batch, (i) => overlay.readFile(fileName(i))), () => timed(size.batch, (i) => readFile(real(i))));
      case 'read-of-written':
        for (let i = 0; i < size.batch; i++) {
          await overlay.writeFile(fileName(i), data[i]);
          await writeFile(real(i), data[i]);
        }
        return await pair(floorFirst, () => timed(size.batch, (i) => overlay.readFile(fileName(i))), () => timed(size.batch, (i) => readFile(real(i))));
    }
  } finally {
    await setup.dispose();
  }
}

export default async function engineOverlay(): Promise<Figure[]> {
  const scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-overlay-')));
  const figures: Figure[] = [];
  try {
    for (const size of SIZES) {
      for (const operation of OPERATIONS) {
        const overlayTimes: number[] = [];
        const floorTimes: number[] = [];
        const ratios: number[] = [];
        // Every sample's files are written first, then left alone for a while, as a workspace's files
        // are before a speculation looks at them (a file changed just now is read more carefully).
        const setups: Setup[] = [];
        for (let i = 0; i <= size.samples; i++) setups.push(await prepare(scratch, size, i));
        await new Promise((resolve) => setTimeout(resolve, RACY_WINDOW_MS + 200));
        // One warm-up pair, then interleaved pairs: a noisy moment of the machine hits both sides of a ratio.
        await sample(setups[0], size, operation.name, false);
        for (let i = 0; i < size.samples; i++) {
          const { overlay, floor } = await sample(setups[i + 1], size, operation.name, i % 2 === 1);
          overlayTimes.push(overlay);
          floorTimes.push(floor);
          ratios.push(overlay / floor);
        }
        const name = `${operation.name} ${label(size.bytes)}`;
        figures.push({ name: `overlay ${name}`, unit: 'µs', samples: overlayTimes, note: `${operation.what}; mean of ${size.batch} in a row per sample, ${size.samples} samples in ${os.tmpdir()}` });
        figures.push({ name: `plain fs ${name}`, unit: 'µs', samples: floorTimes, note: operation.floor });
        figures.push({ name: `overlay ${name} ÷ plain fs`, unit: 'x', samples: ratios, target: '≤ 1.5×', note: 'per interleaved sample pair' });
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return figures;
}
