// Tab for a speculated commit: the layer's objects go into the real store (idempotent), every
// branch and tag it moved moves in one `git update-ref --stdin` transaction against the value the
// speculation saw (git's compare-and-swap: all or none), HEAD and the index under git's own locks,
// each only if still what the speculation saw. Undo is the same with old and new swapped.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import type { WorkspaceLock } from '../fs/workspaceLock';
import { headFileText, indexUnchanged, readHead, readRefs, sameHead, type GitBase, type HeadState } from './gitBase';
import type { GitLayer } from './gitLayer';
import { GitLockFile, removeLockIfOurs } from './gitLockFile';
import { copyObjects } from './objectCopy';
import { runRefTransaction, type RefUpdate } from './refTransaction';
import type { GitRepository } from './repository';

/** What an accept moved: enough to undo it by the same compare-and-swap. `old: null` = the ref was created. */
export interface GitMoves {
  refs: { name: string; old: string | null; new: string }[];
  head?: { old: HeadState; new: HeadState };
}

export type GitApplyResult =
  | { ok: true; moves: GitMoves; indexUpdated: boolean; indexNote?: string; objectsAdded: number }
  /** Nothing changed (objects aside, which nothing refers to): the repository moved since the speculation looked. */
  | { ok: false; conflict: string };

export interface GitApplyOptions {
  repository: GitRepository;
  base: GitBase;
  layer: GitLayer;
  /** The workspace's writer lock, the one file accepts hold. */
  lock: WorkspaceLock;
  /** Where the accept notes the locks it holds, so a crash never leaves one behind (recoverGitApply). */
  journalDir: string;
  /** Fault hook for the crash tests: called at each named step. */
  step?: (name: 'objects' | 'locked' | 'refs' | 'head' | 'index') => void | Promise<void>;
}

/** Not `.json` nor `.redo`: the checkpoint folder's own recovery reads those as its journals and redo logs. */
const JOURNAL = 'git-apply.journal';

interface Journal {
  pid: number;
  locks: { path: string; inode: number }[];
}

function headText(head: HeadState): string {
  return `${headFileText(head)}\n`;
}

