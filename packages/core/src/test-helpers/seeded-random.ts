import type { RandomSource } from '../time/random.js';

/**
 * A deterministic {@link RandomSource} (mulberry32) for simulations and
 * property-style tests: the same seed gives the same sequence in `[0, 1)`.
 * @internal
 */
export function seededRandom(seed: number): RandomSource {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
