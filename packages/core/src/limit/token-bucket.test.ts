import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOperationAbortedError, isRateLimitError } from '../errors/index.js';
import { createManualClock } from '../time/manual-clock.js';
import { createTokenBucket } from './token-bucket.js';

function setup(capacity = 10, refillPerSecond = 10) {
  const clock = createManualClock(1_000);
  const bucket = createTokenBucket({ capacity, refillPerSecond, clock, sleep: clock.sleep });
  return { clock, bucket };
}

const retryAfter = (r: ReturnType<ReturnType<typeof setup>['bucket']['tryAcquire']>) => {
  if (r.ok) throw new Error(`expected a refusal, got ok(${r.value})`);
  expect(isRateLimitError(r.error)).toBe(true);
  return r.error.retryAfterMs;
};

describe('createTokenBucket', () => {
  it('starts full and reports the whole tokens left', () => {
    const { bucket } = setup(3, 1);
    expect(bucket.available()).toBe(3);
    expect(bucket.tryAcquire()).toEqual({ ok: true, value: 2 });
    expect(bucket.tryAcquire(2)).toEqual({ ok: true, value: 0 });
    expect(bucket.tryAcquire().ok).toBe(false);
    expect(bucket.available()).toBe(0);
  });

  it('refills lazily from the clock, capped at capacity, without timers', () => {
    const { clock, bucket } = setup(10, 10);
    expect(bucket.tryAcquire(10).ok).toBe(true);
    expect(clock.pending).toBe(0);
    clock.advance(99);
    expect(bucket.available()).toBe(0);
    clock.advance(1);
    expect(bucket.available()).toBe(1);
    clock.advance(450);
    expect(bucket.available()).toBe(5);
    clock.advance(60_000);
    expect(bucket.available()).toBe(10);
  });

  it('a refusal takes nothing and says exactly when to retry', () => {
    const { clock, bucket } = setup(10, 3);
    bucket.tryAcquire(10);
    expect(retryAfter(bucket.tryAcquire())).toBe(334); // 1 token at 3/s = 333.3 ms
    clock.advance(333);
    expect(retryAfter(bucket.tryAcquire())).toBe(1);
    clock.advance(1);
    expect(bucket.tryAcquire()).toEqual({ ok: true, value: 0 });
    // 334 ms earned 1.002 tokens, so 0.002 carry over: 3.998 more at 3/s.
    expect(retryAfter(bucket.tryAcquire(4))).toBe(1333);
  });

  it('property: waiting retryAfterMs suffices and one ms less does not', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 1, max: 1000 }),
        (capacity, rate, elapsed, want) => {
          const { clock, bucket } = setup(capacity, rate);
          const n = Math.min(want, capacity);
          bucket.tryAcquire(capacity);
          clock.advance(elapsed);
          const r = bucket.tryAcquire(n);
          if (r.ok) return;
          const wait = r.error.retryAfterMs;
          expect(wait).toBeGreaterThan(0);
          clock.advance(wait - 1);
          expect(bucket.tryAcquire(n).ok).toBe(false);
          clock.advance(1);
          expect(bucket.tryAcquire(n).ok).toBe(true);
        },
      ),
    );
  });

  it('a request above capacity can never succeed: retryAfterMs is Infinity', () => {
    const { bucket } = setup(5, 1);
    expect(retryAfter(bucket.tryAcquire(6))).toBe(Number.POSITIVE_INFINITY);
    expect(bucket.available()).toBe(5);
  });

  it('rejects a bad token count naming n', () => {
    const { bucket } = setup();
    expect(() => bucket.tryAcquire(-1)).toThrow(/n must .* got -1/);
    expect(() => bucket.tryAcquire(Number.NaN)).toThrow(RangeError);
    expect(bucket.tryAcquire(0)).toEqual({ ok: true, value: 10 });
  });

  it('acquire waits through the injected sleep for exactly the deficit', async () => {
    const { clock, bucket } = setup(4, 2);
    await bucket.acquire(4);
    let done = false;
    const p = bucket.acquire(3).then(() => {
      done = true;
    });
    expect(clock.pending).toBe(1);
    clock.advance(1499);
    await clock.flush();
    expect(done).toBe(false);
    clock.advance(1);
    await p;
    expect(clock()).toBe(2_500);
    expect(bucket.available()).toBe(0);
  });

  it('waiters are served in order and tryAcquire cannot overtake them', async () => {
    const { clock, bucket } = setup(2, 1);
    bucket.tryAcquire(2);
    const order: string[] = [];
    const a = bucket.acquire(2).then(() => order.push('a'));
    const b = bucket.acquire(1).then(() => order.push('b'));
    clock.advance(2_000);
    expect(bucket.tryAcquire().ok).toBe(false); // the tokens are reserved for b
    await clock.run(Promise.all([a, b]));
    expect(order).toEqual(['a', 'b']);
    expect(clock()).toBe(4_000);
  });

  it('acquire rejects on abort, stops sleeping and returns its reservation', async () => {
    const { clock, bucket } = setup(5, 1);
    bucket.tryAcquire(5);
    const ac = new AbortController();
    const p = bucket.acquire(3, ac.signal);
    expect(clock.pending).toBe(1);
    ac.abort('stop');
    await expect(p).rejects.toSatisfy(isOperationAbortedError);
    expect(clock.pending).toBe(0);
    clock.advance(1_000);
    expect(bucket.available()).toBe(1);
  });

  it('acquire with an aborted signal or n above capacity rejects without reserving', async () => {
    const { bucket } = setup(5, 1);
    const reason = new Error('gone');
    await expect(bucket.acquire(1, AbortSignal.abort(reason))).rejects.toBe(reason);
    await expect(bucket.acquire(6)).rejects.toThrow(/n must be <= capacity/);
    expect(bucket.available()).toBe(5);
  });

  it('a clock that moves backwards refunds nothing and refill resumes', () => {
    const { clock, bucket } = setup(10, 1);
    bucket.tryAcquire(10);
    clock.set(-50_000);
    expect(bucket.available()).toBe(0);
    clock.advance(2_000);
    expect(bucket.available()).toBe(2);
  });

  it('validates its options, naming them', () => {
    const make = (o: object) => () => createTokenBucket(o as never);
    expect(make({ capacity: Number.NaN, refillPerSecond: 1 })).toThrow(/capacity.*NaN/);
    expect(make({ capacity: 0, refillPerSecond: 1 })).toThrow(RangeError);
    expect(make({ capacity: 1, refillPerSecond: -1 })).toThrow(/refillPerSecond.*-1/);
    expect(make({ capacity: 1, refillPerSecond: 1, clock: 5 })).toThrow(/clock/);
    expect(make({ capacity: 1, refillPerSecond: 1, sleep: 'x' })).toThrow(/sleep/);
  });
});
