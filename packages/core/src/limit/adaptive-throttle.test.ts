import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isThrottledError, ThrottledError } from '../errors/index.js';
import { createManualClock } from '../time/manual-clock.js';
import { fixedRandom, sequenceRandom } from '../time/random.js';
import { type AdaptiveThrottleOptions, createAdaptiveThrottle } from './adaptive-throttle.js';

function setup(options: AdaptiveThrottleOptions = {}) {
  const clock = createManualClock(0);
  let draw = 0.999_999;
  const throttle = createAdaptiveThrottle({ clock, random: () => draw, ...options });
  return {
    clock,
    throttle,
    setDraw(v: number) {
      draw = v;
    },
  };
}

/** Records `requests` admitted requests of which the first `accepts` were accepted. */
function feed(t: ReturnType<typeof setup>['throttle'], requests: number, accepts: number) {
  for (let i = 0; i < requests; i++) {
    expect(t.tryAcquire().ok).toBe(true);
    t.recordResult(i < accepts);
  }
}

describe('createAdaptiveThrottle', () => {
  it('property: probability is max(0, (requests − k × accepts) / (requests + 1))', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        (k, requests, acceptsWanted) => {
          const accepts = Math.min(acceptsWanted, requests);
          const { throttle } = setup({ k });
          feed(throttle, requests, accepts);
          const expected = Math.max(0, (requests - k * accepts) / (requests + 1));
          expect(throttle.probability()).toBeCloseTo(expected, 12);
          expect(throttle.stats()).toMatchObject({ requests, accepts, throttled: 0 });
        },
      ),
    );
  });

  it('rejects when the draw falls below the probability in force, counting the request', () => {
    const { throttle, setDraw } = setup({ k: 2 });
    const events: unknown[] = [];
    throttle.onReject((e) => events.push(e));
    feed(throttle, 10, 3);
    const p = 4 / 11;
    expect(throttle.probability()).toBeCloseTo(p, 12);
    setDraw(p - 1e-9);
    const r = throttle.tryAcquire();
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(isThrottledError(r.error)).toBe(true);
      expect(r.error.probability).toBeCloseTo(p, 12);
    }
    expect(events).toEqual([{ probability: p }]);
    // The refused request still counts, so the next draw faces (11 − 6) / 12.
    const next = 5 / 12;
    setDraw(next + 1e-9);
    expect(throttle.tryAcquire().ok).toBe(true);
    expect(throttle.stats()).toMatchObject({ requests: 12, accepts: 3, throttled: 1 });
  });

  it('never rejects while the backend accepts at least 1/k of requests', () => {
    const { throttle } = setup({ k: 2, random: fixedRandom(0) });
    feed(throttle, 100, 50);
    expect(throttle.probability()).toBe(0);
  });

  it('counts leave the window after windowMs, one slice at a time', () => {
    const { clock, throttle } = setup({ windowMs: 1200, buckets: 12 });
    feed(throttle, 10, 0); // t = 0
    clock.advance(600);
    feed(throttle, 4, 0); // t = 600
    clock.advance(599); // t = 1199: both groups still in the window
    expect(throttle.stats()).toMatchObject({ requests: 14, accepts: 0 });
    clock.advance(1); // t = 1200: the t = 0 slice left
    expect(throttle.stats()).toMatchObject({ requests: 4 });
    expect(throttle.probability()).toBeCloseTo(4 / 5, 12);
    clock.advance(600); // t = 1800: everything left
    expect(throttle.stats()).toMatchObject({ requests: 0, accepts: 0, probability: 0 });
    clock.advance(1_000_000); // a long gap is O(buckets), not O(gap)
    expect(throttle.probability()).toBe(0);
  });

  it('a backwards clock keeps counting into the newest slice', () => {
    const { clock, throttle } = setup({ windowMs: 1000, buckets: 10 });
    clock.advance(5_000);
    feed(throttle, 3, 0);
    clock.set(0);
    feed(throttle, 2, 0);
    expect(throttle.stats().requests).toBe(5);
  });

  it('execute records accepts, and rejections only for errors classified so', async () => {
    const { throttle, setDraw } = setup({
      isRejection: (e) => e instanceof Error && e.message === 'overloaded',
    });
    await expect(throttle.execute(() => 'ok')).resolves.toBe('ok');
    await expect(throttle.execute(() => Promise.reject(new Error('not found')))).rejects.toThrow(
      'not found',
    );
    await expect(
      throttle.execute(() => {
        throw new Error('overloaded');
      }),
    ).rejects.toThrow('overloaded');
    expect(throttle.stats()).toMatchObject({ requests: 3, accepts: 2 });
    for (let i = 0; i < 10; i++)
      await throttle.execute(() => Promise.reject(new Error('overloaded'))).catch(() => {});
    setDraw(0);
    let ran = false;
    await expect(
      throttle.execute(() => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(ThrottledError);
    expect(ran).toBe(false);
  });

  it('with the default classifier every error is a rejection', async () => {
    const { throttle } = setup({ random: sequenceRandom([0.5]) });
    await throttle.execute(() => Promise.reject(new Error('x'))).catch(() => {});
    expect(throttle.stats()).toMatchObject({ requests: 1, accepts: 0 });
  });

  it('validates its options, naming them', () => {
    expect(() => createAdaptiveThrottle({ k: 0.5 })).toThrow(/k must be >= 1.*0.5/);
    expect(() => createAdaptiveThrottle({ k: Number.NaN })).toThrow(TypeError);
    expect(() => createAdaptiveThrottle({ windowMs: 0 })).toThrow(/windowMs/);
    expect(() => createAdaptiveThrottle({ buckets: 0 })).toThrow(/buckets/);
    expect(() => createAdaptiveThrottle({ random: 1 as never })).toThrow(/random/);
    expect(() => createAdaptiveThrottle({ isRejection: 'x' as never })).toThrow(/isRejection/);
    expect(createAdaptiveThrottle().probability()).toBe(0);
  });
});
