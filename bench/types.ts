// What a benchmark suite reports: named figures, each a list of samples the harness summarises
// (median, spread) into bench/results.json and bench/RESULTS.md.
export interface Figure {
  /** e.g. "classify per command". */
  name: string;
  unit: 'ms' | 'µs' | '%' | 'bytes' | 'KB' | 'x' | 'count';
  samples: number[];
  /** The target in words, e.g. "≤ 25 µs median". */
  target?: string;
  /** Free text shown beside the figure (what was measured, how many runs). */
  note?: string;
}

/** A suite is a module under bench/suites/ whose default export returns its figures. */
export type Suite = () => Promise<Figure[]>;
