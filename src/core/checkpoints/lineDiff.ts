// Lines added and removed between two texts, as a diff would count them (Myers' shortest edit
// script on lines), for the +/− counts beside each file before Tab and in approvals.

export interface LineCounts {
  added: number;
  removed: number;
}

/** Beyond this many edits the count is estimated from the lines' multisets (a huge rewrite). */
const MAX_EDITS = 4000;
/** Myers costs about (lines × edits); past this much work the estimate is used instead. */
const MAX_WORK = 8_000_000;

function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Length of the longest common subsequence of a and b, or undefined past `maxEdits` edits. */
function commonLength(a: readonly string[], b: readonly string[], maxEdits: number): number | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]);
      let x = down ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return (n + m - d) / 2;
    }
  }
  return undefined;
}

function multisetCommon(a: readonly string[], b: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let common = 0;
  for (const line of b) {
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      common++;
      counts.set(line, left - 1);
    }
  }
  return common;
}

export function lineChangeCounts(before: string, after: string): LineCounts {
  const a = linesOf(before);
  const b = linesOf(after);
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
  const budget = Math.max(16, Math.min(MAX_EDITS, Math.floor(MAX_WORK / Math.max(1, middleA.length + middleB.length))));
  const common = commonLength(middleA, middleB, budget) ?? multisetCommon(middleA, middleB);
  return { added: middleB.length - common, removed: middleA.length - common };
}

/** True for content a text diff cannot show (a NUL byte in the first 8 KB, as git decides). */
export function looksBinary(data: Uint8Array): boolean {
  const end = Math.min(data.length, 8192);
  for (let i = 0; i < end; i++) if (data[i] === 0) return true;
  return false;
}
