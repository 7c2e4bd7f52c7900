import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { AttemptTimeout } from './attempt-timeout.js';

describe('AttemptTimeout: the derived attempt deadline', () => {
  it('left out: half the time left while a retry may follow, then 3 × the scope p99 (>= 100 ms); the last attempt gets all', () => {
    const clock = createManualClock(0);
    const t = new AttemptTimeout(10_000, true);
    // No latency seen yet: half of the 1 s left, leaving the rest for the retry.
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(500);
    for (let i = 0; i < 40; i++) {
      clock.advance(10);
      t.observe('m', 20, clock.now);
    }
    // p99 20 ms: 3 × 20 = 60, raised to the 100 ms floor.
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(100);
    for (let i = 0; i < 40; i++) t.observe('m', 80, clock.now);
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(240);
    // Another scope has its own latency; no retry can follow: the whole time left.
    expect(t.forAttempt('other', 1_000, true, clock.now)).toBe(500);
    expect(t.forAttempt('m', 1_000, false, clock.now)).toBe(1_000);
    // No call deadline: the standard attempt timeout, as before.
    expect(t.forAttempt('m', Number.POSITIVE_INFINITY, true, clock.now)).toBe(10_000);
    // Latency older than the 10 s window stops shaping it.
    clock.advance(20_000);
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(500);
  });

  it('given explicitly, attemptTimeoutMs means exactly that, cut only by the time left', () => {
    const t = new AttemptTimeout(800, false);
    for (let i = 0; i < 40; i++) t.observe('m', 5, 0);
    expect(t.forAttempt('m', 1_000, true, 0)).toBe(800);
    expect(t.forAttempt('m', 300, true, 0)).toBe(300);
    const off = new AttemptTimeout(Number.POSITIVE_INFINITY, false);
    // Off (`false`): nothing shorter than the call's own deadline.
    expect(off.forAttempt('m', 1_000, true, 0)).toBe(1_000);
    expect(off.forAttempt('m', Number.POSITIVE_INFINITY, true, 0)).toBe(Number.POSITIVE_INFINITY);
  });
});
