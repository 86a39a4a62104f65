// A change between two texts split into hunks (runs of changed lines), each with an id that stays
// the same while the others are kept or dropped, and re-application of any subset of them: what
// "Keep / Drop this change" in a diff writes. Lines keep their own endings, so CRLF stays CRLF.
import { createHash } from 'node:crypto';
import { looksBinary } from './lineDiff';

export interface Hunk {
  /** Stable across re-splits: the same change keeps its id when other hunks are kept or dropped. */
  id: string;
  /** 0-based line where the hunk starts in the old text (where it is inserted, for a pure addition). */
  oldStart: number;
  /** The old text's lines the hunk replaces, each with its own line ending. */
  oldLines: string[];
  /** 0-based line where the hunk starts in the new text. */
  newStart: number;
  /** The lines it puts in their place. */
  newLines: string[];
}

/** A file whose content a line diff cannot show (NUL bytes or bytes that are not UTF-8). */
export class BinaryFileError extends Error {
  constructor(readonly path: string) {
    super(`${path || 'This file'} is binary, so its changes cannot be split into hunks; keep or leave out the whole file instead.`);
    this.name = 'BinaryFileError';
  }
}

/** The hunk ids given no longer match the texts (one of them changed since the diff was shown). */
export class StaleHunkError extends Error {
  constructor(readonly path: string, readonly ids: readonly string[]) {
    super(`The change you picked in ${path || 'this file'} is no longer there (the file changed since the diff was shown); look at the diff again.`);
    this.name = 'StaleHunkError';
  }
}

/** Past this much Myers work the middle of a huge rewrite is one hunk (still exact, just coarse). */
const MAX_WORK = 4_000_000;

/** The text's lines, each with its ending ("\n", "\r\n" or none for an unterminated last line). */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    if (end < 0) break;
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/**
 * The matched pairs (oldIndex, newIndex) of a shortest edit script (Myers, with the trace kept),
 * or undefined when it would cost more than `maxWork`.
 */
function matchedPairs(a: readonly string[], b: readonly string[], maxWork: number): [number, number][] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return [];
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let work = 0;
  let found = -1;
  outer: for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]);
      let x = down ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break outer;
      }
    }
    work += 2 * max + 3;
    if (work > maxWork) return undefined;
  }
  const pairs: [number, number][] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d];
    const k = x - y;
    const down = k === -d || (k !== d && prev[offset + k - 1] < prev[offset + k + 1]);
    const prevK = down ? k + 1 : k - 1;
    const prevX = prev[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) pairs.push([--x, --y]);
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) pairs.push([--x, --y]);
  return pairs.reverse();
}

function hunkKey(oldLines: readonly string[], newLines: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify([oldLines, newLines])).digest('hex').slice(0, 12);
}

/**
 * The hunks that turn `before` into `after`, in order. Each run of changed lines is one hunk, so two
 * changes one unchanged line apart are two hunks. An id is the hash of what the hunk removes and
 * adds plus how many equal hunks came before it: dropping one hunk leaves the others' ids alone.
 */
export function splitHunks(before: string, after: string): Hunk[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const middleA = a.slice(start, endA);
  const middleB = b.slice(start, endB);
  const pairs = matchedPairs(middleA, middleB, MAX_WORK) ?? [];
  // Changed regions as [oldStart, oldEnd, newStart, newEnd) in whole-text line numbers.
  const regions: [number, number, number, number][] = [];
  let x = 0;
  let y = 0;
  const flush = (toX: number, toY: number) => {
    if (toX !== x || toY !== y) regions.push([start + x, start + toX, start + y, start + toY]);
  };
  for (const [pa, pb] of pairs) {
    flush(pa, pb);
    x = pa + 1;
    y = pb + 1;
  }
  flush(middleA.length, middleB.length);
  const hunks: Hunk[] = [];
  const seen = new Map<string, number>();
  for (const [oldStart, oldEnd, newStart, newEnd] of splitAtRepeatedLine(regions, a, b)) {
    const oldLines = a.slice(oldStart, oldEnd);
    const newLines = b.slice(newStart, newEnd);
    const key = hunkKey(oldLines, newLines);
    const occurrence = seen.get(key) ?? 0;
    seen.set(key, occurrence + 1);
    hunks.push({ id: occurrence === 0 ? key : `${key}-${occurrence}`, oldStart, oldLines, newStart, newLines });
  }
  return hunks;
}

/**
 * A change followed by a line it also adds (`}` closing both an edited function and a new one
 * below it) is an equally short diff either way; read as "edit, then add after the `}`" it is two
 * hunks, as the diff editor shows it, so the user can keep one and drop the other.
 */
