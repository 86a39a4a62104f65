// Checkpoints: undo's time for 100 (and 1000) edited 1 KB files beside the durable floor of writing
// the same files back in the same run; what saving the checkpoint adds to an accept of 2 files (a
// typical Tab) and of 100; and the store's size on disk after the recorded demo session.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { CheckpointStore } from '../../src/core/checkpoints';
import { checkpointHook } from '../../src/core/followup/acceptCheckpoint';
import { OverlayFs } from '../../src/core/followup/overlayFs';
import { NodeWorkspaceFs } from '../../src/core/fs/nodeWorkspaceFs';
import { OpenAiCompatibleClient } from '../../src/core/llm/openAiCompatibleClient';
import type { ChatSession } from '../../src/core/session';
import { openWorkspaceServices } from '../../src/core/workspaceServices';
import { demoReply } from '../../test/fixtures/scripted/demoScript';
import { ScriptedServer } from '../../test/fixtures/scriptedServer';
import { loadRecordedSession, recordedSessionChat, replayRecordedSession } from '../lib/recordedSession';
import type { Figure } from '../types';

const KB = 1024;
const fileName = (i: number) => `pkg${Math.floor(i / 100)}/file${i}.txt`;

function ms(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

interface World {
  ws: string;
  tmpRoot: string;
  stateDir: string;
  originals: Buffer[];
}

/** A fresh workspace of `count` 1 KB files, 100 to a folder, like a real tree. */
async function world(scratch: string, count: number): Promise<World> {
  const ws = path.join(scratch, 'ws');
  const tmpRoot = path.join(scratch, 'tmp');
  const stateDir = path.join(scratch, 'state');
  await mkdir(tmpRoot, { recursive: true });
  const originals: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const file = path.join(ws, fileName(i));
    await mkdir(path.dirname(file), { recursive: true });
    const data = randomBytes(KB);
    originals.push(data);
    await writeFile(file, data);
  }
  return { ws, tmpRoot, stateDir, originals };
}

async function cleanup(w: World): Promise<void> {
  for (const dir of [w.ws, w.tmpRoot, w.stateDir]) await rm(dir, { recursive: true, force: true });
}

/** An overlay that rewrote every file, accepted (with or without its checkpoint); the accept's time. */
async function accept(w: World, count: number, store: CheckpointStore | undefined): Promise<{ ms: number; checkpoint: string | null }> {
  const base = await NodeWorkspaceFs.open(w.ws);
  const overlay = await OverlayFs.create({ base, tmpRoot: w.tmpRoot });
  try {
    for (let i = 0; i < count; i++) await overlay.writeFile(fileName(i), randomBytes(KB));
    const recording = store?.begin({ kind: 'accept', suggestion: 'bench', runId: 'bench' });
    const started = process.hrtime.bigint();
    const result = await overlay.applyToReal(recording ? { beforeReplace: checkpointHook(recording, new Set()) } : {});
    const summary = recording ? await recording.finish(result.applied) : null;
    const elapsed = ms(started);
    if (result.applied.length !== count) throw new Error(`accept applied ${result.applied.length} of ${count} files`);
    return { ms: elapsed, checkpoint: summary?.id ?? null };
  } finally {
    await overlay.cleanup();
  }
}

/** The floor an undo cannot beat: the same bytes written back durably (temp + fsync + rename), one folder fsync each. */
async function durableFloor(w: World, count: number): Promise<number> {
  const started = process.hrtime.bigint();
  const dirs = new Set<string>();
  for (let i = 0; i < count; i++) {
    const target = path.join(w.ws, fileName(i));
    const temp = `${target}.floor.tmp`;
    const handle = await open(temp, 'wx');
    await handle.writeFile(w.originals[i]);
    await handle.sync();
    await handle.close();
    await rename(temp, target);
    dirs.add(path.dirname(target));
  }
  for (const dir of dirs) {
    const handle = await open(dir, 'r');
    await handle.sync();
    await handle.close();
  }
  return ms(started);
}

