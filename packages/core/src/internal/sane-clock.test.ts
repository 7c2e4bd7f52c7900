import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../breaker/circuit-breaker.js';
import { createCache } from '../cache/cache.js';
import { createHealthRegistry } from '../health/registry.js';
import { createAdaptiveThrottle } from '../limit/adaptive-throttle.js';
import { createKeyedLimiter } from '../limit/keyed-limiter.js';
import { createTokenBucket } from '../limit/token-bucket.js';
import { createRetryBudget } from '../retry/budget.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { isSaneReading, MAX_CLOCK_READING_MS, saneClock } from './sane-clock.js';

const HOSTILE = [
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.NaN,
  1e300,
  -1e300,
] as const;

/** A manual clock whose next reading can be replaced once by a hostile value. */
function scriptedClock(start = 1_000_000) {
  let t = start;
  let once: number | undefined;
  const clock = () => {
    if (once !== undefined) {
      const h = once;
      once = undefined;
      return h;
    }
    return t;
  };
  return {
    clock,
    advance: (ms: number) => {
      t += ms;
    },
    hostileOnce: (v: number) => {
      once = v;
    },
  };
}

describe('saneClock', () => {
  it('passes sane readings through and repeats the last sane one for hostile readings', () => {
    const readings = [5, Number.NaN, 7, Number.POSITIVE_INFINITY, 1e300, -1e300, 9];
    let i = 0;
    const c = saneClock(() => readings[i++] as number);
    expect(readings.map(() => c())).toEqual([5, 5, 7, 7, 7, 7, 9]);
  });

  it('accepts the whole Date range and nothing beyond it', () => {
    expect(isSaneReading(MAX_CLOCK_READING_MS)).toBe(true);
    expect(isSaneReading(-MAX_CLOCK_READING_MS)).toBe(true);
    expect(isSaneReading(MAX_CLOCK_READING_MS + 1)).toBe(false);
    expect(new Date(MAX_CLOCK_READING_MS).getTime()).toBe(MAX_CLOCK_READING_MS);
  });
});

