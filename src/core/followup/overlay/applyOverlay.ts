// Accepting an overlay: check every touched file against the real one (each folder looked at once
// per phase), then replace the rest atomically (temp + fsync + rename) under a crash-proof journal.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { resolveInsideWorkspace, toAbsolute } from '../../fs/paths';
import { describeNoSpace, isNoSpace } from '../../fs/diskSpace';
import { replaceRefusal } from '../../fs/atomicWrite';
import { errorCode, processIds, type ApplyFs, type ApplyFsStat } from './applyFs';
import { encodeRedoLog, REDO_LOG_MAX_FILE_BYTES, redoLogName, type RedoPlan, type RedoStep } from '../../fs/redoLog';
import { trackFlush } from '../../fs/pendingFlush';
import { fsyncFolderIfThere } from '../../fs/redoRecovery';
import { removeJournal, tempPathFor, writeJournal, type ApplyJournal, type FileExpectation, type JournalStep } from './applyJournal';
import { FolderChecks, folderOf, type FolderState } from './applyFolders';
import { readBlob } from './blobs';
import { isAtOrBelow, sha256, type OverlayEntry } from './entries';
import { CHANGED_SINCE_SEEN, sameIdentity } from './observations';
import { forEachLimited } from './pool';

export type ConflictReason =
  /** The real file changed after the speculation read (or saw) it. */
  | 'modified'
  /** The real file was deleted after the speculation read (or saw) it. */
  | 'deleted'
  /** A file appeared in the workspace where the speculation saw none and creates one. */
  | 'created'
  /** The path now leads outside the workspace (e.g. a folder was swapped for a symlink). */
  | 'outside-workspace'
  /** The path now resolves elsewhere inside the workspace through a symlink. */
  | 'path-changed'
  /** Something other than a file (a folder) is at the path now. */
  | 'not-a-file'
  /** A file sits where one of the path's folders should be. */
  | 'blocked'
  /** The real file (or the folder it goes into) was made read-only; it is never silently rewritten. */
  | 'read-only'
  /** The real file belongs to another user or group, which a replacement could not keep. */
  | 'foreign-owner';

export interface Conflict {
  /** Workspace-relative POSIX path. */
  path: string;
  reason: ConflictReason;
  /** Says what happened and what the user can do; never mentions the overlay's location. */
  message: string;
  /** Whether forcing this file (Overwrite) is possible; false for unsafe paths. */
  canOverwrite: boolean;
}

export interface ApplyResult {
  /** Paths whose real file now holds the speculation's version (or is deleted as it asked). */
  applied: string[];
  /** Paths left untouched; the caller decides (overwrite with force, or keep the user's file). */
  conflicts: Conflict[];
}

/** Observes progress; a throw from it stops the accept on the spot, like a crash (tests only). */
export type ApplyStepHook = (event: { phase: 'staged' | 'logged' | 'committed'; path: string; index: number }) => void;

/** One file the accept is about to replace or delete, as its journal knows it. */
export interface ReplaceStep {
  path: string;
  action: 'write' | 'delete';
  /** What the real file held at the check (the journal's expectation). */
  expect: FileExpectation;
  /** What it will hold: the speculation's content, or absent for a deletion. */
  after: { exists: false } | { exists: true; sha256: string; size: number; mode: number | undefined };
}

/**
 * Runs before the first file is replaced (a checkpoint saves what is replaced), beside the staging
 * of the temps; the commit waits for it. A throw stops the accept with nothing changed; `refused`
 * paths (their state could not be saved) are left as they are, as conflicts.
 */
export type BeforeReplaceHook = (plan: {
  steps: ReplaceStep[];
  createdDirs: readonly string[];
  removedDirs: readonly string[];
  /** The accept commits with a redo log: save without fsync and hand back what the log must hold. */
  unsynced?: boolean;
}) => Promise<{ refused?: readonly string[]; deferred?: DeferredSave } | void>;

/** What a save made without fsync puts into the redo log, and how it is made durable after Tab. */
export interface DeferredSave {
  meta: unknown;
  chunks: Uint8Array[];
  sync(): Promise<void>;
}



export interface ApplyInput {
  root: string;
  overlayId: string;
  overlayDir: string;
  entries: ReadonlyMap<string, OverlayEntry>;
  /** Folders the overlay deleted; emptied ones are removed after the files. */
  deletedDirs: readonly string[];
  blobPath(blob: string): string;
  overwrite: ReadonlySet<string>;
  fs: ApplyFs;
  onStep?: ApplyStepHook;
  beforeReplace?: BeforeReplaceHook;
  /**
   * The state folder the accept's redo log goes in: then one fsync of the log is the commit point,
   * temps are renamed without fsync and flushed after the result is on screen. Without it the
   * journal in the overlay folder and a fsync per temp are used (nothing durable to keep a log in).
   */
  redoDir?: string;
  /** The process named in the redo log (recovery leaves a live one's log alone); this one by default. */
  pid?: number;
}

/** An accept that could not finish; names the files and says what did get applied. */
export class OverlayApplyError extends Error {
  constructor(
    message: string,
    /** The first file that failed. */
    readonly path: string,
    readonly applied: string[],
    readonly failed: { path: string; code: string }[],
    readonly conflicts: Conflict[],
    /**
     * True when the workspace itself refused (disk full, read-only disk, permission): running the
     * request live would meet the same wall, so it must not start without the user's consent.
     */
    readonly liveWouldFail = false,
  ) {
    super(message);
    this.name = 'OverlayApplyError';
  }
}

