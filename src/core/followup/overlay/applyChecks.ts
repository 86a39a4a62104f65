// Accept's check of every touched file against the real one (each folder looked at once per phase):
// unchanged since the speculation looked, or a conflict said in words; nothing is written here.
import { resolveInsideWorkspace, toAbsolute } from '../../fs/paths';
import { replaceRefusal } from '../../fs/atomicWrite';
import { processIds, type ApplyFsStat } from './applyFs';
import type { FileExpectation } from './applyJournal';
import { FolderChecks, folderOf, type FolderState } from './applyFolders';
import { sha256, type OverlayEntry } from './entries';
import { CHANGED_SINCE_SEEN, sameIdentity } from './observations';
import { forEachLimited } from './pool';
import { CONCURRENCY, StepFailure, type ConflictReason, type Conflict, type ApplyInput } from './applyTypes';

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

export function conflict(file: string, reason: ConflictReason, deleting: boolean): Conflict {
  // Overwrite only settles whose version wins; it never lifts a chmod, an owner or a symlink.
  const canOverwrite = reason === 'modified' || reason === 'deleted' || reason === 'created';
  return { path: file, reason, message: conflictMessage(file, reason, deleting), canOverwrite };
}

/** What checking needs: where the workspace is and how to read it. */
export type CheckInput = Pick<ApplyInput, 'root' | 'fs'>;

export type Check =
  | { ok: false; conflict: Conflict }
  | { ok: true; done: boolean; expect: FileExpectation; seen: ApplyFsStat | undefined; missingDirs: string[] };

/** Re-places a path with the symlink-aware check; a reason when it no longer lands on itself. */
export async function placeAgain(root: string, file: string): Promise<ConflictReason | undefined> {
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
export async function check(input: CheckInput, folders: FolderChecks, file: string, entry: OverlayEntry, force: boolean): Promise<Check> {
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
export async function unchangedSinceCheck(input: CheckInput, file: string, seen: ApplyFsStat | undefined, expect: FileExpectation): Promise<boolean> {
  const now = await input.fs.lstat(toAbsolute(input.root, file));
  if (!expect.exists) return now === undefined;
  if (!now || now.type !== 'file' || now.size !== expect.size) return false;
  // A chmod or chown since the check counts as a change too: the file is not silently rewritten.
  if (seen && (now.mode !== seen.mode || now.uid !== seen.uid || now.gid !== seen.gid)) return false;
  if (seen && now.mtimeMs === seen.mtimeMs) return true;
  return (await hashOf(input, file)) === expect.sha256;
}

/** Checks every entry a few at a time, each folder looked at once; results in the order of `entries`. */
export async function checkAll(input: CheckInput, folders: FolderChecks, entries: readonly (readonly [string, OverlayEntry])[], force: (file: string) => boolean): Promise<Check[]> {
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

/** Why writing into a file's folder is unsafe now (a symlink on the way), or undefined; once per folder per phase. */
export async function leadsElsewhere(input: CheckInput, folders: FolderChecks, file: string): Promise<ConflictReason | undefined> {
  const folder = await folders.state(folderOf(file));
  return folder.kind === 'elsewhere' ? elsewhereReason(input.root, file) : undefined;
}

export function sortConflicts(conflicts: Conflict[]): Conflict[] {
  return conflicts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
