// A unified diff (`--- a/x`, `+++ b/x`, `@@ … @@` hunks with 3 lines of context) of what a write
// would change, for approvals: the user sees the change itself, not a summary of it.
import { isValidUtf8 } from './toolSupport';

const CONTEXT = 3;
/** Beyond this many changed lines (after the common head and tail) the middle is shown as replaced whole. */
const MAX_DIFF_LINES = 20_000;
/** Beyond this many edit steps Myers' search stops and the middle is shown as replaced whole. */
const MAX_EDIT_DISTANCE = 2_000;
/** The diff text shown is cut after this many lines. */
export const MAX_SHOWN_DIFF_LINES = 400;

type Op = { kind: ' ' | '-' | '+'; text: string };

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Myers' O(ND) shortest edit script of the middle part; undefined when it is too far apart. */
function myers(a: readonly string[], b: readonly string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] is the furthest x reached on each diagonal before step d: what backtracking walks.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, d, offset);
    }
  }
  return undefined;
}

function backtrack(trace: readonly Int32Array[], a: readonly string[], b: readonly string[], depth: number, offset: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = depth; d > 0; d--) {
    const v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    for (; x > prevX && y > prevY; x--, y--) ops.push({ kind: ' ', text: a[x - 1] });
    if (x === prevX) ops.push({ kind: '+', text: b[--y] });
    else ops.push({ kind: '-', text: a[--x] });
  }
  for (; x > 0 && y > 0; x--, y--) ops.push({ kind: ' ', text: a[x - 1] });
  return ops.reverse();
}

function lineOps(before: string[], after: string[]): Op[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const a = before.slice(head, before.length - tail);
  const b = after.slice(head, after.length - tail);
  const middle =
    (a.length + b.length <= MAX_DIFF_LINES ? myers(a, b) : undefined) ?? [...a.map((text): Op => ({ kind: '-', text })), ...b.map((text): Op => ({ kind: '+', text }))];
  return [...before.slice(0, head).map((text): Op => ({ kind: ' ', text })), ...middle, ...before.slice(before.length - tail).map((text): Op => ({ kind: ' ', text }))];
}

function hunks(ops: Op[]): string[] {
  const out: string[] = [];
  const changed = ops.map((op, i) => (op.kind === ' ' ? -1 : i)).filter((i) => i >= 0);
  let index = 0;
  while (index < changed.length) {
    const start = Math.max(0, changed[index] - CONTEXT);
    let end = changed[index];
    while (index < changed.length && changed[index] <= end + 2 * CONTEXT) end = changed[index++];
    end = Math.min(ops.length - 1, end + CONTEXT);
    let oldLine = 1;
    let newLine = 1;
    for (let i = 0; i < start; i++) {
      if (ops[i].kind !== '+') oldLine++;
      if (ops[i].kind !== '-') newLine++;
    }
    const slice = ops.slice(start, end + 1);
    const oldCount = slice.filter((op) => op.kind !== '+').length;
    const newCount = slice.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`);
    for (const op of slice) out.push(`${op.kind}${op.text}`);
  }
  return out;
}

function sizeOf(bytes: number): string {
  return bytes === 1 ? '1 byte' : `${bytes} bytes`;
}

/**
 * The unified diff of a write to `file` (workspace-relative): from `before` (undefined = the file
 * does not exist yet) to `after`. Binary content is described by its size; long diffs are cut.
 */
export function unifiedDiff(file: string, before: Uint8Array | undefined, after: Uint8Array): string {
  const header = [before === undefined ? '--- /dev/null' : `--- a/${file}`, `+++ b/${file}`];
  const binary = (data: Uint8Array | undefined) => data !== undefined && (data.includes(0) || !isValidUtf8(data));
  if (binary(before) || binary(after)) {
    return [...header, `Binary or non-UTF-8 content: ${before === undefined ? 'new file' : sizeOf(before.length)} → ${sizeOf(after.length)}`].join('\n');
  }
  const oldText = before === undefined ? '' : Buffer.from(before).toString('utf8');
  const newText = Buffer.from(after).toString('utf8');
  if (oldText === newText) return [...header, '(no change)'].join('\n');
  const lines = [...header, ...hunks(lineOps(splitLines(oldText), splitLines(newText)))];
  if (before !== undefined && oldText !== '' && !oldText.endsWith('\n')) lines.push('\\ No newline at end of the old file');
  if (newText !== '' && !newText.endsWith('\n')) lines.push('\\ No newline at end of the new file');
  if (lines.length <= MAX_SHOWN_DIFF_LINES) return lines.join('\n');
  return [...lines.slice(0, MAX_SHOWN_DIFF_LINES), `… ${lines.length - MAX_SHOWN_DIFF_LINES} more lines of the diff not shown`].join('\n');
}
