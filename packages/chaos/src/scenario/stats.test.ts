import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  median,
  pairedDifferences,
  pairedRatios,
  percentile,
  quantile,
  ratio,
  round,
  sortedAscending,
  spread,
  summarizeLatency,
} from './stats.js';

describe('percentile (nearest rank)', () => {
  it('matches hand-computed values', () => {
    const xs = [15, 20, 35, 40, 50];
    expect(percentile(xs, 5)).toBe(15);
    expect(percentile(xs, 30)).toBe(20);
    expect(percentile(xs, 40)).toBe(20);
    expect(percentile(xs, 50)).toBe(35);
    expect(percentile(xs, 100)).toBe(50);
    expect(percentile(xs, 0)).toBe(15);
  });

  it('p99 of 1..1000 is 990 and p99.9 is 999', () => {
    const xs = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(percentile(xs, 99)).toBe(990);
    expect(percentile(xs, 99.9)).toBe(999);
  });

  it('is undefined for no samples and rejects p outside [0, 100]', () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });

  it('is a member of the list, monotone in p, and has at least p% at or below it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 200 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (raw, a, b) => {
          const xs = [...raw].sort((x, y) => x - y);
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const v = percentile(xs, lo) as number;
          expect(xs).toContain(v);
          expect(v).toBeLessThanOrEqual(percentile(xs, hi) as number);
          expect(xs.filter((x) => x <= v).length / xs.length).toBeGreaterThanOrEqual(lo / 100);
        },
      ),
    );
  });
});

describe('summarizeLatency', () => {
  it('sorts numerically (not as strings) and reports the quantiles', () => {
    const s = summarizeLatency([100, 9, 20, 3]);
    expect(s).toEqual({ count: 4, p50: 9, p99: 100, p999: 100, max: 100 });
    expect(summarizeLatency([])).toEqual({
      count: 0,
      p50: undefined,
      p99: undefined,
      p999: undefined,
      max: undefined,
    });
  });
});

describe('ratio and round', () => {
  it('guards a zero denominator and rounds', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(1, 0)).toBeUndefined();
    expect(round(1.25, 1)).toBe(1.3);
    expect(round(2 / 3, 2)).toBe(0.67);
    expect(round(undefined)).toBeUndefined();
  });
});

// Fixed data that pins the definitions the benchmark tables print (they were bench/harness/stats.ts).
describe('quantile (type 7), median and spread', () => {
  it('interpolates between closest ranks', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantile([10, 20], 1)).toBe(20);
    expect(quantile([], 0.5)).toBeUndefined();
    expect(() => quantile([1], 1.5)).toThrow(RangeError);
  });

  it('median sorts numerically, not as strings', () => {
    expect(median([10, 9, 100])).toBe(10);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(Number.isNaN(median([]))).toBe(true);
    expect(sortedAscending([10, 9, 100])).toEqual([9, 10, 100]);
  });

  it('spread gives the five numbers and the IQR', () => {
    expect(spread([5, 1, 4, 2, 3])).toEqual({
      n: 5,
      min: 1,
      q1: 2,
      median: 3,
      q3: 4,
      max: 5,
      iqr: 2,
    });
    expect(spread([1, 2, 3, 4, 5, 6, 7, 8, 9]).iqr).toBe(4);
    expect(spread([]).n).toBe(0);
  });
});

describe('paired series', () => {
  it('pairedRatios divides round by round and checks lengths', () => {
    expect(pairedRatios([2, 9], [1, 3])).toEqual([2, 3]);
    expect(() => pairedRatios([1], [1, 2])).toThrow(RangeError);
  });

  it('pairedDifferences subtracts round by round (not medians) and checks lengths', () => {
    // Medians 5 and 4 would say +1; the rounds say +3 and −1 (median 1) — and −1 is kept.
    expect(pairedDifferences([8, 2], [5, 3])).toEqual([3, -1]);
    expect(() => pairedDifferences([1], [1, 2])).toThrow(RangeError);
  });
});

describe('summarizeLatency on fixed data', () => {
  it('reports nearest-rank p50/p99/p99.9 and max of unsorted samples', () => {
    const xs = Array.from({ length: 2000 }, (_, i) => 2000 - i);
    expect(summarizeLatency(xs)).toEqual({
      count: 2000,
      p50: 1000,
      p99: 1980,
      p999: 1998,
      max: 2000,
    });
    expect(summarizeLatency([]).p99).toBeUndefined();
  });
});
