import { describe, expect, it } from 'vitest';
import { AllocationMeter } from './allocation.js';

describe('AllocationMeter', () => {
  it('counts what a loop allocates, through the collections it causes', () => {
    const meter = new AllocationMeter();
    // 200,000 arrays of 8 numbers (each well over 64 B), none kept: several scavenges run.
    // Each array escapes into `held` (the last one kept), so the compiler cannot elide it.
    const held: number[][] = [];
    meter.start();
    for (let i = 0; i < 200_000; i++) held[0] = [i, i, i, i, i, i, i, i];
    const bytes = meter.stop();
    expect(held[0]?.[0]).toBe(199_999);
    expect(bytes / 200_000).toBeGreaterThanOrEqual(64);
    expect(bytes / 200_000).toBeLessThan(1_000);
  });

  it('a loop that allocates nothing counts (almost) nothing', () => {
    const meter = new AllocationMeter();
    meter.start();
    // Small integers only: a sum past 2^30 would be a heap number, allocated per step until optimized.
    let sink = 0;
    for (let i = 0; i < 1_000_000; i++) sink = (sink + i) & 0xffff;
    const bytes = meter.stop();
    expect(sink).toBeGreaterThanOrEqual(0);
    expect(bytes / 1_000_000).toBeLessThan(1);
  });
});
