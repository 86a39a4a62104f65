// Redo logs made ahead of time (issue 28): a log file created, filled with zeros and flushed — its
// name in its folder too — before any change needs it. A change then commits with one write into
// it and one fdatasync: no new file for the disk to allocate and no folder fsync on the wait, which
// were most of a small accept's commit point (bench engine-accept, bench/RESULTS.md).
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { REDO_SUFFIX } from './redoLog';
import type { RedoFs } from './redoRecovery';

/** A slot's file name: `slot-<owner pid>-<token>.redo`; recovery tells a dead owner's slots by it. */
export const SLOT_PREFIX = 'slot-';

/**
 * The size of a slot. A log larger than this (a thousand small files, or a checkpoint's large
 * before-state) is written to a new file as before. 512 KB holds the log of 100 × 1 KB with its
 * checkpoint's before-state and plan (about 260 KB) with room to spare.
 */
export const SLOT_BYTES = 512 * 1024;

/** Slots kept ready per folder and process: one for the change under way, one for the next (whose flush may overlap). */
export const SPARE_SLOTS = 2;

/** What clearing a slot writes over its start: enough zeros to break a log's magic and header. */
const CLEAR_BYTES = 4096;

export type SlotFs = Pick<RedoFs, 'createFile' | 'fsyncFile' | 'fsyncDirectory' | 'overwriteInPlace' | 'unlink' | 'lstat'>;

/** The owner pid a slot's file name gives, or undefined when `name` is not a slot's. */
export function slotOwner(name: string): number | undefined {
  const match = /^slot-(\d+)-[0-9a-f]+\.redo$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** The slots of one folder for one process: made ahead in the background, taken by a change, given back after its flush. */
export class RedoSlots {
  private readonly ready: string[] = [];
  /** Every slot this pool made and still has (ready or taken): recovery leaves these alone. */
  private readonly mine = new Set<string>();
  private making: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    private readonly fs: SlotFs,
    readonly pid: number,
  ) {}

  /**
   * Makes slots until SPARE_SLOTS are ready, off any wait (callers do not await it, except tests
   * that need the disk settled). Never rejects: without a slot a change writes a new log file.
   */
  prepare(): Promise<void> {
    this.making ??= this.make().finally(() => {
      this.making = undefined;
    });
    return this.making;
  }

  private async make(): Promise<void> {
    try {
      // A slot whose folder was removed under it (a state folder wiped) is no longer there.
      for (const slot of [...this.ready]) {
        if ((await this.fs.lstat(slot))?.size === SLOT_BYTES) continue;
        this.ready.splice(this.ready.indexOf(slot), 1);
        this.mine.delete(slot);
      }
      const made: string[] = [];
      while (this.ready.length + made.length < SPARE_SLOTS) {
        const file = path.join(this.dir, `${SLOT_PREFIX}${this.pid}-${randomBytes(6).toString('hex')}${REDO_SUFFIX}`);
        this.mine.add(file);
        try {
          await this.fs.createFile(file, Buffer.alloc(SLOT_BYTES), { mode: 0o600, sync: true });
        } catch (error) {
          this.mine.delete(file);
          throw error;
        }
        made.push(file);
      }
      if (made.length === 0) return;
      // The names must survive a power cut before a log is committed into them.
      await this.fs.fsyncDirectory(this.dir);
      this.ready.push(...made);
    } catch {
      // A full disk or a folder that went away: changes write new log files until a later prepare succeeds.
    }
  }

  /**
   * A ready slot for a log of `bytes`, now the caller's until it releases it after its flush, or
   * undefined (none ready, or the log does not fit): the caller writes a new log file. Nothing is
   * made here: a released slot is ready again, so the owner's one prepare() keeps the pool full.
   */
  take(bytes: number): string | undefined {
    return bytes <= SLOT_BYTES ? this.ready.pop() : undefined;
  }

  /**
   * After the change's flush (or when it was never committed): the log in the slot is cleared,
   * durably through `fs` (the change's own port), and the slot is ready again. A slot that cannot
   * be cleared is removed; recovery of a dead owner's slot removes it too.
   */
  async release(slot: string, fs: SlotFs = this.fs): Promise<void> {
    try {
      await fs.overwriteInPlace(slot, Buffer.alloc(CLEAR_BYTES));
      this.ready.push(slot);
    } catch (error) {
      this.mine.delete(slot);
      await fs.unlink(slot).catch(() => undefined);
      throw error;
    }
  }

  /** A slot that failed under a change: never handed out again (recovery removes its file). */
  forget(slot: string): void {
    this.mine.delete(slot);
  }

  /** Whether `file` is one of this pool's slots; one with this pool's pid that is not was left by an earlier process that had the same pid. */
  holds(file: string): boolean {
    return this.mine.has(path.resolve(file));
  }

  /** How many slots are ready (tests). */
  get readyCount(): number {
    return this.ready.length;
  }
}

const pools = new Map<string, RedoSlots>();

/** The slots of `dir` for `pid` in this process: one pool per pair, made on first use with `fs`. */
export function redoSlotsFor(dir: string, fs: SlotFs, pid: number): RedoSlots {
  const key = `${pid}:${path.resolve(dir)}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new RedoSlots(path.resolve(dir), fs, pid);
    pools.set(key, pool);
  }
  return pool;
}

/**
 * A change's redo log being committed: written into a ready slot (one write and one fdatasync) or,
 * without one, into the new file `newFile` (create, fsync, folder fsync). `durable` resolves at the
 * commit point; `drop` (after the change's flush, or when it was not committed) clears or removes it.
 */
export class RedoLogCommit {
  /** Resolves at the commit point; rejects when the log could not be made durable (nothing committed). */
  durable: Promise<void> = Promise.resolve();

  private constructor(
    private readonly fs: SlotFs,
    private readonly slots: RedoSlots | undefined,
    /** Where the log is: the slot, or the new file. */
    public file: string,
    private slot: string | undefined,
  ) {}

  /**
   * Starts the commit of `log`: resolves once the log is on its way (a failure here means nothing
   * is committed), with `durable` still under way so the caller can stage its temps meanwhile.
   */
  static async start(fs: SlotFs, slots: RedoSlots | undefined, newFile: string, log: Uint8Array): Promise<RedoLogCommit> {
    const slot = slots?.take(log.byteLength);
    if (slots && slot) {
      const commit = new RedoLogCommit(fs, slots, slot, slot);
      commit.durable = fs.overwriteInPlace(slot, log).catch(async () => {
        // The slot failed (its file gone, say): the log goes to a new file after all.
        slots.forget(slot);
        commit.slot = undefined;
        commit.file = newFile;
        await fs.createFile(newFile, log, { mode: 0o600, sync: true });
        await fs.fsyncDirectory(path.dirname(newFile));
      });
      commit.durable.catch(() => undefined);
      return commit;
    }
    await fs.createFile(newFile, log, { mode: 0o600, sync: false });
    const commit = new RedoLogCommit(fs, slots, newFile, undefined);
    // In this order: a log whose name survives a power cut is whole (recovery can read what it names).
    commit.durable = (async () => {
      await fs.fsyncFile(newFile);
      await fs.fsyncDirectory(path.dirname(newFile));
    })();
    commit.durable.catch(() => undefined);
    return commit;
  }

  /** The log is no longer needed: a slot is cleared (durably) and ready again, a file removed (durably). */
  async drop(): Promise<void> {
    if (this.slots && this.slot) {
      await this.slots.release(this.slot, this.fs);
      return;
    }
    await this.fs.unlink(this.file);
    await this.fs.fsyncDirectory(path.dirname(this.file));
  }
}
