import { describe, expect, it } from 'vitest';
import {
  attemptsPerCall,
  countBetween,
  firstSuccessAfter,
  peakRate,
  successBetween,
} from './recovery.js';

const call = (startedAt: number, latencyMs: number, ok: boolean, callId = `c-${startedAt}`) => ({
  startedAt,
  latencyMs,
  ok,
  callId,
});

describe('recovery figures', () => {
  it('first success after recovery: the earliest successful finish at or after it, whenever the call started', () => {
    const calls = [
      call(900, 50, true),
      call(950, 100, true),
      call(1010, 5, false),
      call(1020, 40, true),
    ];
    // 900+50 finished before recovery at 1000; 950+100 = 1050 finished after it, before 1020+40.
    expect(firstSuccessAfter(calls, 1000)).toBe(50);
    expect(firstSuccessAfter([call(1000, 1, false)], 1000)).toBeUndefined();
  });

  it('success between two offsets counts the calls started in the window', () => {
    const calls = [
      call(999, 1, false),
      call(1000, 1, false),
      call(1400, 1, true),
      call(1500, 1, true),
    ];
    expect(successBetween(calls, 1000, 0, 500)).toBe(0.5);
    expect(successBetween(calls, 1000, 500, 2000)).toBe(1);
    expect(successBetween(calls, 1000, 5000, 6000)).toBeUndefined();
  });

  it('peak rate: the busiest 100 ms bin of the window, per second, ignoring arrivals outside it', () => {
    const arrivals = [999, 1000, 1001, 1099, 1100, 1950, 1999, 2000, 2001];
    // Bin [1000, 1100) holds 3 arrivals → 30/s; 999 and 2000+ are outside the window.
    expect(peakRate(arrivals, 1000)).toBe(30);
    expect(peakRate([], 1000)).toBe(0);
  });

  it('count between: the times in [from, to), the end excluded', () => {
    expect(countBetween([999, 1000, 1500, 1999.9, 2000], 1000, 2000)).toBe(3);
    expect(countBetween([], 0, 10)).toBe(0);
  });

  it('attempts per call: server attempts of the calls started in the window over their number', () => {
    const calls = [call(10, 1, false, 'a'), call(20, 1, false, 'b'), call(30, 1, false, 'c')];
    const attempts = new Map([
      ['a', 3],
      ['b', 1],
      ['c', 5],
    ]);
    // 'b' has no server attempts counted here when it was refused: it still counts as a call.
    expect(attemptsPerCall(calls, attempts, 10, 30)).toBe(2);
    expect(attemptsPerCall(calls, new Map(), 0, 100)).toBe(0);
    expect(attemptsPerCall(calls, attempts, 100, 200)).toBeUndefined();
  });
});
