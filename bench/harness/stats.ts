/**
 * Statistics for the benchmark suite. Every number BENCHMARKS.md prints goes
 * through these functions, and `stats.test.ts` pins their definitions.
 *
 * Two quantile definitions, on purpose:
 * - `percentile(sorted, p)` — **nearest rank**: the smallest sample with at
 *   least `p`% of the samples at or below it. Always an observed value, so a
 *   latency p99 is a latency some call really had. Used for latency samples.
 * - `quantile(sorted, q)` — **linear interpolation** between closest ranks
 *   (Hyndman–Fan type 7, the default of R and NumPy). Used for the spread of
 *   a handful of per-round results, where nearest rank would jump.
 * `median` is `quantile(…, 0.5)`: the middle value, or the mean of the two
 * middle values for an even count.
 */

import { type LatencySummary, percentile, summarizeLatency } from '@breakwater/chaos';

/** Ascending copy of `values` (numeric sort, not the default string sort). */
export function sorted(values: readonly number[]): number[] {
  return Array.from(Float64Array.from(values).sort());
}

/**
 * Nearest-rank percentile of a sorted (ascending) list, `p` in `[0, 100]`;
 * `undefined` for an empty list. `percentile([1, 2, 3, 4], 50)` is 2;
 * `p = 0` gives the minimum, `p = 100` the maximum. The scenario runner of
 * `@breakwater/chaos` uses the same function, so its reports and these
 * tables agree.
 */
export { percentile };

/**
 * Linearly interpolated quantile (type 7) of `sortedValues` (ascending), `q` in `[0, 1]`:
 * position `h = (n − 1) × q`, value `x[⌊h⌋] + (h − ⌊h⌋) × (x[⌊h⌋+1] − x[⌊h⌋])`.
 * `undefined` for an empty list.
 */
export function quantile(sortedValues: readonly number[], q: number): number | undefined {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be in [0, 1], got ${q}`);
  const n = sortedValues.length;
  if (n === 0) return undefined;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const a = sortedValues[lo] as number;
  const b = sortedValues[Math.min(lo + 1, n - 1)] as number;
  return a + (h - lo) * (b - a);
}

/** Median (type-7 quantile 0.5) of unsorted `values`; `NaN` for an empty list. */
export function median(values: readonly number[]): number {
  return quantile(sorted(values), 0.5) ?? Number.NaN;
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
  const s = sorted(values);
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

/** Interquartile range (type 7) of unsorted `values`. */
export function iqr(values: readonly number[]): number {
  return spread(values).iqr;
}

/** `median(a) / median(b)`; `NaN` when either is empty or `median(b)` is 0. */
export function ratioOfMedians(a: readonly number[], b: readonly number[]): number {
  const mb = median(b);
  return mb === 0 ? Number.NaN : median(a) / mb;
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

/**
 * Latency summary (nearest-rank p50/p99/p99.9 and max) of one group of samples,
 * sorted on a copy: the scenario runner's own function, so the fault tables and
 * the scenario reports agree.
 */
export { type LatencySummary, summarizeLatency as latencySummary };

/** One variant of an interleaved comparison: runs one round and returns its figure. */
export type RoundFn = (round: number) => Promise<number> | number;

/**
 * Runs `rounds` rounds; in each round every variant runs once, back to back.
 * The order rotates by one each round (A B C, B C A, C A B, …; for two
 * variants A B, B A, A B …) so no variant always pays for the garbage or the
 * cold cache the one before it left. Returns each variant's figures in round
 * order, so series from the same run can be paired with `pairedRatios`.
 */
export async function runInterleaved(
  variants: Readonly<Record<string, RoundFn>>,
  rounds: number,
): Promise<Record<string, number[]>> {
  const names = Object.keys(variants);
  const out: Record<string, number[]> = {};
  for (const name of names) out[name] = [];
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length] as string;
      const run = variants[name] as RoundFn;
      (out[name] as number[]).push(await run(r));
    }
  }
  return out;
}
