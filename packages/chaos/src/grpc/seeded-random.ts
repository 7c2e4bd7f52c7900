import type { RandomSource } from '@breakwater/core';

/**
 * A deterministic {@link RandomSource} (mulberry32) for reproducible fault
 * schedules: the same seed gives the same sequence of numbers in `[0, 1)`.
 */
export function seededRandom(seed: number): RandomSource {
  if (typeof seed !== 'number' || !Number.isFinite(seed)) {
    throw new TypeError(`seededRandom(seed) must be a finite number, got ${String(seed)}`);
  }
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
