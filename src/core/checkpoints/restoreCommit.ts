// Past an undo's commit point: each step replaces one whole file unless the user changed it at the
// last moment, the folders are settled and the record says what was done — the same code finishes
// a journal a dead process left, or rolls back one that was still staging.
import * as path from 'node:path';
import { toAbsolute } from '../fs/paths';
import { asideFolderFor, keepAside } from '../fs/setAside';
import { forEachLimited } from '../fs/pool';
import type { CheckpointStat } from './checkpointFs';
import { sameContent, stateOf, type FileState } from './fileState';
import { deepestFirst, missingParents, parentsFirst, placementProblem, PlacementPass } from './placement';
import type { CheckpointRecord, UndoneState } from './record';
import { journalPath, parseJournal, removeJournal, type RestoreJournal, type RestoreStep } from './restoreJournal';
import type { StoreFiles } from './storeFiles';
import { conflictOf, CONCURRENCY, type Evaluated, type JournalRecovery, type RestoreConflict } from './restoreTypes';

/**
 * True when the real file still holds what the check saw (cheap unless size or mtime moved);
 * `now` is its lstat when the caller has just taken it.
 */
export async function unchanged(store: StoreFiles, file: string, seen: CheckpointStat | undefined, expect: FileState, looked?: { now: CheckpointStat | undefined }): Promise<boolean> {
  const absolute = toAbsolute(store.root, file);
  const now = looked ? looked.now : await store.fs.lstat(absolute);
  if (!expect.exists) return now === undefined;
  if (!now || now.type !== 'file' || now.size !== expect.size) return false;
  if (seen && now.mtimeMs === seen.mtimeMs) return true;
  return sameContent(stateOf(await store.fs.readFile(absolute), now.mode), expect);
}

/** Past the commit point: each step replaces one whole file, unless the user changed it at the last moment. */
export async function commit(store: StoreFiles, journal: RestoreJournal, evaluated: Evaluated[] | undefined, options: { deferred?: boolean; record?: CheckpointRecord } = {}) {
  const deferred = options.deferred === true;
  // Each folder is re-placed once for this pass, right before its files are renamed.
  const pass = new PlacementPass(store.root, store.fs);
  const restored = new Set(journal.replaced.map((r) => r.path));
  const lateConflicts: RestoreConflict[] = [];
  const touched = new Set<string>();
  const renamed: string[] = [];
  /** Replaced files kept by a second name until the flush (setAside.ts); redo-log commits only. */
  const setAside: string[] = [];
  const asides = deferred ? asideFolderFor(store.journalsDir, store.root) : undefined;
  const one = async (step: RestoreStep, index: number): Promise<void> => {
    const target = toAbsolute(store.root, step.path);
    const temp = step.temp ? toAbsolute(store.root, step.temp) : undefined;
    const looked = { now: await store.fs.lstat(target) };
    const problem = await pass.problem(step.path, looked.now);
    // A redo log's commit wrote every temp itself just now: no need to look for them.
    const tempThere = temp ? deferred || (await store.fs.lstat(temp))?.type === 'file' : false;
    let conflict: RestoreConflict | undefined;
    let moved = false;
    if (problem) {
      conflict = conflictOf(step.path, problem, journal.direction);
    } else if (await unchanged(store, step.path, evaluated?.[index]?.seen, step.expect, looked)) {
      if (temp && tempThere) {
        const aside = step.expect.exists ? await keepAside(store.fs, asides, target, store.pid) : undefined;
        try {
          await store.fs.rename(temp, target);
        } catch (error) {
          if (aside) await store.fs.unlink(aside).catch(() => undefined);
          throw error;
        }
        renamed.push(target);
        if (aside) setAside.push(aside);
        moved = true;
      } else if (temp) conflict = conflictOf(step.path, 'unavailable', journal.direction);
      else await store.fs.unlink(target);
      if (!conflict) touched.add(path.dirname(target));
    } else if (!(await unchanged(store, step.path, undefined, step.result))) {
      // Neither as checked nor as restored: the user changed it at the last moment, and that wins.
      conflict = conflictOf(step.path, step.expect.exists ? 'modified' : 'created', journal.direction);
    }
    // (As restored already: renamed before a crash, or the user did the same; nothing to do.)
    // A temp not renamed (a conflict, or a step already done) goes; after a rename the name is free (quiet).
    if (temp && !(deferred && moved)) await store.fs.unlink(temp).catch(() => undefined);
    if (conflict) {
      lateConflicts.push(conflict);
      restored.delete(step.path);
    }
    store.options.onRestoreStep?.({ phase: 'committed', path: step.path });
  };
  // Under a journal one at a time and in order (a crash leaves a prefix); under a redo log any
  // subset is recoverable, so a few at once.
  if (deferred) await forEachLimited(journal.steps, CONCURRENCY, one);
  else for (const [index, step] of journal.steps.entries()) await one(step, index);
  if (!deferred) for (const dir of touched) await store.fs.fsyncDirectory(dir).catch(() => undefined);
  const late = new Set(lateConflicts.map((c) => c.path));
  const dirs = await settleDirs(store, journal, late);
  await writeOutcome(store, journal, late, dirs, { sync: !deferred, record: options.record });
  if (!deferred) await removeJournal(store.fs, store.journalsDir, journal.checkpointId);
  for (const dir of [...dirs.created, ...dirs.removed]) touched.add(path.dirname(toAbsolute(store.root, dir)));
  return { restored: [...restored].sort(), lateConflicts, renamed, touched, setAside };
}

