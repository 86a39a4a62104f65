// One writer at a time per workspace, across every process of the user: accept holds the lock from
// its check to its last rename, live writes for their compare-and-replace, so two windows never
// both "win" the same file. A lock file in the engine's private state folder, keyed by the
// workspace's real path; a lock left by a dead process (or an earlier boot) is taken over.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, lstat, open, readFile, realpath, unlink, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { isWithin } from './paths';
import { choosePrivateBase, ensurePrivateFolder, perUserName } from './privateFolders';

export interface WorkspaceLock {
  /** Runs `work` while holding the workspace's lock; waits for other holders (bounded). */
  hold<T>(work: () => Promise<T>): Promise<T>;
}

/** The lock stayed taken longer than a write may wait: says who holds it and what to do. */
export class WorkspaceBusyError extends Error {
  constructor(readonly holderPid: number | undefined, waitedMs: number) {
    super(
      `Another Speculate window or command${holderPid ? ` (process ${holderPid})` : ''} kept writing to this workspace for ${Math.round(waitedMs / 1000)} s; nothing was changed. Try again once it is done.`,
    );
    this.name = 'WorkspaceBusyError';
  }
}

/** First come, first served within one process; the file lock adds the other processes. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async run<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      return await work();
    } finally {
      release();
    }
  }
}

const processMutexes = new Map<string, Mutex>();

function mutexFor(key: string): Mutex {
  let mutex = processMutexes.get(key);
  if (!mutex) {
    mutex = new Mutex();
    processMutexes.set(key, mutex);
  }
  return mutex;
}

/** Sessions of this process only (tests, or where no state folder is given): keyed by the real root. */
export function processLock(root: string): WorkspaceLock {
  const mutex = mutexFor(`process:${root}`);
  return { hold: (work) => mutex.run(work) };
}

// ── who holds a lock file, and whether that one still runs ──────────────────────────────────────

interface Holder {
  pid: number;
  /** /proc's boot id where there is one: a lock from before a reboot is stale whatever its pid. */
  bootId?: string;
  /** When the machine booted (ms), where no boot id exists; compared with a tolerance. */
  bootTime: number;
  /** The holder's start time since boot (Linux clock ticks): a reused pid is another process. */
  startTicks?: number;
  token: string;
  root: string;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

const BOOT_ID = readText('/proc/sys/kernel/random/boot_id')?.trim() || undefined;

/** Field 22 of /proc/<pid>/stat, after the command name (which may hold spaces and parentheses). */
function startTicksOf(pid: number | 'self'): number | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]);
  return Number.isFinite(ticks) ? ticks : undefined;
}

function bootTime(): number {
  return Date.now() - os.uptime() * 1000;
}

export function defaultIsProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface LockLiveness {
  isProcessAlive?: (pid: number) => boolean;
  /** This machine's boot id and boot time; tests pass others to fake a reboot. */
  bootId?: string | undefined;
  bootTime?: number;
  /** A process's start ticks (undefined when unknown); tests fake a reused pid. */
  startTicksOf?: (pid: number) => number | undefined;
}

/** Whether the process that wrote `holder` is gone: it died, the machine rebooted, or its pid now names another process. */
export function isStale(holder: Holder, liveness: LockLiveness = {}): boolean {
  const currentBootId = 'bootId' in liveness ? liveness.bootId : BOOT_ID;
  if (holder.bootId && currentBootId) {
    if (holder.bootId !== currentBootId) return true;
  } else if (Math.abs(holder.bootTime - (liveness.bootTime ?? bootTime())) > 60_000) {
    return true;
  }
  if (!(liveness.isProcessAlive ?? defaultIsProcessAlive)(holder.pid)) return true;
  const ticks = (liveness.startTicksOf ?? startTicksOf)(holder.pid);
  return holder.startTicks !== undefined && ticks !== undefined && ticks !== holder.startTicks;
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (typeof value.pid !== 'number' || typeof value.token !== 'string' || typeof value.bootTime !== 'number') return undefined;
    return value as Holder;
  } catch {
    return undefined;
  }
}

// ── the file lock ───────────────────────────────────────────────────────────────────────────────

