// Undo one hunk of a checkpoint: the file as it is now, with that one change taken back and
// everything else (the checkpoint's other changes, the user's later edits) left alone. When the user
// edited the hunk's lines (or right next to them) since, the plan says so: the caller asks, and only
// an explicit "undo anyway" replaces those lines, never a silent overwrite.
import { splitHunks, splitLines, StaleHunkError, type Hunk } from './hunks';

export type HunkUndoPlan =
  /** The hunk can be taken back; `text` is the file afterwards. */
  | { ok: true; hunk: Hunk; text: string; touched: false }
  /**
   * The user changed these lines (or the ones next to them) since: `text` is what "undo anyway"
   * writes — the region back as it was before the change, the user's edits inside it lost.
   */
  | { ok: true; hunk: Hunk; text: string; touched: true };

interface Span {
  start: number;
  end: number;
}

/** Closed intervals: touching counts, so an edit right next to the hunk is asked about too. */
function overlaps(a: Span, b: Span): boolean {
  return a.start <= b.end && b.start <= a.end;
}

/**
 * The plan for undoing hunk `hunkId` of the change `before` → `after`, given the file's `current`
 * text. A hunk id the texts do not have is refused with StaleHunkError.
 */
export function planHunkUndo(before: string, after: string, current: string, hunkId: string, path = ''): HunkUndoPlan {
  const hunk = splitHunks(before, after).find((candidate) => candidate.id === hunkId);
  if (!hunk) throw new StaleHunkError(path, [hunkId]);
  const afterLines = splitLines(after);
  const currentLines = splitLines(current);
  // The user's edits since, as hunks of after → current (after-coordinates: old*, current: new*).
  const edits = current === after ? [] : splitHunks(after, current);
  const region: Span = { start: hunk.newStart, end: hunk.newStart + hunk.newLines.length };
  let touched = false;
  const inside = new Set<Hunk>();
  for (let grown = true; grown; ) {
    grown = false;
    for (const edit of edits) {
      if (inside.has(edit) || !overlaps(region, { start: edit.oldStart, end: edit.oldStart + edit.oldLines.length })) continue;
      inside.add(edit);
      touched = true;
      region.start = Math.min(region.start, edit.oldStart);
      region.end = Math.max(region.end, edit.oldStart + edit.oldLines.length);
      grown = true;
    }
  }
  // Where the region starts and ends in the current text: shifted by the user's edits before it.
  let shift = 0;
  for (const edit of edits) if (!inside.has(edit) && edit.oldStart + edit.oldLines.length <= region.start) shift += edit.newLines.length - edit.oldLines.length;
  let grownBy = 0;
  for (const edit of inside) grownBy += edit.newLines.length - edit.oldLines.length;
  const from = region.start + shift;
  const to = region.end + shift + grownBy;
  const restored = [...afterLines.slice(region.start, hunk.newStart), ...hunk.oldLines, ...afterLines.slice(hunk.newStart + hunk.newLines.length, region.end)];
  const text = [...currentLines.slice(0, from), ...restored, ...currentLines.slice(to)].join('');
  return { ok: true, hunk, text, touched };
}