/** After the files: folders the change created go (once empty), folders it removed come back. */
export async function settleDirs(store: StoreFiles, journal: RestoreJournal, kept: Set<string>): Promise<{ removed: string[]; created: string[] }> {
  const removed: string[] = [];
  for (const dir of deepestFirst(journal.removeDirs)) {
    if ([...kept].some((file) => file.startsWith(`${dir}/`))) continue;
    if (await placementProblem(store.root, dir)) continue;
    if ((await store.fs.lstat(toAbsolute(store.root, dir)))?.type !== 'directory') continue;
    if (await store.fs.rmdirIfEmpty(toAbsolute(store.root, dir))) removed.push(dir);
  }
  const created = [...journal.createdDirs];
  for (const dir of parentsFirst(journal.recreateDirs)) {
    if (await placementProblem(store.root, dir)) continue;
    const parents = await missingParents(store.fs, store.root, `${dir}/x`);
    if (parents === 'blocked') continue;
    for (const missing of parents) {
      await store.fs.mkdir(toAbsolute(store.root, missing));
      created.push(missing);
    }
  }
  return { removed, created };
}

/** Writes what the restore did into the record (the same code finishes a recovered journal). */
export async function writeOutcome(store: StoreFiles, journal: RestoreJournal, lateKept: Set<string>, dirs: { removed: string[]; created: string[] }, options: { sync?: boolean; record?: CheckpointRecord } = {}): Promise<void> {
  // The live undo read the record under its lock a moment ago; a recovery reads it again.
  let record = options.record;
  if (!record) {
    const read = await store.read(journal.checkpointId);
    if (!read.ok) return;
    record = read.record;
  }
  const done = journal.replaced.filter((r) => !lateKept.has(r.path));
  const kept = [...new Set([...journal.kept, ...lateKept])];
  if (journal.direction === 'undo') {
    const previous: UndoneState | undefined = record.state === 'undone' ? record.undo : undefined;
    // A path kept this time is not restored, whatever an earlier write of this outcome (before a crash) said.
    const paths = [...(previous?.paths ?? []).filter((p) => !done.some((d) => d.path === p.path) && !lateKept.has(p.path)), ...done];
    if (paths.length === 0) return;
    await store.write({
      ...record,
      state: 'undone',
      undo: {
        at: store.now(),
        paths,
        kept: kept.filter((k) => !paths.some((p) => p.path === k)),
        createdDirs: [...new Set([...(previous?.createdDirs ?? []), ...dirs.created])],
        removedDirs: [...new Set([...(previous?.removedDirs ?? []), ...dirs.removed])],
      },
    }, options);
    return;
  }
  // Redo: the paths put back hold what the undo replaced, which the next undo expects to find.
  const redone = new Map(done.map((d) => [d.path, d]));
  const undoPaths = record.undo?.paths ?? [];
  const files = record.files.map((file) => {
    const back = undoPaths.find((p) => p.path === file.path);
    return back && redone.has(file.path) ? { ...file, after: back.replaced } : file;
  });
  const remaining = undoPaths.filter((p) => !redone.has(p.path));
  if (remaining.length === 0) {
    const { undo: _dropped, ...rest } = record;
    void _dropped;
    await store.write({ ...rest, state: 'applied', files }, options);
  } else {
    await store.write({ ...record, files, undo: { ...record.undo!, paths: remaining } }, options);
  }
}

export async function removeTemp(store: StoreFiles, step: RestoreStep): Promise<void> {
  if (!step.temp || (await placementProblem(store.root, step.temp))) return;
  const absolute = toAbsolute(store.root, step.temp);
  if ((await store.fs.lstat(absolute))?.type === 'file') await store.fs.unlink(absolute);
}

export async function rollBack(store: StoreFiles, journal: RestoreJournal): Promise<void> {
  for (const step of journal.steps) await removeTemp(store, step).catch(() => undefined);
  for (const dir of deepestFirst(journal.createdDirs)) {
    if (!(await placementProblem(store.root, dir))) await store.fs.rmdirIfEmpty(toAbsolute(store.root, dir)).catch(() => false);
  }
  await removeJournal(store.fs, store.journalsDir, journal.checkpointId).catch(() => undefined);
}


/** Finishes (past the commit point) or rolls back (still staging) the journal a dead process left. */
export async function recoverJournal(store: StoreFiles, checkpointId: string): Promise<JournalRecovery> {
  const file = journalPath(store.journalsDir, checkpointId);
  const info = await store.fs.lstat(file);
  const journal = info?.type === 'file' ? parseJournal(Buffer.from(await store.fs.readFile(file)).toString('utf8'), checkpointId) : undefined;
  if (!journal || journal.workspaceRoot !== store.root) {
    // Unreadable: the first write of a journal comes before any temp, so nothing was staged yet.
    await store.fs.unlink(file);
    return { checkpointId, outcome: 'abandoned', restored: [] };
  }
  if (journal.phase === 'staging') {
    await rollBack(store, journal);
    return { checkpointId, outcome: 'rolled-back', restored: [] };
  }
  const { restored } = await commit(store, journal, undefined);
  return { checkpointId, outcome: 'rolled-forward', restored };
}
