// Shared fixtures for the checkpoint tests: a temp workspace beside an "outside" folder and a state
// folder, a store over it, a recording file system for live writes, and a checker that every
// change came back byte for byte (content, mode, folders).
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { allFlushed } from '../../../src/core/fs/pendingFlush';
import { CheckpointStore, RecordingWorkspaceFs, type CheckpointStoreOptions } from '../../../src/core/checkpoints';
import { nodeCheckpointFs, type CheckpointFs } from '../../../src/core/checkpoints/checkpointFs';

export interface FileSpec {
  content: string;
  mode?: number;
}

export interface CheckpointBox {
  parent: string;
  ws: string;
  outside: string;
  stateDir: string;
  base: NodeWorkspaceFs;
  store: CheckpointStore;
  /** Opens the store again (a new process: another pid, a fresh object). */
  reopen(options?: Partial<CheckpointStoreOptions>): Promise<CheckpointStore>;
  /** The live agent's file system, recording into `store`. */
  recorder(store?: CheckpointStore): RecordingWorkspaceFs;
  write(relative: string, content: string, mode?: number): Promise<void>;
  read(relative: string): Promise<string>;
  dispose(): Promise<void>;
}

export async function makeCheckpointBox(files: Record<string, string | FileSpec>, options: Partial<CheckpointStoreOptions> = {}): Promise<CheckpointBox> {
  const parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-checkpoint-test-')));
  const ws = path.join(parent, 'ws');
  const outside = path.join(parent, 'outside');
  const stateDir = path.join(parent, 'state');
  await mkdir(ws);
  await mkdir(outside);
  const put = async (relative: string, content: string, mode?: number) => {
    const file = path.join(ws, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    if (mode !== undefined) await chmod(file, mode);
  };
  for (const [relative, spec] of Object.entries(files)) {
    if (typeof spec === 'string') await put(relative, spec);
    else await put(relative, spec.content, spec.mode);
  }
  await writeFile(path.join(outside, 'secret.txt'), 'outside secret\n');
  const base = await NodeWorkspaceFs.open(ws, { ripgrepPath: null });
  const store = await CheckpointStore.open({ stateDir, workspaceRoot: ws, ...options });
  return {
    parent,
    ws,
    outside,
    stateDir,
    base,
    store,
    reopen: (more = {}) => CheckpointStore.open({ stateDir, workspaceRoot: ws, pid: process.pid + 100_000, isProcessAlive: () => false, ...more }),
    recorder: (s = store) => new RecordingWorkspaceFs(base, s),
    write: put,
    read: (relative) => readFile(path.join(ws, relative), 'utf8'),
    // An accept's or undo's flush runs after its result; the box goes once it is done, as the engine waits before exit.
    dispose: async () => {
      await allFlushed();
      await rm(parent, { recursive: true, force: true });
    },
  };
}

/** node's fs with `op` failing (errno `code`) for paths matching `match` while `armed`. */
export function faultyFs(op: keyof CheckpointFs, match: RegExp, code: string): CheckpointFs & { armed: boolean } {
  const fs = { ...nodeCheckpointFs, armed: true };
  const original = nodeCheckpointFs[op] as (...args: unknown[]) => Promise<unknown>;
  const wrapped = async (...args: unknown[]) => {
    if (fs.armed && args.some((arg) => typeof arg === 'string' && match.test(arg))) throw Object.assign(new Error(`${code}: simulated failure`), { code });
    return original(...args);
  };
  return Object.assign(fs, { [op]: wrapped });
}

/** A test's stand-in for a process dying: thrown from a step hook, it stops the work on the spot. */
export class Crash extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Crash';
  }
}

export function crashAt(phase: 'staged' | 'committed', count: number) {
  let seen = 0;
  return (event: { phase: 'staged' | 'committed' }) => {
    if (event.phase === phase && ++seen === count) throw new Crash(`simulated crash after ${count} ${phase}`);
  };
}