function conflictMessage(file: string, reason: ConflictReason, deleting: boolean): string {
  switch (reason) {
    case 'modified':
      return deleting
        ? `"${file}" was changed in the workspace after the speculation read it and decided to delete it; your file was kept. Choose Overwrite to delete it anyway, or Keep mine.`
        : `"${file}" was changed in the workspace after the speculation read it; your version was kept. Compare the two, then choose Overwrite or Keep mine.`;
    case 'deleted':
      return `"${file}" was deleted in the workspace after the speculation read it; it was not re-created. Choose Overwrite to restore the speculation's version, or Keep mine.`;
    case 'created':
      return `"${file}" was created in the workspace after the speculation found no file there; your file was kept. Compare the two, then choose Overwrite or Keep mine.`;
    case 'outside-workspace':
      return `"${file}" now leads outside the workspace (a folder on its path was replaced by a symlink); it was not written. Restore the folder and accept again, or discard this file.`;
    case 'path-changed':
      return `"${file}" now leads to a different place through a symlink; it was not written. Restore the folder and accept again, or discard this file.`;
    case 'not-a-file':
      return `"${file}" is now a folder in the workspace; it was not replaced. Move the folder away and accept again, or discard this file.`;
    case 'blocked':
      return `A file in the workspace is in the way of "${file}" (one of its folders is a file now); it was not written. Move that file away and accept again, or discard this file.`;
    case 'read-only':
      return `"${file}" (or the folder it goes into) is read-only, so it was not ${deleting ? 'deleted' : 'written'}. Make it writable (chmod u+w) and accept again, or Keep mine.`;
    case 'foreign-owner':
      return `"${file}" belongs to another user or group; replacing it would change its owner, so it was not ${deleting ? 'deleted' : 'written'}. Keep mine, or change it yourself.`;
  }
}

function conflict(file: string, reason: ConflictReason, deleting: boolean): Conflict {
  // Overwrite only settles whose version wins; it never lifts a chmod, an owner or a symlink.
  const canOverwrite = reason === 'modified' || reason === 'deleted' || reason === 'created';
  return { path: file, reason, message: conflictMessage(file, reason, deleting), canOverwrite };
}

/** What checking needs: where the workspace is and how to read it. */
export type CheckInput = Pick<ApplyInput, 'root' | 'fs'>;

type Check =
  | { ok: false; conflict: Conflict }
  | { ok: true; done: boolean; expect: FileExpectation; seen: ApplyFsStat | undefined; missingDirs: string[] };

/** Re-places a path with the symlink-aware check; a reason when it no longer lands on itself. */
async function placeAgain(root: string, file: string): Promise<ConflictReason | undefined> {
  try {
    return (await resolveInsideWorkspace(root, file)) === file ? undefined : 'path-changed';
  } catch {
    return 'outside-workspace';
  }
}

/** Why a path under a folder reached through a symlink is unsafe (never undefined: it does not land on itself). */
async function elsewhereReason(root: string, file: string): Promise<ConflictReason> {
  return (await placeAgain(root, file)) ?? 'path-changed';
}

async function hashOf(input: CheckInput, file: string): Promise<string> {
  return sha256(await input.fs.readFile(toAbsolute(input.root, file)));
}

/**
 * The hash of the real file's content now. A file that still has the trusted identity its base
 * was hashed under holds those bytes (any change since would have moved its times or inode), so
 * it is not read again; any other is read and hashed.
 */
async function realHashOf(input: CheckInput, file: string, real: ApplyFsStat, base: OverlayEntry['base']): Promise<string> {
  if (base.exists && base.identity && sameIdentity(base.identity, real)) {
    const known = await base.sha256;
    if (known !== CHANGED_SINCE_SEEN) return known;
  }
  return hashOf(input, file);
}

/** The mode of the folder a file (or its temp) would go into, as the permission check reads it. */
function folderModeFor(folder: FolderState, dir: string, deleting: boolean): number | undefined {
  switch (folder.kind) {
    case 'folder':
      return folder.mode;
    case 'missing':
      return deleting ? undefined : folder.parentMode;
    case 'blocked':
      return folder.at === dir ? folder.mode : undefined;
    case 'elsewhere':
      return undefined;
  }
}

/**
 * A file the user made read-only, one that belongs to another user (or whose group a replacement
 * could not keep), or a folder made read-only where the file (or its temp) would go: never
 * rewritten, whatever the privileges of this process (root honours chmod too), not even with Overwrite.
 */
function permissionRefusal(file: string, real: ApplyFsStat | undefined, folderMode: number | undefined): 'read-only' | 'foreign-owner' | undefined {
  if (real) {
    const refusal = replaceRefusal(file, real);
    if (refusal?.reason === 'read-only') return 'read-only';
    // Accept never takes over another user's file, not even as root (a live write as root keeps the owner).
    if (refusal || (processIds.uid !== undefined && real.uid !== processIds.uid)) return 'foreign-owner';
  }
  return folderMode !== undefined && (folderMode & 0o200) === 0 ? 'read-only' : undefined;
}

