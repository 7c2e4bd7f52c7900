import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { createDeadline, earliestDeadline } from './deadline.js';

describe('Deadline', () => {
  it('counts down on its clock and expires', () => {
    const clock = createManualClock(10_000);
    const d = createDeadline({ timeoutMs: 500, clock });
    expect(d.at).toBe(10_500);
    expect(d.remainingMs()).toBe(500);
    expect(d.expired).toBe(false);
    clock.advance(499);
    expect(d.remainingMs()).toBe(1);
    clock.advance(50);
    expect(d.remainingMs()).toBe(0);
    expect(d.expired).toBe(true);
    expect(d.toDate().getTime()).toBe(10_500);
  });

  it('can be created at an absolute time, from a bare number, or without a limit', () => {
    const clock = createManualClock(0);
    expect(createDeadline({ at: 42, clock }).remainingMs()).toBe(42);
    expect(createDeadline(1000).remainingMs()).toBeGreaterThan(990);
    const none = createDeadline({ timeoutMs: Number.POSITIVE_INFINITY, clock });
    expect(none.remainingMs()).toBe(Number.POSITIVE_INFINITY);
    expect(none.expired).toBe(false);
  });

  it('nested deadlines take the minimum', () => {
    const clock = createManualClock(0);
    const outer = createDeadline({ timeoutMs: 1000, clock });
    const inner = createDeadline({ timeoutMs: 300, clock });
    expect(outer.min(inner)).toBe(inner);
    expect(inner.min(outer)).toBe(inner);
    expect(outer.min(undefined)).toBe(outer);
    expect(earliestDeadline(undefined, outer, inner)).toBe(inner);
    expect(earliestDeadline()).toBeUndefined();
  });

  it('rejects invalid options naming them', () => {
    expect(() => createDeadline({})).toThrow(/exactly one of timeoutMs and at/);
    expect(() => createDeadline({ timeoutMs: 1, at: 2 })).toThrow(/exactly one/);
    expect(() => createDeadline({ timeoutMs: -1 })).toThrow(/timeoutMs must be >= 0/);
    expect(() => createDeadline(Number.NaN)).toThrow(/timeoutMs must be a number/);
    expect(() => createDeadline({ at: 1, clock: 'now' as never })).toThrow(
      /clock must be a function/,
    );
  });
});
