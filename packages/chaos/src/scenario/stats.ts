/**
 * Small statistics for scenario reports and the repo's benchmarks. Pure
 * functions, so the numbers a report prints can be checked by unit tests.
 *
 * Two quantile definitions, on purpose:
 * - `percentile(sorted, p)` — **nearest rank**: always an observed value, so
 *   a latency p99 is a latency some call really had. For latency samples.
 * - `quantile(sorted, q)` — **linear interpolation** between closest ranks
 *   (Hyndman–Fan type 7, the default of R and NumPy). For the spread of a
 *   handful of per-round results, where nearest rank would jump.
 */

/** Ascending copy of `values` (numeric sort, not the default string sort). */
export function sortedAscending(values: readonly number[]): number[] {
  return Array.from(Float64Array.from(values).sort());
}

/**
 * The `p`-th percentile of `sorted` (ascending) by the nearest-rank method:
 * the smallest value with at least `p`% of the values at or below it.
 * `undefined` for an empty list.
 * @example percentile([1, 2, 3, 4], 50) // 2
 */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile p must be in [0, 100], got ${p}`);
  const n = sorted.length;
  if (n === 0) return undefined;
  // The epsilon keeps float noise (0.999 × 1000 = 999.0000000000001) from bumping the rank.
  const rank = Math.max(1, Math.ceil((p / 100) * n - 1e-9));
  return sorted[Math.min(rank, n) - 1];
}

/** Latency summary of one group of calls, in ms (`undefined` when there were none). */
export interface LatencySummary {
  /** Number of samples. */
  count: number;
  /** Median (nearest-rank 50th percentile). */
  p50: number | undefined;
  /** Nearest-rank 99th percentile. */
  p99: number | undefined;
  /** Nearest-rank 99.9th percentile. */
  p999: number | undefined;
  /** Slowest sample. */
  max: number | undefined;
}

/** Sorts a copy of `samples` and summarizes it. */
export function summarizeLatency(samples: readonly number[]): LatencySummary {
  const list = sortedAscending(samples);
  return {
    count: list.length,
    p50: percentile(list, 50),
    p99: percentile(list, 99),
    p999: percentile(list, 99.9),
    max: list.length === 0 ? undefined : list[list.length - 1],
  };
}

/**
 * Linearly interpolated quantile (type 7) of `sortedValues` (ascending), `q` in `[0, 1]`:
 * position `h = (n − 1) × q`, value `x[⌊h⌋] + (h − ⌊h⌋) × (x[⌊h⌋+1] − x[⌊h⌋])`.
 * `undefined` for an empty list.
 * @example quantile([1, 2, 3, 4], 0.5) // 2.5
 */
export function quantile(sortedValues: readonly number[], q: number): number | undefined {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile q must be in [0, 1], got ${q}`);
  const n = sortedValues.length;
  if (n === 0) return undefined;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const a = sortedValues[lo] as number;
  const b = sortedValues[Math.min(lo + 1, n - 1)] as number;
  return a + (h - lo) * (b - a);
}

/** Median (type-7 quantile 0.5: the mean of the two middle values for an even count) of unsorted `values`; `NaN` when empty. */
export function median(values: readonly number[]): number {
  return quantile(sortedAscending(values), 0.5) ?? Number.NaN;
}

/** Five-number summary of a set of per-round results. */
export interface Spread {
  /** Number of values. */
  n: number;
  min: number;
  /** First quartile (type 7). */
  q1: number;
  median: number;
  /** Third quartile (type 7). */
  q3: number;
  max: number;
  /** `q3 − q1`. */
  iqr: number;
}

/** Five-number summary (type-7 quartiles) of unsorted `values`; all `NaN` when empty. */
export function spread(values: readonly number[]): Spread {
  const s = sortedAscending(values);
  const q = (x: number) => quantile(s, x) ?? Number.NaN;
  const q1 = q(0.25);
  const q3 = q(0.75);
  return {
    n: s.length,
    min: s[0] ?? Number.NaN,
    q1,
    median: q(0.5),
    q3,
    max: s[s.length - 1] ?? Number.NaN,
    iqr: q3 - q1,
  };
}

/**
 * Per-round ratios `a[i] / b[i]` of two interleaved series (same length).
 * Their spread says how stable a ratio is on a noisy machine: both variants
 * of a round ran back to back, so slow periods hit both.
 */
export function pairedRatios(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length) {
    throw new RangeError(`pairedRatios: lengths differ (${a.length} vs ${b.length})`);
  }
  return a.map((x, i) => x / (b[i] as number));
}

/**
 * Per-round differences `a[i] − b[i]` of two interleaved series (same length):
 * what one variant adds to another, round by round (see `pairedRatios`).
 */
export function pairedDifferences(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length) {
    throw new RangeError(`pairedDifferences: lengths differ (${a.length} vs ${b.length})`);
  }
  return a.map((x, i) => x - (b[i] as number));
}

/** `numerator / denominator`, or `undefined` when the denominator is 0. */
export function ratio(numerator: number, denominator: number): number | undefined {
  return denominator === 0 ? undefined : numerator / denominator;
}

/** Rounds to `digits` decimals, keeping `undefined`. */
export function round(value: number | undefined, digits = 1): number | undefined {
  if (value === undefined) return undefined;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