/**
 * Compares the real file now with what the overlay recorded; `force` skips the comparison only.
 * Its folder comes from `folders` (looked at once for all its files), the file itself costs one
 * lstat, and its content is read only when its identity does not vouch for it.
 */
async function check(input: CheckInput, folders: FolderChecks, file: string, entry: OverlayEntry, force: boolean): Promise<Check> {
  const deleting = entry.kind === 'deleted';
  const dir = folderOf(file);
  const folder = await folders.state(dir);
  if (folder.kind === 'elsewhere') return { ok: false, conflict: conflict(file, await elsewhereReason(input.root, file), deleting) };
  const real = folder.kind === 'folder' ? await input.fs.lstat(toAbsolute(input.root, file)) : undefined;
  if (real?.type === 'symlink') return { ok: false, conflict: conflict(file, (await placeAgain(input.root, file)) ?? 'not-a-file', deleting) };
  if (real && real.type !== 'file') return { ok: false, conflict: conflict(file, 'not-a-file', deleting) };
  if (!deleting && folder.kind === 'blocked') return { ok: false, conflict: conflict(file, 'blocked', deleting) };
  const missingDirs = !deleting && folder.kind === 'missing' ? folder.missing : [];
  const refused = permissionRefusal(file, real, folderModeFor(folder, dir, deleting));
  if (refused) return { ok: false, conflict: conflict(file, refused, deleting) };

  const realHash = real ? await realHashOf(input, file, real, entry.base) : undefined;
  const expect: FileExpectation = real && realHash ? { exists: true, sha256: realHash, size: real.size } : { exists: false };
  const ok = (done: boolean): Check => ({ ok: true, done, expect, seen: real, missingDirs });
  // Already as the speculation wants it (e.g. a re-run after a partial accept): nothing to write.
  // The mode counts too: `chmod +x` alone changes no byte.
  const sameMode = entry.kind === 'written' && (entry.mode === undefined || real?.mode === entry.mode);
  if (entry.kind === 'written' && real?.size === entry.size && realHash === (await entry.sha256) && sameMode) return ok(true);
  if (entry.kind === 'deleted' && !real) return ok(true);
  if (force) return ok(false);

  const base = entry.base;
  if (!base.exists) return real ? { ok: false, conflict: conflict(file, 'created', deleting) } : ok(false);
  if (!real) return { ok: false, conflict: conflict(file, 'deleted', deleting) };
  if (real.size !== base.size || realHash !== (await base.sha256)) return { ok: false, conflict: conflict(file, 'modified', deleting) };
  return ok(false);
}

/** True when the real file still holds what `check` saw (cheap unless size or mtime moved). */
async function unchangedSinceCheck(input: CheckInput, file: string, seen: ApplyFsStat | undefined, expect: FileExpectation): Promise<boolean> {
  const now = await input.fs.lstat(toAbsolute(input.root, file));
  if (!expect.exists) return now === undefined;
  if (!now || now.type !== 'file' || now.size !== expect.size) return false;
  // A chmod or chown since the check counts as a change too: the file is not silently rewritten.
  if (seen && (now.mode !== seen.mode || now.uid !== seen.uid || now.gid !== seen.gid)) return false;
  if (seen && now.mtimeMs === seen.mtimeMs) return true;
  return (await hashOf(input, file)) === expect.sha256;
}

/** Checks every entry a few at a time, each folder looked at once; results in the order of `entries`. */
async function checkAll(input: CheckInput, folders: FolderChecks, entries: readonly (readonly [string, OverlayEntry])[], force: (file: string) => boolean): Promise<Check[]> {
  const checks: Check[] = new Array(entries.length);
  await forEachLimited(entries, CONCURRENCY, async ([file, entry], index) => {
    try {
      checks[index] = await check(input, folders, file, entry, force(file));
    } catch (error) {
      throw new StepFailure(file, error);
    }
  });
  return checks;
}

/** The conflicts an accept would report right now, without writing anything. */
export async function findConflicts(input: CheckInput, entries: ReadonlyMap<string, OverlayEntry>): Promise<Conflict[]> {
  let checks: Check[];
  try {
    checks = await checkAll(input, new FolderChecks(input.root, input.fs), [...entries], () => false);
  } catch (error) {
    throw error instanceof StepFailure ? error.cause : error;
  }
  return sortConflicts(checks.flatMap((result) => (result.ok ? [] : [result.conflict])));
}

/**
 * How many files are checked or staged at once: enough to keep libuv's thread pool (4 threads)
 * busy. Measured from 4 to 256 in bench engine-accept: no gain above this, as the file system's
 * journal commits (one per new temp's fsync) are the limit, not the number of calls in flight.
 */
const CONCURRENCY = 16;

/** Whose disk failed: the workspace's, the overlay's (temp folder), or the state folder holding the redo log. */
type StorageSide = 'workspace' | 'overlay' | 'state';

/** A per-file failure carried out of the worker pool with the file it belongs to. */
class StepFailure extends Error {
  constructor(readonly path: string, override readonly cause: unknown, readonly side: StorageSide = 'workspace') {
    super(path);
  }
}

interface PlannedStep extends JournalStep {
  entry: OverlayEntry;
  seen: ApplyFsStat | undefined;
}

function describeCode(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.name : 'unknown error');
}