function splitAtRepeatedLine(regions: readonly [number, number, number, number][], a: readonly string[], b: readonly string[]): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  for (const [oldStart, oldEnd, newStart, newEnd] of regions) {
    const next = a[oldEnd];
    const p = oldEnd > oldStart && oldEnd < a.length && newEnd < b.length && b[newEnd] === next ? b.slice(newStart + 1, newEnd).indexOf(next) : -1;
    if (p < 0) {
      out.push([oldStart, oldEnd, newStart, newEnd]);
      continue;
    }
    // b[newStart + 1 + p] is matched with a[oldEnd]; the rest, up to and with b[newEnd], is added after it.
    const at = newStart + 1 + p;
    out.push([oldStart, oldEnd, newStart, at], [oldEnd + 1, oldEnd + 1, at + 1, newEnd + 1]);
  }
  // A moved part that now touches the next change joins it: one run of changed lines, one hunk.
  const merged: [number, number, number, number][] = [];
  for (const region of out) {
    const last = merged[merged.length - 1];
    if (last && last[1] === region[0] && last[3] === region[2]) {
      last[1] = region[1];
      last[3] = region[3];
    } else merged.push([...region]);
  }
  return merged;
}

/**
 * `before` with only the hunks in `keep` applied (by id): keeping every hunk gives `after`, keeping
 * none gives `before`. An id that is not a hunk of these texts is refused (StaleHunkError), so a
 * click on an outdated diff never writes a text nobody saw.
 */
export function applyHunks(before: string, after: string, keep: ReadonlySet<string>, path = ''): string {
  const hunks = splitHunks(before, after);
  const known = new Set(hunks.map((hunk) => hunk.id));
  const unknown = [...keep].filter((id) => !known.has(id));
  if (unknown.length > 0) throw new StaleHunkError(path, unknown);
  const a = splitLines(before);
  const out: string[] = [];
  let at = 0;
  for (const hunk of hunks) {
    out.push(...a.slice(at, hunk.oldStart));
    out.push(...(keep.has(hunk.id) ? hunk.newLines : hunk.oldLines));
    at = hunk.oldStart + hunk.oldLines.length;
  }
  out.push(...a.slice(at));
  return out.join('');
}

/** `after` with the hunks in `drop` taken out (the others kept). */
export function dropHunks(before: string, after: string, drop: ReadonlySet<string>, path = ''): string {
  const hunks = splitHunks(before, after);
  const unknown = [...drop].filter((id) => !hunks.some((hunk) => hunk.id === id));
  if (unknown.length > 0) throw new StaleHunkError(path, unknown);
  return applyHunks(before, after, new Set(hunks.filter((hunk) => !drop.has(hunk.id)).map((hunk) => hunk.id)), path);
}

// ignoreBOM keeps a byte-order mark in the text, so writing the text back gives the same bytes.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes as text for hunk splitting; binary content (NUL, or not UTF-8) is refused with BinaryFileError. */
export function textForHunks(data: Uint8Array, path = ''): string {
  if (looksBinary(data)) throw new BinaryFileError(path);
  try {
    return utf8.decode(data);
  } catch {
    throw new BinaryFileError(path);
  }
}

/** The hunks between two files' bytes; BinaryFileError when either is binary. */
export function splitFileHunks(before: Uint8Array, after: Uint8Array, path = ''): Hunk[] {
  return splitHunks(textForHunks(before, path), textForHunks(after, path));
}

/** Where a hunk is, in words: "line 12", "lines 12–14" (1-based, of the new text; of the old one when it only removes). */
export function describeHunk(hunk: Hunk): string {
  const removesOnly = hunk.newLines.length === 0;
  const first = (removesOnly ? hunk.oldStart : hunk.newStart) + 1;
  const count = removesOnly ? hunk.oldLines.length : hunk.newLines.length;
  return count <= 1 ? `line ${first}` : `lines ${first}–${first + count - 1}`;
}

/** A one-line summary of what a hunk does, for notes to the user and the model. */
export function summarizeHunk(hunk: Hunk): string {
  const added = hunk.newLines.length;
  const removed = hunk.oldLines.length;
  const what = removed === 0 ? `+${added}` : added === 0 ? `−${removed}` : `+${added} −${removed}`;
  return `${describeHunk(hunk)} (${what})`;
}

/** The tool result of an edit the user allowed in part: which changes were applied, which left out. */
export function partialEditNote(path: string, kept: readonly Hunk[], dropped: readonly Hunk[]): string {
  const total = kept.length + dropped.length;
  const keptText = kept.length === 0 ? 'none of its changes' : `${kept.length} of ${total} change${total === 1 ? '' : 's'} (${kept.map(summarizeHunk).join(', ')})`;
  return `Applied only part of this edit to ${path}: the user kept ${keptText} and left out ${dropped.map(summarizeHunk).join(', ')}. The file now holds only the kept changes; read it before editing it again.`;
}
