import { describe, expect, it } from 'vitest';
import { resolveResilience } from '../attempts/resilience-options.js';
import { createRouter } from '../routing/router.js';
import { DEFAULT_ADAPTIVE_CONCURRENCY } from './gradient-limit.js';

const resolve = (concurrency: unknown) =>
  resolveResilience('protect', '', { concurrency } as never, true);

describe('concurrency.adaptive — options', () => {
  it('true takes every default; the static limit is then off', () => {
    const plan = resolve({ adaptive: true });
    expect(plan.adaptive).toEqual(DEFAULT_ADAPTIVE_CONCURRENCY);
    expect(plan.concurrency).toBeUndefined();
    expect(resolve({ adaptive: false, limit: 4 }).concurrency).toEqual({ limit: 4, maxQueue: 0 });
    expect(resolve({ limit: 4 }).adaptive).toBeUndefined();
  });

  it('fills what is left out with its defaults', () => {
    const plan = resolve({ adaptive: { maxLimit: 50, shares: { sheddable: 0.25 } } });
    expect(plan.adaptive).toEqual({
      ...DEFAULT_ADAPTIVE_CONCURRENCY,
      maxLimit: 50,
      shares: { default: 0.9, sheddable: 0.25 },
    });
  });

  it.each([
    [
      { adaptive: { rttTolerance: 0.5 } },
      'protect: concurrency.adaptive.rttTolerance must be >= 1, got 0.5',
    ],
    [{ adaptive: { minLimit: 0 } }, 'protect: concurrency.adaptive.minLimit must be >= 1, got 0'],
    [
      { adaptive: { minLimit: 8, maxLimit: 4 } },
      'protect: concurrency.adaptive.maxLimit must be >= 8, got 4',
    ],
    [
      { adaptive: { initialLimit: 2000 } },
      'protect: concurrency.adaptive.initialLimit must be <= 1000, got 2000',
    ],
    [{ adaptive: { smoothing: 0 } }, 'protect: concurrency.adaptive.smoothing must be > 0, got 0'],
    [
      { adaptive: { backoffRatio: 0.2 } },
      'protect: concurrency.adaptive.backoffRatio must be >= 0.5, got 0.2',
    ],
    [
      { adaptive: { probeSamples: 1.5 } },
      'protect: concurrency.adaptive.probeSamples must be an integer, got 1.5',
    ],
    [
      { adaptive: { probeIntervalMs: 0 } },
      'protect: concurrency.adaptive.probeIntervalMs must be > 0, got 0',
    ],
    [
      { adaptive: { shares: { sheddable: 0 } } },
      'protect: concurrency.adaptive.shares.sheddable must be > 0, got 0',
    ],
    [
      { adaptive: { shares: { default: 1.5 } } },
      'protect: concurrency.adaptive.shares.default must be <= 1, got 1.5',
    ],
  ])('%j is refused by its full option path', (concurrency, message) => {
    expect(() => resolve(concurrency)).toThrow(RangeError);
    expect(() => resolve(concurrency)).toThrow(message);
  });

  it('refuses a sheddable share above the default one', () => {
    expect(() => resolve({ adaptive: { shares: { default: 0.5, sheddable: 0.8 } } })).toThrow(
      'protect: concurrency.adaptive.shares.sheddable must be <= shares.default (0.5), got 0.8',
    );
  });

  it.each([
    [
      { adaptive: { tolerance: 2 } },
      'protect: unknown option `concurrency.adaptive.tolerance` — did you mean `concurrency.adaptive.rttTolerance`?',
    ],
    [
      { adaptive: { shares: { batch: 0.1 } } },
      'protect: unknown option `concurrency.adaptive.shares.batch`',
    ],
    [
      { adaptive: 'yes' },
      'protect: concurrency.adaptive must be true, false or an object, got "yes"',
    ],
    [
      { adaptive: true, limit: 10 },
      'protect: concurrency.limit must be left out with concurrency.adaptive',
    ],
    [
      { adaptive: {}, maxQueue: 10 },
      'protect: concurrency.maxQueue must be left out with concurrency.adaptive',
    ],
    [{}, 'protect: concurrency.limit must be a number, got undefined'],
  ])('%j is a TypeError naming its full option path', (concurrency, message) => {
    expect(() => resolve(concurrency)).toThrow(TypeError);
    expect(() => resolve(concurrency)).toThrow(message);
  });

  it('the router gives each provider its own limit', () => {
    const router = createRouter({
      providers: [
        { id: 'a', resource: {} },
        { id: 'b', resource: {} },
      ],
      concurrency: { adaptive: { maxLimit: 7, initialLimit: 7 } },
    });
    expect(router.limiter('a')?.limit).toBe(7);
    expect(router.limiter('a')).not.toBe(router.limiter('b'));
  });
});