async function rollBackStaging(input: ApplyInput, staged: PlannedStep[], createdDirs: string[], journal = true): Promise<void> {
  await Promise.all(staged.map((step) => (step.temp ? input.fs.unlink(toAbsolute(input.root, step.temp)).catch(() => undefined) : undefined)));
  for (const dir of [...createdDirs].reverse()) await input.fs.rmdirIfEmpty(toAbsolute(input.root, dir)).catch(() => false);
  if (journal) await removeJournal(input.fs, input.overlayDir).catch(() => undefined);
}

/** Removes the emptied folders below (and including) each deleted folder; never follows symlinks. */
async function removeEmptiedDirs(input: ApplyInput, kept: readonly string[]): Promise<void> {
  const removeTree = async (dir: string): Promise<void> => {
    const entries = await input.fs.readdir(toAbsolute(input.root, dir)).catch(() => []);
    for (const entry of entries) if (entry.type === 'directory') await removeTree(`${dir}/${entry.name}`);
    await input.fs.rmdirIfEmpty(toAbsolute(input.root, dir));
  };
  const deepestFirst = [...input.deletedDirs].sort((a, b) => b.split('/').length - a.split('/').length);
  for (const dir of deepestFirst) {
    if (dir === '' || kept.some((file) => isAtOrBelow(dir, file))) continue;
    if ((await placeAgain(input.root, dir)) !== undefined) continue;
    if ((await input.fs.lstat(toAbsolute(input.root, dir)))?.type !== 'directory') continue;
    await removeTree(dir).catch(() => undefined);
  }
}

/**
 * Applies the overlay's entries to the real workspace.
 *
 * Failure policy: a failure while staging (before the commit point) removes every temp and leaves
 * the workspace exactly as it was, then throws OverlayApplyError naming the file. A failure while
 * committing (a rename or unlink refused) does not stop the other files, which are fully staged and
 * independent: they are committed, and OverlayApplyError then names the failed files and lists the
 * applied ones; each failed file keeps the user's version. A crash anywhere leaves the journal, and
 * recovery rolls staging back or committing forward.
 */
