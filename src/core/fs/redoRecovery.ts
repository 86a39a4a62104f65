// Completing a committed redo log after a crash or power cut: each file that still holds what the
// plan expected gets the new bytes (atomically, durably); one that holds them is done; any other is
// the user's and is kept. A log that is not whole is discarded, with the temps its header names.
import { randomBytes, createHash } from 'node:crypto';
import * as path from 'node:path';
import { resolveInsideWorkspace, toAbsolute } from './paths';
import { decodeRedoLog, type RedoPlan, type RedoStep } from './redoLog';
import { isTempFor, tempPathFor, type TempKind } from './tempNames';

/** The disk operations a redo log's writer and its recovery perform; tests drop unsynced ones (a power cut). */
export interface RedoFs {
  /** Does not follow a final symlink; undefined when nothing is there. */
  lstat(absolute: string): Promise<{ type: 'file' | 'directory' | 'symlink' | 'other'; size: number; mode: number } | undefined>;
  readFile(absolute: string): Promise<Uint8Array>;
  /** Creates `absolute` (which must not exist) with `data` and `mode`; on disk before resolving only when `sync`. */
  createFile(absolute: string, data: Uint8Array, options: { mode?: number; owner?: { uid: number; gid: number }; sync: boolean }): Promise<void>;
  /**
   * createFile (flushed when `sync`) of a stored copy nothing writes to any more, without copying
   * it: a second name of `source`'s file, with exactly `mode` and the current time. Throws where
   * that cannot be (another disk): the caller writes the bytes. See storedCopies.ts.
   */
  linkNew(source: string, destination: string, options: { mode: number; sync: boolean; sourceMode?: number }): Promise<void>;
  /**
   * Writes `data` over the start of an existing file (never creating one, never following a final
   * symlink; what lies past it stays) and flushes its data before resolving: the commit of a redo
   * log into a slot made ahead (redoSlots.ts), whose name and blocks are already on disk.
   */
  overwriteInPlace(absolute: string, data: Uint8Array): Promise<void>;
  /**
   * A second name for an existing file, the file itself unchanged (link(2), in line: a metadata
   * call). Throws where it cannot be (no hard links there, EEXIST): the caller goes without.
   */
  link(existing: string, newName: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Quiet when already gone. */
  unlink(absolute: string): Promise<void>;
  /** Flushes one file's data and metadata. */
  fsyncFile(absolute: string): Promise<void>;
  /** Makes a folder's entries (creations, renames, removals) durable. */
  fsyncDirectory(absolute: string): Promise<void>;
  /** Removes an empty folder; false when it was not empty or not there. */
  rmdirIfEmpty(absolute: string): Promise<boolean>;
  /** Creates one folder level; quiet when it exists. */
  mkdir(absolute: string): Promise<void>;
}

/**
 * fsync of a folder the change may have removed since (emptied by its deletions): gone is fine, its
 * parent's fsync (also in the flush) makes the removal durable.
 */
export async function fsyncFolderIfThere(fs: Pick<RedoFs, 'fsyncDirectory'>, absolute: string): Promise<void> {
  try {
    await fs.fsyncDirectory(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
}

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The temp kind a log of this kind names (so a damaged log can never point recovery at a user's file). */
export function tempKindOf(plan: Pick<RedoPlan, 'kind'>): TempKind {
  return plan.kind === 'accept' ? 'speculate' : 'speculate-undo';
}

async function placeable(root: string, relative: string): Promise<boolean> {
  try {
    return (await resolveInsideWorkspace(root, relative)) === relative;
  } catch {
    return false;
  }
}

async function holds(fs: RedoFs, absolute: string, state: { exists: false } | { exists: true; sha256: string; size: number }): Promise<boolean> {
  const info = await fs.lstat(absolute);
  if (!state.exists) return info === undefined;
  if (info?.type !== 'file' || info.size !== state.size) return false;
  return sha256Hex(await fs.readFile(absolute)) === state.sha256;
}

async function removeOwnTemp(fs: RedoFs, plan: RedoPlan, step: RedoStep): Promise<void> {
  const temp = step.temp;
  if (!temp || !isTempFor(step.path, temp, tempKindOf(plan)) || !(await placeable(plan.workspaceRoot, temp))) return;
  const absolute = toAbsolute(plan.workspaceRoot, temp);
  if ((await fs.lstat(absolute))?.type === 'file') await fs.unlink(absolute);
}

/** The new bytes of a write step: from the log's body, or from its durable temp (checked against the plan). */
async function newBytes(fs: RedoFs, plan: RedoPlan, step: RedoStep, body: Buffer): Promise<Uint8Array | undefined> {
  if (step.data) return body.subarray(step.data.offset, step.data.offset + step.data.length);
  if (!step.temp || !isTempFor(step.path, step.temp, tempKindOf(plan)) || !(await placeable(plan.workspaceRoot, step.temp))) return undefined;
  const absolute = toAbsolute(plan.workspaceRoot, step.temp);
  if ((await fs.lstat(absolute))?.type !== 'file') return undefined;
  const data = await fs.readFile(absolute);
  return sha256Hex(data) === step.after?.sha256 ? data : undefined;
}

export type StepOutcome = 'applied' | 'kept' | 'unavailable';

/**
 * Brings one step of a committed log to its end, or leaves the user's file: `touched` collects the
 * folders whose entries changed (to fsync once each).
 */
export async function rollForwardStep(fs: RedoFs, plan: RedoPlan, step: RedoStep, body: Buffer, touched: Set<string>): Promise<StepOutcome> {
  const root = plan.workspaceRoot;
  // Whatever happened to the step, the old file set aside for the flush is not needed any more.
  if (!(await placeable(root, step.path))) {
    await removeOwnTemp(fs, plan, step);
    return 'kept';
  }
  const target = toAbsolute(root, step.path);
  if (step.action === 'delete') {
    if ((await fs.lstat(target)) === undefined) return 'applied';
    if (!(await holds(fs, target, step.expect))) return 'kept';
    await fs.unlink(target);
    touched.add(path.dirname(target));
    return 'applied';
  }
  const after = step.after!;
  if (await holds(fs, target, { exists: true, sha256: after.sha256, size: after.size })) {
    await removeOwnTemp(fs, plan, step);
    return 'applied';
  }
  if (!(await holds(fs, target, step.expect))) {
    // The user's version (changed after the crash, or at the last moment before it): it wins.
    await removeOwnTemp(fs, plan, step);
    return 'kept';
  }
  const data = await newBytes(fs, plan, step, body);
  if (!data) return 'unavailable';
  // Folders the change made for a new file may not have survived a power cut (their parent was not
  // fsync'd yet): made again, but only those the plan made; any other missing folder is the user's doing.
  const parents = step.path.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'));
  for (const dir of parents) {
    const absolute = toAbsolute(root, dir);
    const info = await fs.lstat(absolute);
    if (info?.type === 'directory') continue;
    if (info || !plan.createdDirs.includes(dir)) return 'kept';
    await fs.mkdir(absolute);
    touched.add(path.dirname(absolute));
    touched.add(absolute);
  }
  // A fresh temp, flushed, then renamed: a second crash during recovery leaves old or new, never half.
  const temp = toAbsolute(root, tempPathFor(step.path, randomBytes(8).toString('hex'), tempKindOf(plan)));
  await fs.createFile(temp, data, { mode: after.mode, sync: true });
  await fs.rename(temp, target);
  await removeOwnTemp(fs, plan, step);
  touched.add(path.dirname(target));
  return 'applied';
}

export interface RedoRecovery {
  outcome: 'rolled-forward' | 'discarded';
  plan: RedoPlan | undefined;
  applied: string[];
  /** Paths left as the user has them (a conflict, said to the user as at accept). */
  kept: string[];
}

/**
 * Recovers one log file: rolls a committed one forward (then `finish` settles its owner's state —
 * a checkpoint — before the log goes), discards one that is not whole. The log is removed last,
 * durably, so a crash during recovery just recovers again.
 */
export async function recoverRedoLog(
  fs: RedoFs,
  logPath: string,
  options: { finish?: (plan: RedoPlan, body: Buffer, result: { applied: string[]; kept: string[] }) => Promise<void>; root?: string } = {},
): Promise<RedoRecovery> {
  const decoded = decodeRedoLog(Buffer.from(await fs.readFile(logPath)));
  const dropLog = async () => {
    await fs.unlink(logPath);
    await fs.fsyncDirectory(path.dirname(logPath));
  };
  if (!decoded.committed || (options.root !== undefined && decoded.plan.workspaceRoot !== options.root)) {
    // Not committed: nothing in the workspace changed but invisible temps (and empty new folders).
    const plan = decoded.plan;
    if (plan && (options.root === undefined || plan.workspaceRoot === options.root)) {
      for (const step of plan.steps) await removeOwnTemp(fs, plan, step).catch(() => undefined);
      for (const dir of [...plan.createdDirs].reverse()) {
        if (await placeable(plan.workspaceRoot, dir)) await fs.rmdirIfEmpty(toAbsolute(plan.workspaceRoot, dir)).catch(() => false);
      }
    }
    await dropLog();
    return { outcome: 'discarded', plan, applied: [], kept: [] };
  }
  const { plan, body } = decoded;
  const applied: string[] = [];
  const kept: string[] = [];
  const touched = new Set<string>();
  for (const step of plan.steps) {
    const outcome = await rollForwardStep(fs, plan, step, body, touched);
    (outcome === 'applied' ? applied : kept).push(step.path);
  }
  for (const dir of touched) await fs.fsyncDirectory(dir).catch(() => undefined);
  await options.finish?.(plan, body, { applied, kept });
  await dropLog();
  return { outcome: 'rolled-forward', plan, applied, kept };
}
