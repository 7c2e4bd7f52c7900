import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LatencySample } from './latency-sample.js';

describe('LatencySample', () => {
  it('reports the nearest-rank percentile once it has minSamples, and not before', () => {
    const sample = new LatencySample(90, Number.POSITIVE_INFINITY, 512, 1, 20);
    for (let i = 1; i < 20; i++) sample.record(i, 0);
    expect(sample.value(0)).toBeUndefined();
    sample.record(20, 0);
    expect(sample.value(0)).toBe(18);
  });

  it('drops latencies older than the window, on record and on read', () => {
    const sample = new LatencySample(50, 1000, 512, 1, 3);
    for (const ms of [500, 500, 500]) sample.record(ms, 0);
    expect(sample.value(999)).toBe(500);
    // Reads re-check at least every quarter window: by 1249 ms the burst has aged out.
    expect(sample.value(1249)).toBeUndefined();
    for (const ms of [10, 20, 30]) sample.record(ms, 1500);
    expect(sample.value(1500)).toBe(20);
  });

  it('with an unbounded window keeps exactly the last `size` latencies', () => {
    const sample = new LatencySample(100, Number.POSITIVE_INFINITY, 4, 1, 1);
    for (const ms of [90, 1, 2, 3, 4]) sample.record(ms, 0);
    // 90 fell out of the 4-slot ring.
    expect(sample.value(1e9)).toBe(4);
  });

  it('always reports a latency recorded within the window, give or take a quarter window (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 50 })), {
          minLength: 1,
          maxLength: 200,
        }),
        fc.integer({ min: 1, max: 99 }),
        (steps, percentile) => {
          const sample = new LatencySample(percentile, 200, 64, 4, 1);
          let now = 0;
          const seen: { ms: number; at: number }[] = [];
          for (const [ms, dt] of steps) {
            now += dt;
            sample.record(ms, now);
            seen.push({ ms, at: now });
            const value = sample.value(now);
            // Recomputed every 4 records, or on read a quarter window (50 ms) after the last time.
            const live = seen.slice(-(64 + 4)).filter((s) => s.at >= now - 250);
            if (value !== undefined) expect(live.map((s) => s.ms)).toContain(value);
          }
        },
      ),
    );
  });
});
