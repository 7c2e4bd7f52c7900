/**
 * Small statistics for scenario reports: nearest-rank percentiles, latency
 * summaries and safe ratios. Pure functions, so the numbers a report prints
 * can be checked by unit tests.
 */

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
  const sorted = Float64Array.from(samples).sort();
  const list = Array.from(sorted);
  return {
    count: list.length,
    p50: percentile(list, 50),
    p99: percentile(list, 99),
    p999: percentile(list, 99.9),
    max: list.length === 0 ? undefined : list[list.length - 1],
  };
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
