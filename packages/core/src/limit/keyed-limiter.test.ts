import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { createKeyedLimiter } from './keyed-limiter.js';

function setup(maxKeys = 3, capacity = 2, refillPerSecond = 1) {
  const clock = createManualClock(0);
  const limiter = createKeyedLimiter({ capacity, refillPerSecond, maxKeys, clock });
  return { clock, limiter };
}

describe('createKeyedLimiter', () => {
  it('gives every key a private bucket that starts full', () => {
    const { clock, limiter } = setup(10, 2, 1);
    expect(limiter.tryAcquire('a', 2)).toEqual({ ok: true, value: 0 });
    const refused = limiter.tryAcquire('a');
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.retryAfterMs).toBe(1000);
    expect(limiter.tryAcquire('b')).toEqual({ ok: true, value: 1 });
    clock.advance(1000);
    expect(limiter.available('a')).toBe(1);
    expect(limiter.available('b')).toBe(2);
    const tooMany = limiter.tryAcquire('c', 3);
    expect(!tooMany.ok && tooMany.error.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('evicts the least recently used key and counts it', () => {
    const { limiter } = setup(3);
    limiter.tryAcquire('a', 2);
    limiter.tryAcquire('b', 2);
    limiter.tryAcquire('c', 2);
    limiter.tryAcquire('a', 0); // a is now the most recent; b is the oldest
    limiter.tryAcquire('d');
    expect(limiter.stats()).toEqual({ size: 3, evictions: 1, clockRegressions: 0 });
    // b was forgotten and comes back full; a and c kept their empty buckets.
    expect(limiter.available('a')).toBe(0);
    expect(limiter.available('c')).toBe(0);
    expect(limiter.available('d')).toBe(1);
    expect(limiter.stats().evictions).toBe(1);
    expect(limiter.available('b')).toBe(2);
    expect(limiter.stats().evictions).toBe(2); // adding b evicted a (the oldest touch)
    expect(limiter.available('c')).toBe(0);
  });

  it('available creates or promotes a key', () => {
    const { limiter } = setup(2);
    limiter.tryAcquire('a', 2);
    limiter.tryAcquire('b', 2);
    expect(limiter.available('a')).toBe(0); // promotes a over b
    limiter.available('c'); // creates c, evicting b
    expect(limiter.stats()).toMatchObject({ size: 2, evictions: 1 });
    expect(limiter.available('a')).toBe(0);
    expect(limiter.available('b')).toBe(2);
  });

  it('property: size never exceeds maxKeys; evictions account for every forgotten key', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }),
        (maxKeys, keys) => {
          const { limiter } = setup(maxKeys);
          const lru: string[] = [];
          let evicted = 0;
          for (const k of keys) {
            const key = `k${k}`;
            limiter.tryAcquire(key);
            const i = lru.indexOf(key);
            if (i >= 0) lru.splice(i, 1);
            else if (lru.length === maxKeys) {
              lru.shift();
              evicted++;
            }
            lru.push(key);
            expect(limiter.stats().size).toBeLessThanOrEqual(maxKeys);
          }
          expect(limiter.stats()).toMatchObject({ size: lru.length, evictions: evicted });
        },
      ),
    );
  });

  it('a clock that moves backwards is counted and refunds nothing', () => {
    const { clock, limiter } = setup(10, 5, 1);
    limiter.tryAcquire('a', 5);
    clock.advance(3_000);
    expect(limiter.available('a')).toBe(3);
    limiter.tryAcquire('a', 3);
    clock.set(-10_000); // an NTP step back
    expect(limiter.available('a')).toBe(0);
    expect(limiter.tryAcquire('a').ok).toBe(false);
    expect(limiter.stats().clockRegressions).toBe(1);
    clock.advance(1_000); // refill resumes at the normal rate, from where it was
    expect(limiter.available('a')).toBe(1);
    expect(limiter.stats().clockRegressions).toBe(1);
  });

  it('validates its options, naming them', () => {
    const make = (o: object) => () => createKeyedLimiter(o as never);
    expect(make({ capacity: 1, refillPerSecond: 1, maxKeys: 0 })).toThrow(/maxKeys.*0/);
    expect(make({ capacity: 1, refillPerSecond: 1, maxKeys: 1.5 })).toThrow(RangeError);
    expect(make({ capacity: Number.NaN, refillPerSecond: 1 })).toThrow(/capacity/);
    expect(make({ capacity: 1, refillPerSecond: 0 })).toThrow(/refillPerSecond/);
    expect(make({ capacity: 1, refillPerSecond: 1, clock: {} })).toThrow(/clock/);
    expect(() => setup().limiter.tryAcquire('a', -2)).toThrow(/n must/);
  });
});
