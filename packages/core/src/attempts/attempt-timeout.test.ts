import { describe, expect, it } from 'vitest';
import { createRetryBudget } from '../retry/budget.js';
import { createManualClock } from '../time/manual-clock.js';
import { AttemptTimeout, ScopeLatencies } from './attempt-timeout.js';

describe('AttemptTimeout: the derived attempt deadline', () => {
  it('left out: uncut while nothing is known, then 3 × the scope p99 (>= 100 ms) while a retry may follow; the last attempt gets all', () => {
    const clock = createManualClock(0);
    const t = new AttemptTimeout(10_000, true);
    // No latency seen yet: no evidence of a hang, so the whole 1 s left.
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(1_000);
    for (let i = 0; i < 40; i++) {
      clock.advance(10);
      t.observe('m', 20, clock.now);
    }
    // p99 20 ms: 3 × 20 = 60, raised to the 100 ms floor.
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(100);
    for (let i = 0; i < 40; i++) t.observe('m', 80, clock.now);
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(240);
    // Never more than the time left; no retry can follow: the whole time left.
    expect(t.forAttempt('m', 200, true, clock.now)).toBe(200);
    expect(t.forAttempt('m', 1_000, false, clock.now)).toBe(1_000);
    // No call deadline: the standard attempt timeout, as before.
    expect(t.forAttempt('m', Number.POSITIVE_INFINITY, true, clock.now)).toBe(10_000);
    // Latency older than the 10 s window stops shaping it.
    clock.advance(20_000);
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(1_000);
  });

  it('a healthy 600 ms upstream under a 1 s deadline: never cut, learned or not', () => {
    const t = new AttemptTimeout(10_000, true);
    expect(t.forAttempt('m', 1_000, true, 0)).toBe(1_000);
    for (let i = 0; i < 40; i++) t.observe('m', 600, i);
    expect(t.forAttempt('m', 1_000, true, 40)).toBe(1_000);
  });

  it("a scope with no latency of its own is judged by its siblings' (a provider black-holed from the start)", () => {
    const shared = new ScopeLatencies();
    const a = new AttemptTimeout(Number.POSITIVE_INFINITY, true).sharing(shared);
    const hole = new AttemptTimeout(Number.POSITIVE_INFINITY, true).sharing(shared);
    for (let i = 0; i < 30; i++) a.observe('a', 50, i);
    // It never answered: its siblings' p99 (50 ms) rules, and its own once it has 20.
    expect(hole.forAttempt('hole', 1_000, true, 30)).toBe(150);
    for (let i = 0; i < 20; i++) hole.observe('hole', 200, 30);
    expect(hole.forAttempt('hole', 1_000, true, 30)).toBe(600);
    expect(a.forAttempt('a', 1_000, true, 30)).toBe(150);
    // Unshared, nothing is known of it: not cut.
    expect(
      new AttemptTimeout(Number.POSITIVE_INFINITY, true).forAttempt('x', 1_000, true, 30),
    ).toBe(1_000);
  });

  it('cuts nothing while the retry budget would refuse the retry a cut needs (a burst that slows every call at once)', () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0.1, ttlMs: 10_000, clock });
    const t = new AttemptTimeout(10_000, true, undefined, budget);
    for (let i = 0; i < 20; i++) t.observe('m', 5, clock.now);
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(100);
    expect(budget.tryRetry()).toBe(true); // the one retry of the window is spent
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(1_000);
    // The router's providers share the rule through `sharing`.
    const shared = new ScopeLatencies();
    for (let i = 0; i < 20; i++) shared.record('m', 5, clock.now);
    expect(t.sharing(shared).forAttempt('m', 1_000, true, clock.now)).toBe(1_000);
    clock.advance(10_000); // the withdrawal has expired
    for (let i = 0; i < 20; i++) t.observe('m', 5, clock.now);
    expect(t.forAttempt('m', 1_000, true, clock.now)).toBe(100);
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