function describeHead(head: HeadState): string {
  return head.kind === 'symbolic' ? head.ref.replace(/^refs\/heads\//, 'branch ') : `commit ${head.oid.slice(0, 7)}`;
}

async function writeJournal(dir: string, journal: Journal): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(dir, `.${JOURNAL}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(JSON.stringify(journal));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path.join(dir, JOURNAL));
}

/**
 * After a crash: removes the lock files an interrupted accept or undo had taken (only those still
 * with the inode it created), so git is not left refusing to work. The refs themselves are wholly
 * old or wholly new (git's transaction); nothing else needs repair. Returns the locks removed.
 */
export async function recoverGitApply(journalDir: string): Promise<string[]> {
  let journal: Journal;
  try {
    journal = JSON.parse(await readFile(path.join(journalDir, JOURNAL), 'utf8')) as Journal;
  } catch {
    return [];
  }
  if (journal.pid !== process.pid && processAlive(journal.pid)) return [];
  const removed: string[] = [];
  for (const lock of journal.locks ?? []) if (await removeLockIfOurs(lock.path, lock.inode)) removed.push(lock.path);
  await unlink(path.join(journalDir, JOURNAL)).catch(() => undefined);
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Refs whose current value is not `expected`, in words; empty when all are as expected. */
function movedRefs(current: ReadonlyMap<string, string>, expected: readonly { name: string; value: string | null }[]): string[] {
  return expected.filter(({ name, value }) => (current.get(name) ?? null) !== value).map(({ name, value }) => {
    const now = current.get(name);
    const short = name.replace(/^refs\/(heads|tags)\//, '');
    if (value === null) return `${short} was created since the speculation looked`;
    return now ? `${short} moved to ${now.slice(0, 7)} since the speculation looked (it saw ${value.slice(0, 7)})` : `${short} was deleted since the speculation looked`;
  });
}

interface MoveInput {
  gitDir: string;
  updates: readonly RefUpdate[];
  message: string;
  zero: string;
  /** HEAD must be this while the refs move; `newHead` then replaces it. */
  expectHead: HeadState;
  newHead?: HeadState;
  journal: Journal;
  journalDir: string;
  step?: (name: 'locked' | 'refs' | 'head') => void | Promise<void>;
}

/**
 * Moves the refs in one transaction while HEAD is locked and checked, then HEAD. When HEAD's branch
 * is among the refs, git itself locks HEAD during the transaction (it logs the move in HEAD's
 * reflog), so the check runs between git's prepare and commit; otherwise HEAD.lock is ours.
 */
async function moveRefsAndHead(input: MoveInput): Promise<{ ok: true } | { ok: false; conflict: string }> {
  const { gitDir, expectHead } = input;
  const gitLocksHead = expectHead.kind === 'symbolic' && input.updates.some((update) => update.name === expectHead.ref);
  const takeHead = async (): Promise<GitLockFile | { busy: string }> => {
    const lock = await GitLockFile.take(path.join(gitDir, 'HEAD'));
    if (lock instanceof GitLockFile) {
      input.journal.locks.push({ path: lock.lockPath, inode: lock.inode });
      await writeJournal(input.journalDir, input.journal);
    }
    return lock;
  };
  const checkHead = async (): Promise<string | undefined> => {
    const now = await readHead(gitDir);
    if (sameHead(now, expectHead)) {
      await input.step?.('locked');
      return undefined;
    }
    return `HEAD is now on ${describeHead(now)}; the speculation worked on ${describeHead(expectHead)}`;
  };
  let headLock: GitLockFile | undefined;
  try {
    if (!gitLocksHead) {
      const taken = await takeHead();
      if (!(taken instanceof GitLockFile)) return { ok: false, conflict: taken.busy };
      headLock = taken;
    }
    if (input.updates.length === 0) {
      const why = await checkHead();
      if (why) return { ok: false, conflict: why };
    } else {
      const moved = await runRefTransaction(gitDir, input.updates, input.message, input.zero, checkHead);
      if (!moved.ok) return { ok: false, conflict: moved.why };
    }
    await input.step?.('refs');
    if (input.newHead) {
      if (!headLock) {
        // git has let go of HEAD; take it and check again (a checkout may have come in between).
        const taken = await takeHead();
        if (!(taken instanceof GitLockFile)) return { ok: false, conflict: `the refs moved, but HEAD was not switched: ${taken.busy}` };
        headLock = taken;
        const why = await checkHead();
        if (why) return { ok: false, conflict: `the refs moved, but HEAD was not switched: ${why}` };
      }
      await headLock.commit(headText(input.newHead));
      await input.step?.('head');
    }
    return { ok: true };
  } finally {
    await headLock?.release();
  }
}

export async function applyGitLayer(options: GitApplyOptions): Promise<GitApplyResult> {
  const { repository, base, layer } = options;
  const { gitDir } = repository;
  const effects = await layer.effects();
  const refs = effects.refs
    .map((ref) => ({ name: ref.name, old: base.refs.get(ref.name) ?? null, new: ref.oid }))
    .filter((ref) => ref.old !== ref.new);
  const headMove = effects.head && !sameHead(effects.head, base.head) ? { old: base.head, new: effects.head } : undefined;
  const zero = '0'.repeat(repository.oidLength);
  return options.lock.hold(async () => {
    await recoverGitApply(options.journalDir);
    // Checked before anything is copied, so a conflict leaves the store as it was.
    const moved = movedRefs(await readRefs(gitDir), refs.map((ref) => ({ name: ref.name, value: ref.old })));
    if (moved.length > 0) return { ok: false, conflict: moved.join('; ') };
    const headNow = await readHead(gitDir);
    if (!sameHead(headNow, base.head)) return { ok: false, conflict: `HEAD is now on ${describeHead(headNow)}; the speculation committed on ${describeHead(base.head)}` };

    const objectsAdded = await copyObjects(layer.dir, gitDir, effects.objects, repository.oidLength);
    await options.step?.('objects');

    const journal: Journal = { pid: process.pid, locks: [] };
    let indexUpdated = false;
    let indexNote: string | undefined;
    try {
      const message = (refs[0] && (await layer.reflogMessage(refs[0].name, refs[0].new))) ?? 'speculate: accepted ahead';
      const moved = await moveRefsAndHead({ gitDir, updates: refs, message, zero, expectHead: base.head, ...(headMove ? { newHead: headMove.new } : {}), journal, journalDir: options.journalDir, ...(options.step ? { step: options.step } : {}) });
      if (!moved.ok) return { ok: false, conflict: moved.conflict };
      if (effects.index) {
        const index = await GitLockFile.take(path.join(gitDir, 'index'));
        if (!(index instanceof GitLockFile)) indexNote = `the index was not updated: ${index.busy}`;
        else {
          journal.locks.push({ path: index.lockPath, inode: index.inode });
          await writeJournal(options.journalDir, journal);
          try {
            if (await indexUnchanged(gitDir, base)) {
              await index.commit(await readFile(effects.index));
              indexUpdated = true;
            } else {
              indexNote = 'the index was not updated: you changed it since the speculation read it';
            }
          } finally {
            await index.release();
          }
          await options.step?.('index');
        }
      }
    } finally {
      await unlink(path.join(options.journalDir, JOURNAL)).catch(() => undefined);
    }
    return { ok: true, moves: { refs, ...(headMove ? { head: headMove } : {}) }, indexUpdated, ...(indexNote ? { indexNote } : {}), objectsAdded };
  });
}

export type GitUndoResult = { ok: true } | { ok: false; conflict: string };

/** A set of ref moves to make by compare-and-swap: each ref from `from` (null: absent) to `to` (null: deleted), HEAD likewise. */
export interface RefMoves {
  refs: { name: string; from: string | null; to: string | null }[];
  head?: { from: HeadState; to: HeadState };
}

/** The moves that take an accept back. */
export function undoOf(moves: GitMoves): RefMoves {
  return { refs: moves.refs.map((ref) => ({ name: ref.name, from: ref.new, to: ref.old })), ...(moves.head ? { head: { from: moves.head.new, to: moves.head.old } } : {}) };
}

/** The moves that make an accept again after its undo. */
export function redoOf(moves: GitMoves): RefMoves {
  return { refs: moves.refs.map((ref) => ({ name: ref.name, from: ref.old, to: ref.new })), ...(moves.head ? { head: { from: moves.head.old, to: moves.head.new } } : {}) };
}

/** Moves refs (and HEAD) by compare-and-swap, each only if it is still at `from`; all or none. The objects stay for git's gc. */
export async function moveRefs(options: { repository: GitRepository; moves: RefMoves; lock: WorkspaceLock; journalDir: string; message: string }): Promise<GitUndoResult> {
  const { repository, moves } = options;
  const { gitDir } = repository;
  const zero = '0'.repeat(repository.oidLength);
  return options.lock.hold(async () => {
    await recoverGitApply(options.journalDir);
    const moved = movedRefs(await readRefs(gitDir), moves.refs.map((ref) => ({ name: ref.name, value: ref.from })));
    if (moved.length > 0) return { ok: false, conflict: moved.join('; ').replaceAll('since the speculation looked', 'since').replaceAll(' (it saw', ' (expected') };
    const expectHead = moves.head?.from ?? (await readHead(gitDir));
    try {
      const result = await moveRefsAndHead({
        gitDir,
        updates: moves.refs.map((ref) => ({ name: ref.name, old: ref.from, new: ref.to })),
        message: options.message,
        zero,
        expectHead,
        ...(moves.head ? { newHead: moves.head.to } : {}),
        journal: { pid: process.pid, locks: [] },
        journalDir: options.journalDir,
      });
      if (!result.ok) return { ok: false, conflict: result.conflict };
    } finally {
      await unlink(path.join(options.journalDir, JOURNAL)).catch(() => undefined);
    }
    return { ok: true };
  });
}

/** Moves every ref (and HEAD) back, each only if it is still where the accept left it. */
export function undoGitMoves(options: { repository: GitRepository; moves: GitMoves; lock: WorkspaceLock; journalDir: string }): Promise<GitUndoResult> {
  return moveRefs({ ...options, moves: undoOf(options.moves), message: 'speculate: undo of an accepted speculation' });
}
