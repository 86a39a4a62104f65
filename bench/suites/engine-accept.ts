// How long Tab takes to land a finished speculation: OverlayFs.applyToReal for 1–1000 modified
// files of 1 KB and 1 MB, beside the durable floor (the same bytes written and fsync'd) in the same run.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, realpath, rename, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeWorkspaceFs } from '../../src/core/fs/nodeWorkspaceFs';
import { OverlayFs } from '../../src/core/followup/overlayFs';
import { RACY_WINDOW_MS } from '../../src/core/followup/overlay/observations';
import { CheckpointStore } from '../../src/core/checkpoints';
import { checkpointHook } from '../../src/core/followup/acceptCheckpoint';
import { flushed } from '../../src/core/fs/pendingFlush';
import { redoSlotsFor } from '../../src/core/fs/redoSlots';
import { nodeApplyFs } from '../../src/core/followup/overlay/applyFs';
import type { Figure } from '../types';

const KB = 1024;
const MB = 1024 * KB;

interface Case {
  count: number;
  size: number;
  samples: number;
  /** The speculation writes right after the files were written (not after the racy window): every file is read again on accept. */
  fresh?: boolean;
  /**
   * The workspace is written out to the disk (sync) before the speculation, as a real workspace's
   * files are: replacing such a file frees blocks the disk had allocated, which freshly written
   * files (still only in the page cache) do not have yet. Every floor of the case syncs too.
   */
  onDisk?: boolean;
  /** Issue 28's target for accept ÷ the durable floor, where it names one. */
  floorTarget?: string;
}

const CASES: Case[] = [
  { count: 1, size: KB, samples: 15, floorTarget: '≤ 3×' },
  { count: 10, size: KB, samples: 11 },
  { count: 100, size: KB, samples: 11, floorTarget: '≤ 1.5×' },
  { count: 1000, size: KB, samples: 5, floorTarget: '≤ 3×' },
  { count: 1, size: MB, samples: 9 },
  { count: 10, size: MB, samples: 7 },
  { count: 100, size: MB, samples: 5, floorTarget: '≤ 1.5×' },
  { count: 100, size: KB, samples: 11, fresh: true, floorTarget: '≤ 2×' },
  { count: 100, size: KB, samples: 11, onDisk: true },
  // 1000 × 1 MB would write 1 GB to the workspace plus 1 GB to the overlay per sample: capped at 100.
];

/** Undo samples (each beside its own durable floor). */
const UNDO_SAMPLES = 15;

/** The accept the system-call count is taken of (strace, in a child process). */
const SYSCALL_CASE = { count: 100, size: KB };

function label(size: number): string {
  return size >= MB ? `${size / MB} MB` : `${size / KB} KB`;
}

/** 100 files per folder, like a real tree, so directory fsyncs and lookups are not all in one place. */
const fileName = (i: number) => `pkg${Math.floor(i / 100)}/file${i}.txt`;

async function writeTree(root: string, count: number, size: number, onDisk = false): Promise<void> {
  for (let i = 0; i < count; i++) {
    const file = path.join(root, fileName(i));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, randomBytes(size));
  }
  if (onDisk) execFileSync('sync');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fresh workspace of `count` files and an overlay that rewrote all of them, ready to accept.
 * Like a real workspace, the files were last changed a while before the speculation writes them
 * (unless `fresh`): a file changed just now is one whose next change may keep its times.
 */
async function prepareAccept({ count, size, fresh, onDisk }: { count: number; size: number; fresh?: boolean; onDisk?: boolean }, scratch: string, name = 'ws') {
  const ws = path.join(scratch, name);
  const tmpRoot = path.join(scratch, `${name}-tmp`);
  await mkdir(tmpRoot, { recursive: true });
  await writeTree(ws, count, size, onDisk);
  if (!fresh) await sleep(RACY_WINDOW_MS + 200);
  const redoDir = path.join(scratch, `${name}-state`);
  await mkdir(redoDir, { recursive: true });
  const base = await NodeWorkspaceFs.open(ws);
  // The state folder holds the accept's redo log, as the checkpoint store's does in the product.
  const overlay = await OverlayFs.create({ base, tmpRoot, redoDir });
  for (let i = 0; i < count; i++) await overlay.writeFile(fileName(i), randomBytes(size));
  // The overlay made its redo-log slots when it was created; a speculation runs for seconds before
  // Tab, so they are ready by then (redoSlots.ts). Awaited so a one-file sample does not race them.
  await redoSlotsFor(redoDir, nodeApplyFs, process.pid).prepare();
  return {
    overlay,
    async dispose() {
      await overlay.cleanup().catch(() => undefined);
      await rm(ws, { recursive: true, force: true });
      await rm(tmpRoot, { recursive: true, force: true });
      await rm(redoDir, { recursive: true, force: true });
    },
  };
}

