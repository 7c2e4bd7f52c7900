import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  const exp = { exponential: true, delayMs: 100, jitter: 0, maxDelayMs: Number.POSITIVE_INFINITY };

  it('exponential doubles from delay; maxDelay caps it; fixed stays', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(exp, n, () => 0))).toEqual([100, 200, 400, 800]);
    expect(backoffDelay({ ...exp, maxDelayMs: 300 }, 4, () => 0)).toBe(300);
    expect(backoffDelay({ ...exp, exponential: false }, 9, () => 0)).toBe(100);
  });

  it('jitter reduces within [delay × (1 − jitter), delay]', () => {
    const j = { ...exp, jitter: 1 };
    expect(backoffDelay(j, 1, () => 0)).toBe(100);
    expect(backoffDelay(j, 1, () => 0.999)).toBeCloseTo(0.1);
  });

  it('stays finite and non-negative for any attempt up to 10^6', () => {
    for (const n of [1, 1023, 1024, 1025, 1_000_000]) {
      const d = backoffDelay({ ...exp, jitter: 0.5 }, n, () => 0.5);
      expect(Number.isFinite(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(0);
    }
  });
});