describe.each(HOSTILE)('one hostile clock reading (%s) stops nothing for good', (bad) => {
  it('token bucket: refill resumes with the next sane reading', () => {
    const c = scriptedClock();
    const bucket = createTokenBucket({ capacity: 10, refillPerSecond: 10, clock: c.clock });
    expect(bucket.tryAcquire(10).ok).toBe(true);
    c.hostileOnce(bad);
    expect(bucket.tryAcquire().ok).toBe(false);
    c.advance(1000);
    expect(bucket.available()).toBe(10);
    expect(bucket.tryAcquire(10).ok).toBe(true);
    c.advance(500);
    expect(bucket.available()).toBe(5);
  });

  it('keyed limiter: a key created on a hostile reading refills', () => {
    const c = scriptedClock();
    const limiter = createKeyedLimiter({ capacity: 2, refillPerSecond: 1, clock: c.clock });
    c.hostileOnce(bad);
    expect(limiter.tryAcquire('k', 2).ok).toBe(true);
    c.advance(2000);
    expect(limiter.available('k')).toBe(2);
    expect(limiter.tryAcquire('k', 2).ok).toBe(true);
    c.hostileOnce(bad);
    expect(limiter.available('k')).toBe(0);
    c.advance(1000);
    expect(limiter.available('k')).toBe(1);
  });

  it('circuit breaker: opened on a hostile reading, it still half-opens after openDurationMs', () => {
    const c = scriptedClock();
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 1000,
      clock: c.clock,
    });
    c.hostileOnce(bad);
    breaker.onFailure();
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfterMs()).toBe(1000);
    c.advance(1000);
    expect(breaker.tryAcquire()).toBeGreaterThanOrEqual(0);
    expect(breaker.state).toBe('half-open');
  });

  it('retry budget: slices keep expiring after a hostile reading', () => {
    const c = scriptedClock();
    const budget = createRetryBudget({
      ratio: 0,
      minRetriesPerSecond: 1,
      ttlMs: 1000,
      clock: c.clock,
    });
    expect(budget.tryRetry()).toBe(true);
    c.hostileOnce(bad);
    expect(budget.tryRetry()).toBe(false);
    c.advance(2000);
    expect(budget.tryRetry()).toBe(true);
  });

  it('adaptive throttle: the window keeps moving after a hostile reading', () => {
    const c = scriptedClock();
    const throttle = createAdaptiveThrottle({
      windowMs: 1000,
      buckets: 10,
      clock: c.clock,
      random: () => 0,
    });
    for (let i = 0; i < 20; i++) throttle.tryAcquire();
    expect(throttle.probability()).toBeGreaterThan(0);
    c.hostileOnce(bad);
    throttle.tryAcquire();
    c.advance(2000);
    expect(throttle.probability()).toBe(0);
    expect(throttle.stats().requests).toBe(0);
  });

  it('health registry: a circuit opened on a hostile reading closes after reset', () => {
    const c = scriptedClock();
    const health = createHealthRegistry({
      failureThreshold: 1,
      openDurationMs: 1000,
      clock: c.clock,
    });
    health.success('eu');
    expect(health.snapshot().eu?.healthy).toBe(true);
    c.hostileOnce(bad);
    health.failure('eu');
    expect(health.isOpen('eu')).toBe(true);
    c.advance(1000);
    expect(health.isOpen('eu')).toBe(false);
  });

  it('cache: an entry stored on a hostile reading still expires', () => {
    const c = scriptedClock();
    const cache = createCache<string, number>({ maxSize: 10, ttlMs: 1000, clock: c.clock });
    cache.set('warm', 0);
    c.hostileOnce(bad);
    cache.set('a', 1);
    expect(cache.get('a')).toMatchObject({ hit: true, status: 'fresh' });
    c.advance(1000);
    expect(cache.get('a').hit).toBe(false);
  });
});

describe('token bucket under random hostile clocks (property)', () => {
  const reading = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.integer({ min: 0, max: 5000 }).map((d) => ({ kind: 'step' as const, d })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: -5000, max: 0 }).map((d) => ({ kind: 'step' as const, d })),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(fc.constantFrom(...HOSTILE), fc.double({ noNaN: false }))
        .map((v) => ({ kind: 'hostile' as const, v })),
    },
  );
  const op = fc.record({ r: reading, n: fc.integer({ min: 0, max: 12 }) });

  it('tokens never exceed capacity nor become NaN, and a full refill always follows enough sane time', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 60 }),
        fc.integer({ min: 1, max: 10 }),
        (ops, capacity) => {
          let t = 1_000_000;
          let next: number | undefined;
          const clock = () => (next === undefined ? t : next);
          const bucket = createTokenBucket({ capacity, refillPerSecond: 1, clock });
          const keyed = createKeyedLimiter({ capacity, refillPerSecond: 1, maxKeys: 3, clock });
          for (const { r, n } of ops) {
            if (r.kind === 'step') {
              t += r.d;
              next = undefined;
            } else {
              next = r.v;
            }
            bucket.tryAcquire(n);
            keyed.tryAcquire(`k${n % 4}`, n);
            for (const avail of [bucket.available(), keyed.available(`k${n % 4}`)]) {
              expect(Number.isNaN(avail)).toBe(false);
              expect(avail).toBeGreaterThanOrEqual(0);
              expect(avail).toBeLessThanOrEqual(capacity);
            }
          }
          // Sane time again: enough of it refills every bucket to capacity.
          next = undefined;
          bucket.available();
          keyed.available('k0');
          t += capacity * 1000;
          expect(bucket.available()).toBe(capacity);
          expect(keyed.available('k0')).toBe(capacity);
          expect(bucket.tryAcquire(capacity).ok).toBe(true);
        },
      ),
      { seed: 42, numRuns: 500 },
    );
  });
});