/** One accept sample, timed until the user has the result; then its flush (off the wait), timed apart. */
async function acceptSample(benchCase: Case, scratch: string): Promise<{ accept: number; flush: number }> {
  const { overlay, dispose } = await prepareAccept(benchCase, scratch);
  try {
    const started = process.hrtime.bigint();
    const result = await overlay.applyToReal();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    // The flush finishes before the floors run, so it never slows (or hides in) the other side of a ratio.
    await overlay.flushed();
    const flush = Number(process.hrtime.bigint() - started) / 1e6 - elapsed;
    if (result.applied.length !== benchCase.count || result.conflicts.length > 0) throw new Error(`accept applied ${result.applied.length} of ${benchCase.count} files`);
    return { accept: elapsed, flush };
  } finally {
    await dispose();
  }
}

/**
 * One undo sample: an accept of `count` rewritten 1 KB files with its checkpoint (flushed), then
 * CheckpointStore.undo timed until it returns; its flush is awaited after the clock stops.
 */
async function undoSample(count: number, scratch: string): Promise<number> {
  const { overlay, dispose } = await prepareAccept({ count, size: KB }, scratch, 'undo');
  const stateDir = path.join(scratch, 'undo-checkpoints');
  try {
    const store = await CheckpointStore.open({ stateDir, workspaceRoot: overlay.root });
    // As the extension does once it opened the store (and recovered): the slots accept and undo
    // commit into, and the file an undo's lock is a second name of.
    await store.prepare();
    const recording = store.begin({ kind: 'accept', suggestion: 'bench', runId: 'bench' });
    const result = await overlay.applyToReal({ beforeReplace: checkpointHook(recording, new Set()), redoDir: recording.redoDir });
    const summary = await recording.finish(result.applied);
    await overlay.flushed();
    if (!summary) throw new Error('the accept made no checkpoint');
    await sleep(RACY_WINDOW_MS + 200);
    const started = process.hrtime.bigint();
    const undone = await store.undo(summary.id);
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    await flushed(overlay.root);
    if (!undone.ok || undone.restored.length !== count) throw new Error(`undo restored ${undone.ok ? undone.restored.length : undone.message} of ${count}`);
    return elapsed;
  } finally {
    await dispose();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** Writes `data` to `file` (opened with `flags`) and fsyncs it, as plainly as node:fs allows. */
async function writeSynced(file: string, data: Uint8Array, flags: 'w' | 'wx'): Promise<void> {
  const handle = await open(file, flags);
  try {
    await handle.write(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The durable floor: the same bytes written into the same tree of existing files, then each file
 * fsync'd — what any accept that survives a power cut must at least do. No check, no atomic replace.
 */
async function floorSample({ count, size, onDisk }: Case, scratch: string): Promise<number> {
  const ws = path.join(scratch, 'floor');
  await writeTree(ws, count, size, onDisk);
  const contents = Array.from({ length: count }, () => randomBytes(size));
  try {
    const started = process.hrtime.bigint();
    await Promise.all(contents.map((data, i) => writeSynced(path.join(ws, fileName(i)), data, 'w')));
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
}

/**
 * The atomic-replace floor: the same bytes into a new temp beside each file (open, write, fsync,
 * close), renamed over it, then one fsync per folder — what any accept that never leaves a file
 * half-written and survives a power cut must at least do. A new inode per file costs the file
 * system more than rewriting one in place, so this floor sits above the durable one.
 */
async function atomicFloorSample({ count, size, onDisk }: Case, scratch: string): Promise<number> {
  const ws = path.join(scratch, 'atomic-floor');
  await writeTree(ws, count, size, onDisk);
  const contents = Array.from({ length: count }, () => randomBytes(size));
  try {
    const started = process.hrtime.bigint();
    await Promise.all(
      contents.map(async (data, i) => {
        const target = path.join(ws, fileName(i));
        const temp = path.join(path.dirname(target), `.${path.basename(target)}.floor`);
        await writeSynced(temp, data, 'wx');
        await rename(temp, target);
      }),
    );
    const folders = [...new Set(contents.map((_, i) => path.dirname(path.join(ws, fileName(i)))))];
    await Promise.all(
      folders.map(async (folder) => {
        const handle = await open(folder, 'r');
        await handle.sync().finally(() => handle.close());
      }),
    );
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
}

/**
 * The redo-log floor: every new byte appended to one log in a state folder, the log fsync'd and its
 * folder fsync'd (the commit point), then a temp beside each file written and renamed over it
 * without an fsync (the flush comes after, off the wait). What an accept with one commit fsync costs
 * at least; the flush is not in it (it is not on the path the user waits on).
 */
async function redoFloorSample({ count, size, onDisk }: Case, scratch: string): Promise<number> {
  const ws = path.join(scratch, 'redo-floor');
  const state = path.join(scratch, 'redo-floor-state');
  await writeTree(ws, count, size, onDisk);
  await mkdir(state, { recursive: true });
  const contents = Array.from({ length: count }, () => randomBytes(size));
  try {
    const started = process.hrtime.bigint();
    const log = path.join(state, 'accept.redo');
    await writeSynced(log, Buffer.concat(contents), 'wx');
    const folder = await open(state, 'r');
    await folder.sync().finally(() => folder.close());
    await Promise.all(
      contents.map(async (data, i) => {
        const target = path.join(ws, fileName(i));
        const temp = path.join(path.dirname(target), `.${path.basename(target)}.floor`);
        await writeFile(temp, data, { flag: 'wx' });
        await rename(temp, target);
      }),
    );
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    await rm(ws, { recursive: true, force: true });
    await rm(state, { recursive: true, force: true });
  }
}

/**
 * System calls per accepted file: strace counts a child process that prepares an accept and then
 * either accepts it or not; the difference over the file count is the accept's own share.
 */
function syscallsPerFile(): { perFile: number; note: string } | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const count = (accept: boolean): { total: number; readlink: number } => {
    const report = path.join(os.tmpdir(), `speculate-strace-${process.pid}-${accept ? 'accept' : 'idle'}.txt`);
    const child = `require(${JSON.stringify(__filename)}).strace(${accept})`;
    execFileSync('strace', ['-f', '-c', '-o', report, process.execPath, '-e', child], { stdio: 'ignore' });
    const text = existsSync(report) ? readFileSync(report, 'utf8') : '';
    void rm(report, { force: true });
    // strace -c rows: % time, seconds, usecs/call, calls, [errors], syscall ("total" last).
    const calls = new Map<string, number>();
    for (const line of text.split('\n')) {
      const cells = line.trim().split(/\s+/);
      if (cells.length < 5 || !/^\d+\.\d+$/.test(cells[0])) continue;
      calls.set(cells[cells.length - 1], Number(cells[3]));
    }
    const total = calls.get('total') ?? NaN;
    const readlink = calls.get('readlink') ?? 0;
    return { total, readlink };
  };
  const idle = count(false);
  const withAccept = count(true);
  const perFile = (withAccept.total - idle.total) / SYSCALL_CASE.count;
  if (!Number.isFinite(perFile)) return undefined;
  const readlinkPerFile = (withAccept.readlink - idle.readlink) / SYSCALL_CASE.count;
  return { perFile, note: `strace -f -c of one accept of ${SYSCALL_CASE.count} × 1 KB in a child process, minus the same process without the accept; ${readlinkPerFile.toFixed(1)} of them readlink` };
}

/** Entry point of the strace child (see syscallsPerFile). */
export async function strace(accept: boolean): Promise<void> {
  const scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-strace-')));
  try {
    const { overlay, dispose } = await prepareAccept(SYSCALL_CASE, scratch);
    if (accept) await overlay.applyToReal();
    await dispose();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

export default async function engineAccept(): Promise<Figure[]> {
  const scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-accept-')));
  const figures: Figure[] = [];
  try {
    for (const benchCase of CASES) {
      const accepts: number[] = [];
      const flushes: number[] = [];
      const floors: number[] = [];
      const ratios: number[] = [];
      const atomicFloors: number[] = [];
      const atomicRatios: number[] = [];
      const redoFloors: number[] = [];
      const redoRatios: number[] = [];
      // Interleaved, so a noisy moment of the machine hits every side of a ratio.
      for (let i = 0; i < benchCase.samples; i++) {
        const { accept, flush } = await acceptSample(benchCase, scratch);
        flushes.push(flush);
        const floor = await floorSample(benchCase, scratch);
        accepts.push(accept);
        floors.push(floor);
        ratios.push(accept / floor);
        const redoFloor = await redoFloorSample(benchCase, scratch);
        redoFloors.push(redoFloor);
        redoRatios.push(accept / redoFloor);
        if (benchCase.fresh) continue;
        const atomicFloor = await atomicFloorSample(benchCase, scratch);
        atomicFloors.push(atomicFloor);
        atomicRatios.push(accept / atomicFloor);
      }
      const name = `${benchCase.count} × ${label(benchCase.size)}${benchCase.fresh ? ' (files changed just before)' : ''}${benchCase.onDisk ? ' (workspace on disk)' : ''}`;
      const capped = benchCase.count === 100 && benchCase.size === MB ? '; 1000 × 1 MB is not run (1 GB per sample), 100 × 1 MB is the cap' : '';
      figures.push({
        name: `accept ${name} modified files`,
        unit: 'ms',
        samples: accepts,
        target: benchCase.fresh ? undefined : benchCase.count === 100 && benchCase.size === KB ? '≤ 20 ms median' : benchCase.count <= 10 && benchCase.size === KB ? '≤ 100 ms median (Tab feels instant)' : undefined,
        note: `applyToReal wall time: conflict check of each real file, one redo log written into a slot made ahead + its fdatasync (the commit point; files over REDO_LOG_MAX_FILE_BYTES get their own temp fsync'd before it), each temp a hard link to the overlay's copy, renamed over its file; ${benchCase.samples} samples in ${os.tmpdir()}${capped}; ${
          benchCase.fresh ? 'the speculation wrote right after the files were made, so the check reads and hashes each one again' : `the files were last changed ${RACY_WINDOW_MS / 1000 + 0.2} s before the speculation wrote them${benchCase.onDisk ? ', and written out to the disk (sync) before, as a real workspace is: each replaced file has blocks to free' : ''}`
        }`,
      });
      figures.push({
        name: `flush after accept ${name}`,
        unit: 'ms',
        samples: flushes,
        note: 'after applyToReal returned (the user has the result): fsync of each renamed file and touched folder, then the redo log removed; not on the wait, awaited before the next sample',
      });
      figures.push({
        name: `durable floor ${name}`,
        unit: 'ms',
        samples: floors,
        note: 'the same bytes written over the same files, each fsync’d (in parallel); no check, no atomic replace, no journal',
      });
      figures.push({
        name: `accept ${name} ÷ durable floor`,
        unit: 'x',
        samples: ratios,
        target: benchCase.floorTarget,
        note: 'per interleaved sample pair',
      });
      figures.push({
        name: `redo-log floor ${name}`,
        unit: 'ms',
        samples: redoFloors,
        note: 'all new bytes appended to one log in a state folder, 1 fsync of the log + 1 of its folder (the commit point), then temp + rename per file without fsync (in parallel); no check',
      });
      figures.push({
        name: `accept ${name} ÷ redo-log floor`,
        unit: 'x',
        samples: redoRatios,
        note: 'per interleaved sample pair',
      });
      if (benchCase.fresh) continue;
      figures.push({
        name: `atomic-replace floor ${name}`,
        unit: 'ms',
        samples: atomicFloors,
        note: 'the same bytes into a new temp beside each file (open, write, fsync, close), renamed over it, then one fsync per folder (all in parallel); no check, no journal',
      });
      figures.push({
        name: `accept ${name} ÷ atomic-replace floor`,
        unit: 'x',
        samples: atomicRatios,
        note: 'per interleaved sample; what the check, the journal and the crash recovery add to an atomic, durable replace',
      });
    }
    const undos: number[] = [];
    const undoFloors: number[] = [];
    const undoRatios: number[] = [];
    // 15 pairs: the row's samples spread 1.1–2.4× within a run (its floor moves 14–21 ms between runs).
    for (let i = 0; i < UNDO_SAMPLES; i++) {
      const undo = await undoSample(100, scratch);
      const floor = await floorSample({ count: 100, size: KB, samples: 1 }, scratch);
      undos.push(undo);
      undoFloors.push(floor);
      undoRatios.push(undo / floor);
    }
    figures.push({ name: 'undo 100 × 1 KB', unit: 'ms', samples: undos, note: `CheckpointStore.undo of an accept of 100 rewritten 1 KB files (files last changed 2.2 s before): conflict check with a hash of each, replaced bytes saved for redo, one redo log into a slot made ahead + its fdatasync, temps + renames, record rewritten; its flush is not on the wait; ${UNDO_SAMPLES} samples` });
    figures.push({ name: 'durable floor 100 × 1 KB (beside undo)', unit: 'ms', samples: undoFloors, note: 'the same bytes written over the same files, each fsync’d (in parallel), right after each undo' });
    figures.push({ name: 'undo 100 × 1 KB ÷ durable floor', unit: 'x', samples: undoRatios, target: '≤ 1.5×', note: 'per interleaved sample pair' });
    const syscalls = syscallsPerFile();
    if (syscalls) figures.push({ name: 'system calls per accepted file', unit: 'count', samples: [syscalls.perFile], note: syscalls.note });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return figures;
}
