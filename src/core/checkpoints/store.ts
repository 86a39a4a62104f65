// The checkpoints of one workspace on disk: <stateDir>/checkpoints/<workspace key>/ holding one
// record per checkpoint, the content-addressed blobs they refer to, and the journals of undos in flight.
import { createHash, randomBytes } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { BlobStore } from './blobStore';
import { errorCode, nodeCheckpointFs, type CheckpointFs } from './checkpointFs';
import { ensurePrivateDirectory } from './privateDir';
import { isPlainCheckpointId, parseRecord, summaryOf, type CheckpointOrigin, type CheckpointRecord, type CheckpointSummary } from './record';
import { pruneCheckpoints, type PruneLimits, type PruneReport } from './prune';
import type { CheckpointStoreOptions, CheckpointReadResult, StoreFiles } from './storeFiles';
import { CheckpointRecording } from './recording';
import { recoverCheckpoints, type CheckpointRecoveryReport } from './recovery';
import { restoreGit } from './gitRestore';
import { redoSlotsFor, type RedoSlots } from '../fs/redoSlots';
import { asideFolderFor, keepAside } from '../fs/setAside';
import { prepareRestoreLock } from './restoreLock';
import { planRestore, restore, type RestoreOptions, type RestoreOutcome, type RestorePlan } from './restore';

export const CHECKPOINTS_FOLDER = 'checkpoints';
export type { CheckpointStoreOptions, CheckpointReadResult } from './storeFiles';

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else — still alive.
    return errorCode(error) === 'EPERM';
  }
}

/** The folder name for a workspace: readable, and unique by the hash of its real path. */
export function workspaceKey(realRoot: string): string {
  const name = path.basename(realRoot).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40) || 'root';
  return `${name}-${createHash('sha256').update(realRoot).digest('hex').slice(0, 16)}`;
}

export class CheckpointStore implements StoreFiles {
  readonly blobs: BlobStore;
  readonly recordsDir: string;
  readonly journalsDir: string;
  readonly fs: CheckpointFs;
  readonly pid: number;
  /** Second names of records replaced by unsynced writes, by checkpoint id, until syncRecord. */
  private readonly recordsAside = new Map<string, string[]>();

  private constructor(
    /** Realpath of the workspace. */
    readonly root: string,
    /** This workspace's folder in the state folder. */
    readonly dir: string,
    readonly options: CheckpointStoreOptions,
  ) {
    this.fs = options.fs ?? nodeCheckpointFs;
    this.pid = options.pid ?? process.pid;
    this.blobs = new BlobStore(path.join(dir, 'blobs'), this.fs);
    this.recordsDir = path.join(dir, 'records');
    this.journalsDir = path.join(dir, 'journals');
  }

  static async open(options: CheckpointStoreOptions): Promise<CheckpointStore> {
    let root: string;
    try {
      root = await realpath(options.workspaceRoot);
    } catch {
      throw new Error(`Workspace folder ${options.workspaceRoot} does not exist; checkpoints belong to an existing folder.`);
    }
    const dir = path.join(path.resolve(options.stateDir), CHECKPOINTS_FOLDER, workspaceKey(root));
    for (const sub of ['', 'records', 'blobs', 'journals']) await ensurePrivateDirectory(path.join(dir, sub));
    return new CheckpointStore(root, dir, options);
  }

  /**
   * The redo-log slots of this store's journals folder for this process: a long-lived owner (the
   * extension) prepares them after recovery, and each accept or undo that takes one makes the next.
   */
  get slots(): RedoSlots {
    return redoSlotsFor(this.journalsDir, this.fs, this.pid);
  }

  /**
   * What the next accept and undo commit with, made ahead (after recovery, which removes what dead
   * processes left): the redo-log slots and the owner file undo locks are linked to. Never rejects.
   */
  async prepare(): Promise<void> {
    prepareRestoreLock(this);
    await this.slots.prepare();
  }

  now(): number {
    return (this.options.now ?? Date.now)();
  }

  processAlive(pid: number): boolean {
    if (pid === this.pid) return true;
    return (this.options.isProcessAlive ?? isProcessAlive)(pid);
  }

  private recordPath(id: string): string {
    if (!isPlainCheckpointId(id)) throw new Error(`"${id}" is not a checkpoint id.`);
    return path.join(this.recordsDir, `${id}.json`);
  }

  /** Starts a checkpoint; nothing is on disk until its first capture. */
  begin(origin: CheckpointOrigin): CheckpointRecording {
    return new CheckpointRecording(this, origin);
  }

  /** Takes the checkpoint's change back: see restore() for the conflict rule and the journal. */
  async undo(id: string, options: RestoreOptions = {}): Promise<RestoreOutcome> {
    // The files first, then the refs an accept moved (commit ahead), each by its own compare-and-swap;
    // the record the files' restore read says whether there are any (a record never gains them).
    const seen: { record?: CheckpointRecord } = {};
    return restoreGit(this, id, 'undo', await restore(this, id, 'undo', options, seen), seen.record);
  }

