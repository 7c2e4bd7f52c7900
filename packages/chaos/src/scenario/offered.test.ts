import { describe, expect, it } from 'vitest';
import { goodputPerSecond, type OfferedCall } from './offered.js';

describe('goodputPerSecond', () => {
  it('counts the successes of the calls started in the window, per second', () => {
    const call = (startedAtMs: number, ok: boolean): OfferedCall => ({
      startedAtMs,
      ok,
      error: ok ? undefined : new Error('x'),
    });
    const calls = [call(0, true), call(500, true), call(1_000, true), call(1_200, false)];
    calls.push(call(1_900, true), call(2_000, true));
    // In [1 000, 2 000): two successes, one failure, over one second.
    expect(goodputPerSecond(calls, { fromMs: 1_000, toMs: 2_000 })).toBe(2);
    expect(goodputPerSecond(calls, { fromMs: 0, toMs: 500 })).toBe(2);
  });
});