export interface FileLockOptions extends LockLiveness {
  /** The engine's private state folder; locks live in its `locks/` (never inside the workspace). */
  stateDir: string;
  /** The workspace; its real path names the lock. */
  root: string;
  /** How long a writer waits for the lock before giving up (default 30 s). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** A breaker (taking over a stale lock) older than this died while breaking. */
const STALE_BREAKER_MS = 10_000;
/** An unreadable lock file (being written by a crashed writer) younger than this counts as held. */
const UNREADABLE_GRACE_MS = 5_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The lock file of a workspace: `<stateDir>/locks/<sha256 of its real path>.lock`. */
export async function lockFileFor(stateDir: string, root: string): Promise<string> {
  const real = await realpath(root).catch(() => path.resolve(root));
  // The engine's state never lives inside the workspace it guards (git and the user would see it).
  const base = isWithin(real, path.resolve(stateDir)) ? path.join(await choosePrivateBase({ avoid: [real] }), perUserName('speculate'), 'state') : stateDir;
  return path.join(base, 'locks', `${createHash('sha256').update(real).digest('hex').slice(0, 32)}.lock`);
}

/**
 * The per-workspace lock shared by every process of the user. Acquiring links a fully written
 * file to the lock name (atomic: it exists whole or not at all); a stale one is removed under a
 * short-lived breaker file, so two processes never both take it over.
 */
export class FileWorkspaceLock implements WorkspaceLock {
  private constructor(
    private readonly file: string,
    private readonly root: string,
    private readonly options: FileLockOptions,
  ) {}

  static async open(options: FileLockOptions): Promise<FileWorkspaceLock> {
    const file = await lockFileFor(options.stateDir, options.root);
    await ensurePrivateFolder(path.dirname(path.dirname(file)));
    await ensurePrivateFolder(path.dirname(file));
    return new FileWorkspaceLock(file, await realpath(options.root).catch(() => options.root), options);
  }

  /** Where the lock file is (tests and diagnostics). */
  get path(): string {
    return this.file;
  }

  hold<T>(work: () => Promise<T>): Promise<T> {
    return mutexFor(`file:${this.file}`).run(async () => {
      const token = await this.acquire();
      try {
        return await work();
      } finally {
        await this.release(token);
      }
    });
  }

  private async acquire(): Promise<string> {
    const token = randomBytes(12).toString('hex');
    const holder: Holder = { pid: process.pid, bootTime: bootTime(), token, root: this.root, ...(BOOT_ID ? { bootId: BOOT_ID } : {}) };
    const ticks = startTicksOf('self');
    if (ticks !== undefined) holder.startTicks = ticks;
    const draft = `${this.file}.${process.pid}.${token}`;
    await writeFile(draft, JSON.stringify(holder), { mode: 0o600, flag: 'wx' });
    const started = Date.now();
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await link(draft, this.file);
          return token;
        } catch (error) {
          if (code(error) !== 'EEXIST') throw error;
        }
        const current = await this.currentHolder();
        if (current.stale) await this.breakStale(current.ino);
        else if (Date.now() - started > timeoutMs) throw new WorkspaceBusyError(current.holder?.pid, Date.now() - started);
        else await sleep(Math.min(25, 1 + attempt) * (0.5 + Math.random()));
      }
    } finally {
      await unlink(draft).catch(() => undefined);
    }
  }

  private async currentHolder(): Promise<{ holder: Holder | undefined; stale: boolean; ino: number | undefined }> {
    const info = await lstat(this.file).catch(() => undefined);
    if (!info) return { holder: undefined, stale: false, ino: undefined };
    const holder = parseHolder(await readFile(this.file, 'utf8').catch(() => ''));
    if (!holder) return { holder, stale: Date.now() - info.mtimeMs > UNREADABLE_GRACE_MS, ino: info.ino };
    return { holder, stale: isStale(holder, this.options), ino: info.ino };
  }

  /** Removes a stale lock file, once: only the process holding the breaker does, and only the file it judged. */
  private async breakStale(ino: number | undefined): Promise<void> {
    const breaker = `${this.file}.break`;
    let handle;
    try {
      handle = await open(breaker, 'wx', 0o600);
    } catch (error) {
      if (code(error) !== 'EEXIST') throw error;
      const info = await lstat(breaker).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > STALE_BREAKER_MS) await unlink(breaker).catch(() => undefined);
      await sleep(2);
      return;
    }
    try {
      const again = await this.currentHolder();
      if (again.stale && again.ino === ino) await unlink(this.file).catch(() => undefined);
    } finally {
      await handle.close();
      await unlink(breaker).catch(() => undefined);
    }
  }

  private async release(token: string): Promise<void> {
    const holder = parseHolder(await readFile(this.file, 'utf8').catch(() => ''));
    if (holder?.token === token) await unlink(this.file).catch(() => undefined);
  }
}
