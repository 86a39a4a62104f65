// Fuzzy ranking of workspace paths for the `@` list: the query's characters in order, scored higher
// when they start words, run together and fall in the file name. Pure, so it is unit-tested directly.

/** Score of `query` against `path` (higher is better), or undefined when it does not match. */
export function fuzzyScore(path: string, query: string): number | undefined {
  if (query === '') return -path.length / 100;
  const text = path.toLowerCase();
  const q = query.toLowerCase();
  const nameStart = path.lastIndexOf('/') + 1;
  let score = 0;
  let at = 0;
  let previous = -2;
  for (const ch of q) {
    const found = text.indexOf(ch, at);
    if (found < 0) return undefined;
    const before = found > 0 ? path[found - 1] : '/';
    const startsWord = /[/._\-\s]/.test(before) || (/[a-z]/.test(before) && /[A-Z]/.test(path[found]));
    score += 1;
    if (found === previous + 1) score += 5;
    if (startsWord) score += 8;
    if (found >= nameStart) score += 3;
    previous = found;
    at = found + 1;
  }
  // Among equals, shorter paths (fewer folders to wade through) come first.
  return score - path.length / 100;
}

/** The best `limit` paths for the query; an empty query lists the shortest paths first. */
export function rankPaths(paths: readonly string[], query: string, limit: number): string[] {
  const scored: { path: string; score: number }[] = [];
  for (const path of paths) {
    const score = fuzzyScore(path, query);
    if (score !== undefined) scored.push({ path, score });
  }
  scored.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((s) => s.path);
}
