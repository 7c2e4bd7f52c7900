import { describe, expect, it } from 'vitest';
import {
  iqr,
  latencySummary,
  median,
  pairedDifferences,
  pairedRatios,
  percentile,
  quantile,
  ratioOfMedians,
  runInterleaved,
  sorted,
  spread,
} from './stats.js';

describe('percentile (nearest rank)', () => {
  it('picks the smallest sample with at least p% at or below it', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 51)).toBe(3);
    expect(percentile([1, 2, 3, 4], 0)).toBe(1);
    expect(percentile([1, 2, 3, 4], 100)).toBe(4);
    expect(percentile([7], 99)).toBe(7);
  });

  it('p99 and p99.9 of 1..1000 are 990 and 999 (no float bump)', () => {
    const xs = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(percentile(xs, 99)).toBe(990);
    expect(percentile(xs, 99.9)).toBe(999);
  });

  it('is undefined for no samples and rejects p outside [0, 100]', () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('quantile (type 7) and median', () => {
  it('interpolates between closest ranks', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantile([10, 20], 1)).toBe(20);
    expect(quantile([], 0.5)).toBeUndefined();
  });

  it('median sorts numerically, not as strings', () => {
    expect(median([10, 9, 100])).toBe(10);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(Number.isNaN(median([]))).toBe(true);
    expect(sorted([10, 9, 100])).toEqual([9, 10, 100]);
  });

  it('spread gives the five numbers and the IQR', () => {
    const s = spread([5, 1, 4, 2, 3]);
    expect(s).toEqual({ n: 5, min: 1, q1: 2, median: 3, q3: 4, max: 5, iqr: 2 });
    expect(iqr([1, 2, 3, 4, 5, 6, 7, 8, 9])).toBe(4);
  });
});

describe('ratios', () => {
  it('ratioOfMedians divides the medians', () => {
    expect(ratioOfMedians([2, 4, 6], [1, 2, 100])).toBe(2);
    expect(Number.isNaN(ratioOfMedians([1], [0]))).toBe(true);
  });

  it('pairedRatios divides round by round and checks lengths', () => {
    expect(pairedRatios([2, 9], [1, 3])).toEqual([2, 3]);
    expect(() => pairedRatios([1], [1, 2])).toThrow(RangeError);
  });

  it('pairedDifferences subtracts round by round (not medians) and checks lengths', () => {
    // Medians 5 and 4 would say +1; the rounds say +3 and −1 (median 1) — and -1 is kept.
    expect(pairedDifferences([8, 2], [5, 3])).toEqual([3, -1]);
    expect(() => pairedDifferences([1], [1, 2])).toThrow(RangeError);
  });
});

describe('latencySummary', () => {
  it('reports nearest-rank p50/p99/p99.9 and max of unsorted samples', () => {
    const xs = Array.from({ length: 2000 }, (_, i) => 2000 - i);
    expect(latencySummary(xs)).toEqual({
      count: 2000,
      p50: 1000,
      p99: 1980,
      p999: 1998,
      max: 2000,
    });
    expect(latencySummary([]).p99).toBeUndefined();
  });
});

describe('runInterleaved', () => {
  it('runs every variant once per round, rotating the order', async () => {
    const order: string[] = [];
    const make = (name: string, value: number) => (round: number) => {
      order.push(`${name}${round}`);
      return value + round;
    };
    const out = await runInterleaved({ a: make('a', 10), b: make('b', 20), c: make('c', 30) }, 3);
    expect(order).toEqual(['a0', 'b0', 'c0', 'b1', 'c1', 'a1', 'c2', 'a2', 'b2']);
    expect(out).toEqual({ a: [10, 11, 12], b: [20, 21, 22], c: [30, 31, 32] });
  });

  it('alternates two variants A B, B A', async () => {
    const order: string[] = [];
    const push = (name: string, value: number) => async () => {
      order.push(name);
      return value;
    };
    await runInterleaved({ a: push('a', 1), b: push('b', 2) }, 4);
    expect(order.join('')).toBe('abbaabba');
  });
});
