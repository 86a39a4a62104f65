// The speculation's side of commit ahead (src/core/git): opens the workspace's repository at the
// first git command the gate let run ahead, takes each command's .git writes, keeps the preview of
// what Tab would commit, and applies it once at accept, before any file.
import { createHash } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CheckpointRecording } from '../checkpoints';
import { ensurePrivateFolder, perUserName } from '../fs/privateFolders';
import type { WorkspaceLock } from '../fs/workspaceLock';
import type { GitMoves } from '../git/applyGitLayer';
import { headFileText } from '../git/gitBase';
import type { GitPreview } from '../git/gitPreview';
import { SpeculatedGit } from '../git/speculatedGit';
import type { SandboxGitTarget } from '../tools/types';

/** What an accept did in the repository. */
export interface CommittedAhead {
  gitDir: string;
  moves: GitMoves;
  indexUpdated: boolean;
  /** Why the index was left as the user had it, when it was. */
  indexNote?: string;
  /** The preview's lines of what moved ("main: 1a2b3c4 → 5d6e7f8"). */
  moved: string[];
}

/** The repository moved since the speculation looked: Tab changed nothing (the request runs live). */
export class CommitAheadConflict extends Error {
  constructor(readonly conflict: string) {
    super(`the commit made ahead was not applied, and nothing was changed: ${conflict}`);
    this.name = 'CommitAheadConflict';
  }
}

/** Where accepts without a checkpoint keep their git journal (the locks they hold, for recovery): one folder per repository. */
async function fallbackJournalDir(gitDir: string): Promise<string> {
  const base = path.join(os.tmpdir(), perUserName('speculate-git-journal'));
  await ensurePrivateFolder(base);
  const dir = path.join(base, createHash('sha256').update(gitDir).digest('hex').slice(0, 16));
  await ensurePrivateFolder(dir);
  return dir;
}

export class CommitAhead {
  private git: Promise<SpeculatedGit | { refused: string }> | undefined;
  private attempted = false;
  private disposed = false;
  preview: GitPreview | null = null;
  applied: CommittedAhead | null = null;

  /**
   * The sandbox's view of the speculation's .git for one command; `onChange` after a command changed
   * what Tab would commit. `readOnly`: a command the gate did not let write .git, which sees the
   * commits made ahead so far (none yet: no view at all).
   */
  target(root: string, onChange: () => void, readOnly = false): SandboxGitTarget {
    const open = () => (this.git ??= SpeculatedGit.open(root));
    return {
      access: async () => {
        if (readOnly) {
          const git = this.git ? await this.git : undefined;
          if (!git || 'refused' in git || !(await git.hasChanges())) return null;
          return { ...(await git.access()), readOnly: true };
        }
        if (this.disposed) return { refused: 'the speculation has ended' };
        const git = await open();
        return 'refused' in git ? git : git.access();
      },
      absorb: async (upper) => {
        const git = await open();
        if ('refused' in git) return { ok: false, detail: git.refused };
        const absorbed = await git.absorb(upper);
        if (!absorbed.ok) return absorbed;
        this.preview = absorbed.preview;
        onChange();
        return { ok: true };
      },
    };
  }

  /**
   * Applies what the speculation committed, once per accept (later apply calls of the same accept,
   * after conflicting files, do nothing here). Throws CommitAheadConflict when the repository moved.
   */
  async applyOnce(options: { lock: WorkspaceLock; checkpoint?: CheckpointRecording }): Promise<CommittedAhead | null> {
    if (this.attempted) return null;
    this.attempted = true;
    const git = this.git ? await this.git : undefined;
    if (!git || 'refused' in git) return null;
    const journalDir = options.checkpoint?.redoDir ?? (await fallbackJournalDir(git.repository.gitDir));
    const result = await git.apply({ lock: options.lock, journalDir });
    if (!result) return null;
    if (!result.ok) throw new CommitAheadConflict(result.conflict);
    // The checkpoint keeps the moves, so Undo (the UI's, the CLI's) moves the refs back; a commit alone is a checkpoint too.
    await options.checkpoint?.noteGit({
      refs: result.moves.refs,
      ...(result.moves.head ? { head: { old: headFileText(result.moves.head.old), new: headFileText(result.moves.head.new) } } : {}),
    });
    this.applied = {
      gitDir: git.repository.gitDir,
      moves: result.moves,
      indexUpdated: result.indexUpdated,
      ...(result.indexNote ? { indexNote: result.indexNote } : {}),
      moved: this.preview?.moves ?? [],
    };
    return this.applied;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const git = this.git ? await this.git.catch(() => undefined) : undefined;
    if (git && !('refused' in git)) await git.dispose();
  }
}
