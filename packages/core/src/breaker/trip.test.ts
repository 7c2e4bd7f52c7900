import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import type { CircuitStateChange } from './types.js';

describe('trip(): open now for a given time (a trip decided elsewhere)', () => {
  it('opens a closed circuit for the given time, then half-opens and probes as usual', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ openDurationMs: 30_000, clock });
    const changes: CircuitStateChange[] = [];
    breaker.onStateChange((e) => changes.push(e));
    breaker.trip(500);
    expect(breaker.state).toBe('open');
    expect(breaker.tryAcquire()).toBe(-1);
    expect(breaker.retryAfterMs()).toBe(500);
    clock.advance(500);
    const probe = breaker.tryAcquire();
    expect(breaker.state).toBe('half-open');
    expect(probe).toBeGreaterThanOrEqual(0);
    breaker.release(probe, { outcome: 'success' });
    expect(breaker.state).toBe('closed');
    expect(changes.map((e) => e.to)).toEqual(['open', 'half-open', 'closed']);
    expect(changes[0]?.openDurationMs).toBe(500);
  });

  it('defaults to the open duration in force', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ openDurationMs: 2000, clock });
    breaker.trip();
    expect(breaker.retryAfterMs()).toBe(2000);
  });

  it('keeps an open period that ends later, and an isolated circuit isolated', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ openDurationMs: 1000, clock });
    breaker.trip(1000);
    breaker.trip(100);
    expect(breaker.retryAfterMs()).toBe(1000);
    breaker.isolate();
    breaker.trip(10);
    clock.advance(5000);
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfterMs()).toBe(Number.POSITIVE_INFINITY);
  });

  it('refuses a bad duration with a RangeError naming it, leaving the circuit closed', () => {
    const breaker = createCircuitBreaker({ clock: createManualClock(0) });
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => breaker.trip(bad)).toThrow(RangeError);
      expect(() => breaker.trip(bad)).toThrow(/openDurationMs/);
    }
    expect(breaker.state).toBe('closed');
  });

  it('never ends an open period earlier than trip asked (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 1000 })), {
          minLength: 1,
          maxLength: 20,
        }),
        (trips) => {
          const clock = createManualClock(0);
          const breaker = createCircuitBreaker({ openDurationMs: 1000, clock });
          let until = 0;
          for (const [ms, wait] of trips) {
            breaker.trip(ms);
            until = Math.max(until, clock() + ms);
            clock.advance(wait);
            if (clock() < until) expect(breaker.tryAcquire()).toBe(-1);
          }
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});