  /** Puts back what an undo replaced, with the same conflict rule. */
  async redo(id: string, options: RestoreOptions = {}): Promise<RestoreOutcome> {
    const seen: { record?: CheckpointRecord } = {};
    return restoreGit(this, id, 'redo', await restore(this, id, 'redo', options, seen), seen.record);
  }

  /** What undo would restore and which files conflict, without changing anything. */
  planUndo(id: string): Promise<RestorePlan> {
    return planRestore(this, id, 'undo');
  }

  planRedo(id: string): Promise<RestorePlan> {
    return planRestore(this, id, 'redo');
  }

  /** Finishes what dead processes left (interrupted undos, unfinished recordings). */
  recover(): Promise<CheckpointRecoveryReport> {
    return recoverCheckpoints(this);
  }

  prune(limits: PruneLimits): Promise<PruneReport> {
    return pruneCheckpoints(this, limits);
  }

  async read(id: string): Promise<CheckpointReadResult> {
    const file = this.recordPath(id);
    const info = await this.fs.lstat(file);
    if (!info) return { ok: false, reason: 'unknown', message: `There is no checkpoint "${id}" for this workspace.` };
    const record = info.type === 'file' ? parseRecord(Buffer.from(await this.fs.readFile(file)).toString('utf8'), id) : undefined;
    if (!record || record.workspaceRoot !== this.root) {
      return { ok: false, reason: 'malformed', message: `Checkpoint "${id}" cannot be read (its record is damaged or not one Speculate wrote); nothing was changed.` };
    }
    return { ok: true, record };
  }

  /**
   * Replaces the record atomically (temp + fsync + rename + folder fsync). `sync: false` leaves out
   * both fsyncs, for a change whose redo log holds the record durably; its flush calls syncRecord.
   * Such a write also sets the record it replaces aside until then (setAside.ts): that file is on
   * the disk, and a rename freeing its blocks took 0.3–4 ms of an undo's wait here.
   */
  async write(record: CheckpointRecord, options: { sync?: boolean } = {}): Promise<void> {
    const sync = options.sync ?? true;
    const target = this.recordPath(record.id);
    const temp = path.join(this.recordsDir, `.${record.id}.${randomBytes(6).toString('hex')}.tmp`);
    if (sync) await this.fs.writeDurable(temp, JSON.stringify(record), 0o600);
    else await this.fs.createFile(temp, Buffer.from(JSON.stringify(record)), { mode: 0o600, sync: false });
    const aside = sync ? undefined : await keepAside(this.fs, asideFolderFor(this.journalsDir, this.recordsDir), target, this.pid);
    try {
      await this.fs.rename(temp, target);
    } catch (error) {
      await this.fs.unlink(temp);
      if (aside) await this.fs.unlink(aside);
      throw error;
    }
    if (aside) this.recordsAside.set(record.id, [...(this.recordsAside.get(record.id) ?? []), aside]);
    if (sync) await this.fs.fsyncDirectory(this.recordsDir);
  }

  /** Makes a record written with `sync: false` durable, then frees the records it replaced. */
  async syncRecord(id: string): Promise<void> {
    await this.fs.fsyncFile(this.recordPath(id));
    await this.fs.fsyncDirectory(this.recordsDir);
    const asides = this.recordsAside.get(id) ?? [];
    this.recordsAside.delete(id);
    for (const aside of asides) await this.fs.unlink(aside).catch(() => undefined);
  }

  async remove(id: string): Promise<void> {
    await this.fs.unlink(this.recordPath(id));
    await this.fs.fsyncDirectory(this.recordsDir);
  }

  /** Ids of every record file (valid or not), unordered. */
  async ids(): Promise<string[]> {
    return (await this.fs.readdir(this.recordsDir))
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .filter(isPlainCheckpointId);
  }

  /** Every readable checkpoint of the workspace, newest first. */
  async records(): Promise<CheckpointRecord[]> {
    const found: CheckpointRecord[] = [];
    for (const id of await this.ids()) {
      const result = await this.read(id);
      if (result.ok) found.push(result.record);
    }
    return found.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  }

  async list(): Promise<CheckpointSummary[]> {
    return (await this.records()).filter((r) => r.state !== 'recording').map(summaryOf);
  }

  /** Bytes the store takes on disk (records, blobs, journals). */
  async sizeOnDisk(): Promise<number> {
    let total = 0;
    for (const dir of [this.recordsDir, this.blobs.dir, this.journalsDir]) {
      for (const name of await this.fs.readdir(dir)) {
        const info = await this.fs.lstat(path.join(dir, name));
        if (info?.type === 'file') total += info.size;
      }
    }
    return total;
  }
}
