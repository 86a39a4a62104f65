// Drop before Tab: one hunk of a speculated file taken out by rewriting the overlay's copy without
// it (through the overlay's own write, so Tab's stale-read and conflict checks see it as any other
// write), and the record of what was dropped, for the note the accepted turns carry.
import { applyHunks, splitFileHunks, StaleHunkError, summarizeHunk, textForHunks, type Hunk } from '../checkpoints/hunks';
import type { WorkspaceFs } from '../fs/workspaceFs';

/** What the user dropped of one file before Tab. */
export interface DroppedHunks {
  path: string;
  /** How many changes the file had before the first drop. */
  total: number;
  /** Each dropped change in words ("lines 4–6 (+3 −1)"), in the order dropped. */
  dropped: string[];
}

/** The overlay as a drop needs it: read and write, and which paths the run wrote. */
export interface HunkDropOverlay extends Pick<WorkspaceFs, 'readFile' | 'writeFile'> {
  writtenFiles(): { path: string; kind: 'modified' | 'created' | 'deleted' }[];
}

/** The hunks of a speculated file against the real one (what the preview diff shows). */
export async function speculatedHunks(overlay: HunkDropOverlay, real: Pick<WorkspaceFs, 'readFile'>, path: string): Promise<Hunk[]> {
  assertModified(overlay, path);
  return splitFileHunks(await real.readFile(path), await overlay.readFile(path), path);
}

function assertModified(overlay: HunkDropOverlay, path: string): void {
  const written = overlay.writtenFiles().find((file) => file.path === path);
  if (!written) throw new Error(`The speculation did not change ${path}, so it has no change to drop.`);
  if (written.kind !== 'modified') {
    throw new Error(`${path} was ${written.kind} by the speculation as a whole, so it cannot be split into changes; leave the whole file out instead.`);
  }
}

/**
 * Rewrites the overlay's `path` without hunk `hunkId`. Returns the dropped hunk and how many the
 * file had; a hunk id the current texts do not have is refused (StaleHunkError) and writes nothing.
 */
export async function dropSpeculatedHunk(overlay: HunkDropOverlay, real: Pick<WorkspaceFs, 'readFile'>, path: string, hunkId: string): Promise<{ hunk: Hunk; before: number }> {
  assertModified(overlay, path);
  const original = textForHunks(await real.readFile(path), path);
  const speculated = textForHunks(await overlay.readFile(path), path);
  const hunks = splitFileHunks(Buffer.from(original), Buffer.from(speculated), path);
  const hunk = hunks.find((candidate) => candidate.id === hunkId);
  if (!hunk) throw new StaleHunkError(path, [hunkId]);
  const kept = new Set(hunks.filter((candidate) => candidate.id !== hunkId).map((candidate) => candidate.id));
  await overlay.writeFile(path, applyHunks(original, speculated, kept, path));
  return { hunk, before: hunks.length };
}

/** Per file, what was dropped: the record a Speculation keeps until Tab. */
export class HunkDropRecord {
  private readonly files = new Map<string, DroppedHunks>();

  add(path: string, hunk: Hunk, hunksBefore: number): void {
    const entry = this.files.get(path) ?? { path, total: hunksBefore, dropped: [] };
    entry.dropped.push(summarizeHunk(hunk));
    this.files.set(path, entry);
  }

  list(): DroppedHunks[] {
    return [...this.files.values()].map((entry) => ({ ...entry, dropped: [...entry.dropped] })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** How many changes of `path` were dropped (0 when none). */
  droppedIn(path: string): number {
    return this.files.get(path)?.dropped.length ?? 0;
  }
}

/** The note the accepted turns carry for one file: the model's next turn is told, not left to guess. */
export function droppedHunksNote(entry: DroppedHunks): string {
  const count = entry.dropped.length;
  return `(Note: the user dropped ${count} of ${entry.total} change${entry.total === 1 ? '' : 's'} to ${entry.path} before accepting — ${entry.dropped.join(', ')} ${count === 1 ? 'was' : 'were'} not applied; the file has the other changes.)`;
}
