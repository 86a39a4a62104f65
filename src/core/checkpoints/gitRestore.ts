// Undo and redo of the refs an accept moved (commit ahead): after the files, each ref moves back
// (or forward again) by git's compare-and-swap, under the workspace's writer lock. A ref that moved
// since is a conflict that changes no ref; the objects stay in the store for git's gc.
import { FileWorkspaceLock, processLock, type WorkspaceLock } from '../fs/workspaceLock';
import { redoOf, undoOf, moveRefs, type GitMoves } from '../git/applyGitLayer';
import { parseHead } from '../git/gitBase';
import { checkRepository } from '../git/repository';
import type { CheckpointGitMoves, CheckpointRecord } from './record';
import type { Direction, RestoreOutcome } from './restore';
import type { StoreFiles } from './storeFiles';

/** The checkpoint's form back into git's: HEAD texts parsed. */
function movesOf(git: CheckpointGitMoves): GitMoves | undefined {
  if (!git.head) return { refs: git.refs };
  const from = parseHead(git.head.old);
  const to = parseHead(git.head.new);
  return from && to ? { refs: git.refs, head: { old: from, new: to } } : undefined;
}

async function writerLock(store: StoreFiles): Promise<WorkspaceLock> {
  try {
    return await FileWorkspaceLock.open({ stateDir: store.options.stateDir, root: store.root });
  } catch {
    return processLock(store.root);
  }
}

/** The paths the ref moves touch, as the CLI and the UI list restored files. */
function touched(git: CheckpointGitMoves): string[] {
  return [...git.refs.map((ref) => `.git/${ref.name}`), ...(git.head ? ['.git/HEAD'] : [])];
}

/** Runs after the files' restore: moves the refs of checkpoint `id`, and adds the outcome to the files'. */
export async function restoreGit(store: StoreFiles, id: string, direction: Direction, filesOutcome: RestoreOutcome, known?: CheckpointRecord): Promise<RestoreOutcome> {
  // Ref moves are recorded by the accept or never: a record read without them has none to restore.
  if (known && !known.git) return filesOutcome;
  const read = await store.read(id);
  if (!read.ok || !read.record.git) return filesOutcome;
  const record = read.record;
  // Without files the record's own state never changes: only the refs' state says undone or not.
  const noFiles = record.files.length === 0 && !filesOutcome.ok && (filesOutcome.reason === 'already-undone' || filesOutcome.reason === 'not-undone');
  const files: RestoreOutcome = noFiles ? { ok: true, restored: [], conflicts: [] } : filesOutcome;
  const git = record.git!;
  const wanted = direction === 'undo' ? 'applied' : 'undone';
  if (git.state !== wanted) {
    // A checkpoint of ref moves alone: undoing it twice is the same error as for files.
    if (files.ok && record.files.length === 0) {
      return direction === 'undo'
        ? { ok: false, reason: 'already-undone', message: `Checkpoint "${id}" is already undone.` }
        : { ok: false, reason: 'not-undone', message: `Checkpoint "${id}" is not undone; there is nothing to redo.` };
    }
    return files;
  }
  if (!files.ok) return files;
  const moves = movesOf(git);
  const repository = await checkRepository(store.root);
  const conflict = (message: string): RestoreOutcome => ({
    ...files,
    conflicts: [...files.conflicts, { path: touched(git)[0] ?? '.git', reason: 'modified', message, canForce: false }],
  });
  if (!moves) return conflict('The checkpoint names a HEAD that cannot be read; the refs were left as they are.');
  if (!repository.ok) return conflict(`The refs were left as they are: ${repository.reason}.`);
  const moved = await moveRefs({
    repository: repository.repository,
    moves: direction === 'undo' ? undoOf(moves) : redoOf(moves),
    lock: await writerLock(store),
    journalDir: store.journalsDir,
    message: direction === 'undo' ? 'speculate: undo of an accepted speculation' : 'speculate: redo of an accepted speculation',
  });
  if (!moved.ok) return conflict(`The refs were left as they are: ${moved.conflict}.`);
  const movedGit: CheckpointGitMoves = { ...git, state: direction === 'undo' ? 'undone' : 'applied' };
  // A checkpoint of ref moves alone: its own state follows the refs', so the chat offers Redo after Undo.
  const fresh = await store.read(id);
  const latest = fresh.ok ? fresh.record : record;
  if (latest.files.length === 0) {
    const { undo: _undo, ...rest } = latest;
    await store.write(direction === 'undo' ? { ...rest, git: movedGit, state: 'undone', undo: { at: store.now(), paths: [], kept: [], createdDirs: [], removedDirs: [] } } : { ...rest, git: movedGit, state: 'applied' });
  } else {
    await store.write({ ...latest, git: movedGit });
  }
  return { ...files, restored: [...files.restored, ...touched(git)] };
}