async function undoCase(scratch: string, count: number, samples: number): Promise<Figure[]> {
  const undo: number[] = [];
  const floor: number[] = [];
  const ratios: number[] = [];
  for (let s = 0; s < samples; s++) {
    const w = await world(scratch, count);
    try {
      const store = await CheckpointStore.open({ stateDir: w.stateDir, workspaceRoot: w.ws });
      const { checkpoint } = await accept(w, count, store);
      if (!checkpoint) throw new Error('the accept recorded no checkpoint');
      const started = process.hrtime.bigint();
      const result = await store.undo(checkpoint);
      const elapsed = ms(started);
      if (!result.ok || result.restored.length !== count) throw new Error(`undo restored ${result.ok ? result.restored.length : result.message} of ${count}`);
      // Interleaved: the floor rewrites the same files right after, on the same disk.
      const f = await durableFloor(w, count);
      undo.push(elapsed);
      floor.push(f);
      ratios.push(elapsed / f);
    } finally {
      await cleanup(w);
    }
  }
  const note = `${samples} samples in ${os.tmpdir()}; each: an accept of ${count} rewritten 1 KB files (with its checkpoint), then CheckpointStore.undo (conflict check with a hash of each file, the replaced bytes saved for redo, journal, temp + fsync + rename per file, the record rewritten)`;
  return [
    { name: `undo ${count} × 1 KB edited files`, unit: 'ms', samples: undo, note },
    { name: `durable floor: ${count} × 1 KB written back (temp + fsync + rename)`, unit: 'ms', samples: floor, note: 'the same bytes, the same files, right after each undo: what any crash-safe restore must spend' },
    { name: `undo ${count} × 1 KB ÷ durable floor`, unit: 'x', samples: ratios, note: `per interleaved sample; ratio of medians ${(median(undo) / median(floor)).toFixed(2)}` },
  ];
}

async function acceptOverhead(scratch: string, count: number, samples: number): Promise<Figure[]> {
  const withCheckpoint: number[] = [];
  const without: number[] = [];
  for (let s = 0; s < samples; s++) {
    // Alternating, so drift of the machine falls on both.
    for (const record of s % 2 === 0 ? [true, false] : [false, true]) {
      const w = await world(scratch, count);
      try {
        const store = record ? await CheckpointStore.open({ stateDir: w.stateDir, workspaceRoot: w.ws }) : undefined;
        (record ? withCheckpoint : without).push((await accept(w, count, store)).ms);
      } finally {
        await cleanup(w);
      }
    }
  }
  return [
    { name: `accept ${count} × 1 KB with its checkpoint`, unit: 'ms', samples: withCheckpoint, note: `applyToReal with the checkpoint hook (the replaced files saved durably beside the staging, before the commit point), then the record finished; ${samples} samples alternating with the next figure` },
    { name: `accept ${count} × 1 KB without a checkpoint`, unit: 'ms', samples: without, note: 'the same accept without the hook (the floor for the figure above)' },
    { name: `accept ${count} × 1 KB: with ÷ without checkpoint`, unit: 'x', samples: [median(withCheckpoint) / median(without)], note: 'ratio of the medians: what undo costs Tab' },
  ];
}

/** The recorded demo session on a ChatSession with checkpoints: the store's size afterwards. */
async function demoSessionSize(): Promise<Figure[]> {
  const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'speculate-bench-checkpoints-demo-')));
  const workspace = path.join(scratch, 'workspace');
  const tmpRoot = path.join(scratch, 'tmp');
  cpSync(path.join(process.cwd(), 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
  mkdirSync(tmpRoot);
  const server = new ScriptedServer({ script: (request) => ({ ...demoReply(request.body ?? {}), latencyMs: 0, tokensPerSecond: undefined }) });
  await server.start();
  let session: ChatSession | undefined;
  try {
    const recorded = loadRecordedSession();
    const services = await openWorkspaceServices(workspace, { tmpRoot });
    const store = await CheckpointStore.open({ stateDir: path.join(scratch, 'state'), workspaceRoot: workspace });
    session = recordedSessionChat(recorded, services, new OpenAiCompatibleClient({ baseURL: server.baseUrl, apiKey: 'bench' }), store);
    await replayRecordedSession(session, recorded);
    const list = await store.list();
    const files = list.reduce((n, c) => n + c.files.length, 0);
    const bytes = await store.sizeOnDisk();
    return [
      {
        name: 'checkpoint store on disk after the demo session',
        unit: 'KB',
        samples: [bytes / KB],
        note: `test/fixtures/recorded/demo-tab-session.json replayed on a ChatSession with checkpoints (${recorded.steps.length} steps): ${list.length} checkpoints covering ${files} file changes; records + content-addressed blobs + journals, in <state>/checkpoints/<workspace>/`,
      },
    ];
  } finally {
    await session?.dispose();
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export default async function checkpoints(): Promise<Figure[]> {
  const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'speculate-bench-checkpoints-')));
  try {
    return [
      ...(await undoCase(scratch, 100, 7)),
      ...(await undoCase(scratch, 1000, 3)),
      ...(await acceptOverhead(scratch, 2, 10)),
      ...(await acceptOverhead(scratch, 100, 6)),
      ...(await demoSessionSize()),
    ];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