export async function applyEntries(input: ApplyInput): Promise<ApplyResult> {
  const conflicts: Conflict[] = [];
  const applied: string[] = [];
  const plan: PlannedStep[] = [];
  const createdDirs = new Set<string>();
  const sorted = [...input.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const folders = new FolderChecks(input.root, input.fs);
  let checks: Check[];
  try {
    checks = await checkAll(input, folders, sorted, (file) => input.overwrite.has(file));
  } catch (error) {
    if (!(error instanceof StepFailure)) throw error;
    throw new OverlayApplyError(
      `Accepting the speculation failed while checking "${error.path}" (${describeCode(error.cause)}); no file in the workspace was changed. Check that the file can be read, then accept again.`,
      error.path,
      [],
      [{ path: error.path, code: describeCode(error.cause) }],
      [],
    );
  }
  // One draw of randomness for every temp name of this accept.
  const tokens = randomBytes(8 * sorted.length).toString('hex');
  for (const [index, result] of checks.entries()) {
    const [file, entry] = sorted[index];
    if (!result.ok) {
      conflicts.push(result.conflict);
    } else if (result.done) {
      applied.push(file);
    } else {
      result.missingDirs.forEach((dir) => createdDirs.add(dir));
      const action = entry.kind === 'written' ? 'write' : 'delete';
      const temp = action === 'write' ? tempPathFor(file, tokens.slice(16 * index, 16 * index + 16)) : undefined;
      plan.push({ path: file, action, temp, expect: result.expect, entry, seen: result.seen });
    }
  }
  if (plan.length === 0) {
    await removeEmptiedDirs(input, conflicts.map((c) => c.path));
    return { applied, conflicts: sortConflicts(conflicts) };
  }

  const dirs = [...createdDirs].sort((a, b) => a.split('/').length - b.split('/').length);
  const journal: ApplyJournal = {
    version: 1,
    workspaceRoot: input.root,
    overlayId: input.overlayId,
    phase: 'staging',
    steps: plan.map(({ path: p, action, temp, expect }) => (temp ? { path: p, action, temp, expect } : { path: p, action, expect })),
    createdDirs: dirs,
  };

  // The checkpoint saves what is about to be replaced while the temps are staged; the commit waits for it.
  const beforeReplace = input.beforeReplace;
  const saving: Promise<Saved> = beforeReplace
    ? Promise.all(plan.map((step) => (step.entry.kind === 'written' ? step.entry.sha256 : undefined)))
        .then((hashes) =>
          beforeReplace({
            steps: plan.map((step, index) => ({
              path: step.path,
              action: step.action,
              expect: step.expect,
              after: step.entry.kind === 'written' ? { exists: true, sha256: hashes[index] ?? '', size: step.entry.size, mode: step.entry.mode } : { exists: false },
            })),
            createdDirs: dirs,
            removedDirs: input.deletedDirs,
            ...(input.redoDir ? { unsynced: true } : {}),
          }),
        )
        .then(
          (answer) => ({ ok: true as const, refused: new Set(answer?.refused ?? []), deferred: answer?.deferred }),
          (error: unknown) => ({ ok: false as const, error }),
        )
    : Promise.resolve({ ok: true as const, refused: new Set<string>(), deferred: undefined });
  const context: StagingContext = { plan, dirs, applied, conflicts, folders, saving, journal };
  return input.redoDir ? applyWithRedoLog(input, input.redoDir, context) : applyWithJournal(input, context);
}

type Saved = { ok: true; refused: Set<string>; deferred: DeferredSave | undefined } | { ok: false; error: unknown };

interface StagingContext {
  plan: PlannedStep[];
  /** Folders to create, parents first. */
  dirs: string[];
  applied: string[];
  conflicts: Conflict[];
  folders: FolderChecks;
  saving: Promise<Saved>;
  journal: ApplyJournal;
}

function savingFailed(saved: Extract<Saved, { ok: false }>, plan: PlannedStep[], applied: string[], conflicts: Conflict[]): OverlayApplyError {
  const code = describeCode(saved.error);
  return new OverlayApplyError(
    `Accepting the speculation failed: the checkpoint that undoes it could not be saved (${saved.error instanceof Error ? saved.error.message : code}); no file in the workspace was changed. Free disk space for the extension's storage, then accept again.`,
    plan[0].path,
    applied,
    [{ path: plan[0].path, code }],
    conflicts,
  );
}

/** The steps whose before-state the checkpoint could not save (it changed at that moment) become conflicts. */
function dropRefused(plan: PlannedStep[], saved: Extract<Saved, { ok: true }>, refused: Set<PlannedStep>, conflicts: Conflict[]): PlannedStep[] {
  for (const step of plan) {
    if (!saved.refused.has(step.path) || refused.has(step)) continue;
    refused.add(step);
    conflicts.push(conflict(step.path, step.expect.exists ? 'modified' : 'created', step.action === 'delete'));
  }
  return plan.filter((step) => !refused.has(step));
}

async function createDirs(input: ApplyInput, dirs: readonly string[]): Promise<{ failed: string; error: unknown } | undefined> {
  for (const dir of dirs) {
    try {
      await input.fs.mkdir(toAbsolute(input.root, dir));
    } catch (error) {
      return { failed: dir, error };
    }
  }
  return undefined;
}

/** The accept of issue 23 and before: a journal in the overlay folder, each temp fsync'd before the commit. */
async function applyWithJournal(input: ApplyInput, context: StagingContext): Promise<ApplyResult> {
  const { plan, dirs, applied, conflicts, folders, saving, journal } = context;
  // Staging: nothing the user sees changes yet; every temp is complete and on disk before the commit point.
  const staged: PlannedStep[] = [];
  const needed = plan.reduce((sum, step) => sum + (step.entry.kind === 'written' ? step.entry.size : 0), 0);
  try {
    await writeJournal(input.fs, input.overlayDir, journal);
  } catch (error) {
    await rollBackStaging(input, staged, dirs);
    throw await stagingError(input, plan[0].path, error, 'overlay', needed, applied, conflicts);
  }
  const mkdirFailure = await createDirs(input, dirs);
  if (mkdirFailure) {
    await saving;
    await rollBackStaging(input, staged, dirs);
    throw await stagingError(input, mkdirFailure.failed, mkdirFailure.error, 'workspace', needed, applied, conflicts);
  }
  const refused = new Set<PlannedStep>();
  // Each folder is looked at again right before its temps go in: one swapped for a symlink since the check must not lead out.
  const staging = folders.nextPhase();
  try {
    await forEachLimited(plan, CONCURRENCY, async (step, index) => {
      const unsafe = await leadsElsewhere(input, staging, step.path);
      if (unsafe) {
        refused.add(step);
        conflicts.push(conflict(step.path, unsafe, step.action === 'delete'));
        return;
      }
      if (step.entry.kind !== 'written' || !step.temp) return;
      const data = await overlayBytes(input, step);
      try {
        const owner = step.seen ? { uid: step.seen.uid, gid: step.seen.gid } : undefined;
        await input.fs.writeDurable(toAbsolute(input.root, step.temp), data, { mode: step.entry.mode, owner });
        staged.push(step);
      } catch (error) {
        throw new StepFailure(step.path, error, 'workspace');
      }
      input.onStep?.({ phase: 'staged', path: step.path, index });
    });
  } catch (error) {
    // Anything but a file's I/O failure (a crash hook in tests) stops here like a dying process.
    if (!(error instanceof StepFailure)) throw error;
    await saving;
    await rollBackStaging(input, staged, dirs);
    throw await stagingError(input, error.path, error.cause, error.side, needed, applied, conflicts);
  }
  const saved = await saving;
  if (!saved.ok) {
    await rollBackStaging(input, staged, dirs);
    throw savingFailed(saved, plan, applied, conflicts);
  }
  const commit = dropRefused(plan, saved, refused, conflicts);
  try {
    const committing = new Set(commit);
    await writeJournal(input.fs, input.overlayDir, { ...journal, phase: 'committing', steps: journal.steps.filter((_, i) => committing.has(plan[i])) });
  } catch (error) {
    await rollBackStaging(input, staged, dirs);
    throw await stagingError(input, plan[0].path, error, 'overlay', needed, applied, conflicts);
  }
  const { failed, touchedDirs } = await commitSteps(input, commit, staging.nextPhase(), applied, conflicts);
  // One fsync per touched folder, all at once, before the journal goes: the renames are durable first.
  await Promise.all([...touchedDirs].map((dir) => input.fs.fsyncDirectory(dir).catch(() => undefined)));
  // A journal left behind is harmless: its temps are gone and every step re-checks its expectation.
  await removeJournal(input.fs, input.overlayDir, { committed: true }).catch(() => undefined);
  return finishApply(input, applied, conflicts, failed);
}

/** The overlay's copy of a written file; its failure is the overlay's, nothing the live path would meet. */
async function overlayBytes(input: ApplyInput, step: PlannedStep): Promise<Uint8Array> {
  if (step.entry.kind !== 'written') throw new Error('only written entries have bytes');
  try {
    return await readBlob(input.blobPath(step.entry.blob), step.entry.size);
  } catch (error) {
    throw new StepFailure(step.path, error, 'overlay');
  }
}

/**
 * Issue 28: one redo log in the state folder holds the plan, the new bytes of every small file and
 * the checkpoint's before-state; its fsync (and its folder's) is the commit point. Before it nothing
 * the user sees changed; after it the temps are written and renamed without fsync, the user sees the
 * result, and the flush (each renamed file and touched folder, then the log's removal) runs after,
 * off the wait. A crash or power cut after the commit point is rolled forward from the log.
 */
async function applyWithRedoLog(input: ApplyInput, redoDir: string, context: StagingContext): Promise<ApplyResult> {
  const { plan, dirs, applied, conflicts, folders, saving } = context;
  const needed = plan.reduce((sum, step) => sum + (step.entry.kind === 'written' ? step.entry.size : 0), 0);
  const logPath = path.join(redoDir, redoLogName(`accept-${input.overlayId}-${randomBytes(4).toString('hex')}`));
  const staged: PlannedStep[] = [];
  const bytes = new Map<PlannedStep, Uint8Array>();
  const largeDirs = new Set<string>();
  const refused = new Set<PlannedStep>();
  const undoStaging = async () => {
    await rollBackStaging(input, staged, dirs, false);
  };
  const mkdirFailure = await createDirs(input, dirs);
  if (mkdirFailure) {
    await saving;
    await undoStaging();
    throw await stagingError(input, mkdirFailure.failed, mkdirFailure.error, 'workspace', needed, applied, conflicts);
  }
  const staging = folders.nextPhase();
  try {
    // Small files' bytes are read for the log; a large one is staged durably now, as before.
    await forEachLimited(plan, CONCURRENCY, async (step, index) => {
      const unsafe = await leadsElsewhere(input, staging, step.path);
      if (unsafe) {
        refused.add(step);
        conflicts.push(conflict(step.path, unsafe, step.action === 'delete'));
        return;
      }
      if (step.entry.kind !== 'written' || !step.temp) return;
      if (step.entry.size <= REDO_LOG_MAX_FILE_BYTES) {
        bytes.set(step, await overlayBytes(input, step));
        return;
      }
      try {
        if (!(await stageFromBlob(input, step, true))) {
          const data = await overlayBytes(input, step);
          const owner = step.seen ? { uid: step.seen.uid, gid: step.seen.gid } : undefined;
          await input.fs.createFile(toAbsolute(input.root, step.temp), data, { mode: step.entry.mode, owner, sync: true });
        }
        staged.push(step);
        largeDirs.add(path.dirname(toAbsolute(input.root, step.temp)));
      } catch (error) {
        throw new StepFailure(step.path, error, 'workspace');
      }
      input.onStep?.({ phase: 'staged', path: step.path, index });
    });
    // A large temp's name must survive a power cut as well as its bytes: the log points at it.
    await Promise.all([...largeDirs].map(async (dir) => {
      try {
        await input.fs.fsyncDirectory(dir);
      } catch (error) {
        throw new StepFailure(plan[0].path, error, 'workspace');
      }
    }));
  } catch (error) {
    if (!(error instanceof StepFailure)) throw error;
    await saving;
    await undoStaging();
    throw await stagingError(input, error.path, error.cause, error.side, needed, applied, conflicts);
  }
  const saved = await saving;
  if (!saved.ok) {
    await undoStaging();
    throw savingFailed(saved, plan, applied, conflicts);
  }
  const commit = dropRefused(plan, saved, refused, conflicts);
  const hashes = await Promise.all(commit.map((step) => (step.entry.kind === 'written' ? step.entry.sha256 : undefined)));
  const body: Uint8Array[] = [];
  let offset = 0;
  const steps: RedoStep[] = commit.map((step, index) => {
    const base: RedoStep = { path: step.path, action: step.action, expect: step.expect };
    if (step.entry.kind !== 'written' || !step.temp) return base;
    const data = bytes.get(step);
    const written: RedoStep = { ...base, temp: step.temp, after: { sha256: hashes[index] ?? '', size: step.entry.size, ...(step.entry.mode !== undefined ? { mode: step.entry.mode } : {}) } };
    if (!data) return written;
    body.push(data);
    offset += data.byteLength;
    return { ...written, data: { offset: offset - data.byteLength, length: data.byteLength } };
  });
  const deferred = saved.deferred;
  const redoPlan: RedoPlan = {
    version: 1,
    kind: 'accept',
    pid: input.pid ?? process.pid,
    workspaceRoot: input.root,
    steps,
    createdDirs: dirs,
    ...(deferred ? { meta: { checkpoint: deferred.meta, at: offset } } : {}),
  };
  if (deferred) body.push(...deferred.chunks);
  // The log is written, then made durable while the small temps are written beside their targets
  // (invisible until renamed): the commit point is the log's fsync and its folder's.
  const smallSteps = commit.filter((step) => bytes.has(step));
  let logWritten = false;
  try {
    await input.fs.createFile(logPath, encodeRedoLog(redoPlan, body), { mode: 0o600, sync: false });
    logWritten = true;
  } catch (error) {
    await undoStaging();
    throw await stagingError(input, plan[0].path, error, 'state', needed, applied, conflicts);
  }
  const durable = (async () => {
    // In this order: a log whose name survives a power cut is whole (recovery can read what it names).
    await input.fs.fsyncFile(logPath);
    await input.fs.fsyncDirectory(redoDir);
  })();
  durable.catch(() => undefined);
  try {
    await forEachLimited(smallSteps, CONCURRENCY, async (step, index) => {
      const owner = step.seen ? { uid: step.seen.uid, gid: step.seen.gid } : undefined;
      const mode = step.entry.kind === 'written' ? step.entry.mode : undefined;
      const temp = toAbsolute(input.root, step.temp!);
      try {
        if (!(await stageFromBlob(input, step, false))) await input.fs.createFile(temp, bytes.get(step)!, { mode, owner, sync: false });
      } catch (error) {
        throw new StepFailure(step.path, error, 'workspace');
      }
      staged.push(step);
      input.onStep?.({ phase: 'staged', path: step.path, index });
    });
    try {
      await durable;
    } catch (error) {
      throw new StepFailure(plan[0].path, error, 'state');
    }
  } catch (error) {
    if (!(error instanceof StepFailure)) throw error;
    // Not committed: the log goes first (so no recovery completes what is being undone), then the temps.
    if (logWritten) await dropLog(input, logPath, redoDir).catch(() => undefined);
    await undoStaging();
    throw await stagingError(input, error.path, error.cause, error.side, needed, applied, conflicts);
  }
  input.onStep?.({ phase: 'logged', path: plan[0].path, index: -1 });
  const { failed, touchedDirs, renamed } = await commitSteps(input, commit, staging.nextPhase(), applied, conflicts, true);
  // Off the wait: every renamed file, then each folder whose entries changed, then the checkpoint's
  // own files; only then may the log go. A failure leaves the log for the next start to roll forward.
  for (const dir of dirs) touchedDirs.add(path.dirname(toAbsolute(input.root, dir)));
  const flush = (async () => {
    await forEachLimited(renamed, FLUSH_CONCURRENCY, (file) => input.fs.fsyncFile(file));
    await Promise.all([...touchedDirs].map((dir) => fsyncFolderIfThere(input.fs, dir)));
    await deferred?.sync();
    await dropLog(input, logPath, redoDir);
  })();
  trackFlush(input.root, flush);
  return finishApply(input, applied, conflicts, failed);
}

/** Whether a file made by this process would have the real file's owner and group (or there is none). */
function ownedHere(seen: ApplyFsStat | undefined): boolean {
  return !seen || (seen.uid === processIds.uid && seen.gid === processIds.gid);
}

/**
 * Stages a temp from the overlay's copy (its blob, never written again) without the bytes passing
 * through here: a hard link where the blob is on the same disk — no new file for the disk to
 * allocate, which on ext4 costs more than all the rest of a small file's accept — else a copy in
 * one call. Only where the temp would get nothing else anyway: an existing file's exact mode, this
 * process's owner and group. False when neither can be done (any failure): the caller writes the
 * bytes itself, and meets any real error there.
 */
async function stageFromBlob(input: ApplyInput, step: PlannedStep, sync: boolean): Promise<boolean> {
  const entry = step.entry;
  if (entry.kind !== 'written' || entry.mode === undefined || !step.temp || !ownedHere(step.seen)) return false;
  const blob = input.blobPath(entry.blob);
  const temp = toAbsolute(input.root, step.temp);
  try {
    // A stored copy of another size is damaged: the caller's read reports it (readBlob's EIO).
    if ((await input.fs.lstat(blob))?.size !== entry.size) return false;
    await input.fs.linkNew(blob, temp, { mode: entry.mode, sync });
    return true;
  } catch {
    // Another disk (EXDEV), or no hard links there: a copy, flushed by the caller's own path if need be.
  }
  if (sync) return false;
  try {
    await input.fs.copyNew(blob, temp, entry.mode);
    return true;
  } catch {
    return false;
  }
}

/** How many renamed files the flush fsyncs at once: the disk batches concurrent flushes. */
const FLUSH_CONCURRENCY = 32;

async function dropLog(input: ApplyInput, logPath: string, redoDir: string): Promise<void> {
  await input.fs.unlink(logPath);
  await input.fs.fsyncDirectory(redoDir);
}

/**
 * Committing: each rename replaces one whole file; a late change by the user still wins. One at a
 * time and in order, so a crash leaves a prefix committed; each folder is looked at again once.
 */
async function commitSteps(input: ApplyInput, commit: PlannedStep[], committingFolders: FolderChecks, applied: string[], conflicts: Conflict[], parallel = false) {
  const failed: { path: string; code: string }[] = [];
  const touchedDirs = new Set<string>();
  const renamed: string[] = [];
  // The last-moment look at the next file is already under way while the current one is renamed.
  const lookAt = (step: PlannedStep) => {
    const look = (async () => (await leadsElsewhere(input, committingFolders, step.path)) ?? ((await unchangedSinceCheck(input, step.path, step.seen, step.expect)) ? 'unchanged' : 'changed'))();
    look.catch(() => undefined);
    return look;
  };
  const one = async (step: PlannedStep, index: number, look: ReturnType<typeof lookAt>): Promise<void> => {
    const target = toAbsolute(input.root, step.path);
    let committed = false;
    try {
      const state = await look;
      if (state === 'changed') {
        conflicts.push(conflict(step.path, step.expect.exists ? 'modified' : 'created', step.action === 'delete'));
      } else if (state !== 'unchanged') {
        conflicts.push(conflict(step.path, state ?? 'path-changed', step.action === 'delete'));
      } else {
        if (step.temp) {
          await input.fs.rename(toAbsolute(input.root, step.temp), target);
          renamed.push(target);
        } else await input.fs.unlink(target);
        committed = true;
        applied.push(step.path);
        touchedDirs.add(path.dirname(target));
      }
    } catch (error) {
      failed.push({ path: step.path, code: describeCode(error) });
    }
    if (step.temp && !committed) await input.fs.unlink(toAbsolute(input.root, step.temp)).catch(() => undefined);
    input.onStep?.({ phase: 'committed', path: step.path, index });
  };
  if (parallel) {
    // Past a redo log's commit any subset of renames is recoverable: a few at once.
    await forEachLimited(commit, CONCURRENCY, (step, index) => one(step, index, lookAt(step)));
    applied.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { failed, touchedDirs, renamed };
  }
  let next = commit.length > 0 ? lookAt(commit[0]) : undefined;
  for (const [index, step] of commit.entries()) {
    const look = next!;
    next = index + 1 < commit.length ? lookAt(commit[index + 1]) : undefined;
    await one(step, index, look);
  }
  return { failed, touchedDirs, renamed };
}

async function finishApply(input: ApplyInput, applied: string[], conflicts: Conflict[], failed: { path: string; code: string }[]): Promise<ApplyResult> {
  await removeEmptiedDirs(input, [...conflicts.map((c) => c.path), ...failed.map((f) => f.path)]);
  if (failed.length > 0) {
    const first = failed[0];
    const others = failed.length > 1 ? ` and ${failed.length - 1} more file(s)` : '';
    throw new OverlayApplyError(
      `Accepting the speculation failed for "${first.path}" (${first.code})${others}; ${applied.length} other file(s) were applied and the failed ones keep your version. Check that they are writable, then accept again.`,
      first.path,
      applied,
      failed,
      sortConflicts(conflicts),
      failed.some((f) => WORKSPACE_REFUSALS.has(f.code)),
    );
  }
  return { applied, conflicts: sortConflicts(conflicts) };
}

/** Why writing into a file's folder is unsafe now (a symlink on the way), or undefined; once per folder per phase. */
async function leadsElsewhere(input: CheckInput, folders: FolderChecks, file: string): Promise<ConflictReason | undefined> {
  const folder = await folders.state(folderOf(file));
  return folder.kind === 'elsewhere' ? elsewhereReason(input.root, file) : undefined;
}

function sortConflicts(conflicts: Conflict[]): Conflict[] {
  return conflicts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Codes that mean the workspace's disk or permissions refused: the live path would meet them too. */
const WORKSPACE_REFUSALS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM']);

/**
 * The error of a staging failure, in words: which disk is full and how much the accept needed, a
 * read-only disk, a folder without permission, or the overlay's own storage failing.
 */
async function stagingError(input: ApplyInput, file: string, error: unknown, side: StorageSide, neededBytes: number, applied: string[], conflicts: Conflict[]): Promise<OverlayApplyError> {
  const code = describeCode(error);
  const unchanged = 'no file in the workspace was changed';
  let why: string;
  if (side === 'state') {
    why = `the extension's storage could not hold the record of this accept (${code}); ${unchanged}. Free disk space for the extension's storage, then accept again`;
  } else if (side === 'overlay') {
    why = `the speculation's own copy could not be ${code === 'ENOSPC' || code === 'EDQUOT' ? 'saved: the temp folder is full' : `read (${code})`}; ${unchanged}. Run the request again`;
  } else if (isNoSpace(code)) {
    why = `${await describeNoSpace(path.dirname(toAbsolute(input.root, file)), neededBytes)}; ${unchanged}. Free some space, then accept again`;
  } else if (code === 'EROFS') {
    why = `the disk holding the workspace is mounted read-only; ${unchanged}`;
  } else if (code === 'EACCES' || code === 'EPERM') {
    why = `permission denied in its folder (${code}); ${unchanged}. Make the folder writable, then accept again`;
  } else {
    why = `${code}; ${unchanged}. Check that the folder is writable and the disk has space, then accept again`;
  }
  const liveWouldFail = side === 'workspace' && WORKSPACE_REFUSALS.has(code);
  return new OverlayApplyError(`Accepting the speculation failed while preparing "${file}": ${why}.`, file, applied, [{ path: file, code }], conflicts, liveWouldFail);
}
