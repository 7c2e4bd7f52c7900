import { describe, expect, it } from 'vitest';
import { createRouter } from './router.js';
import type { RouterOptions } from './types.js';

const providers = [
  { id: 'a', resource: 1 },
  { id: 'b', resource: 2 },
];
const make = (o: Partial<RouterOptions<number>>) =>
  createRouter<number>({ providers, ...o } as RouterOptions<number>);

describe('createRouter: validation', () => {
  it.each([
    [{ providers: [] }, TypeError, /providers must be a non-empty array/],
    [
      { providers: [{ id: '', resource: 1 }] },
      TypeError,
      /providers\[0\]\.id must be a non-empty string/,
    ],
    [
      {
        providers: [
          { id: 'a', resource: 1 },
          { id: 'a', resource: 2 },
        ],
      },
      TypeError,
      /providers\[1\]\.id "a" is a duplicate provider id/,
    ],
    [
      { selection: { type: 'priority', priorities: { zz: 1 } } },
      TypeError,
      /priorities names unknown provider "zz"/,
    ],
    [
      { selection: { type: 'priority', priorities: { a: Number.POSITIVE_INFINITY } } },
      RangeError,
      /selection\.priorities\["a"\] must be finite/,
    ],
    [
      { selection: { type: 'priority', priorities: { a: Number.NaN } } },
      TypeError,
      /selection\.priorities\["a"\] must be a number/,
    ],
    [{ hedge: { delayMs: 10, maxHedges: -1 } }, RangeError, /hedge\.maxHedges must be >= 0/],
    [{ hedge: { maxHedges: 1 } }, TypeError, /exactly one of delayMs or percentile/],
    [{ hedge: { delayMs: 1, percentile: 95 } }, TypeError, /exactly one of delayMs or percentile/],
    [{ hedge: { percentile: 100 } }, RangeError, /hedge\.percentile/],
    [{ hedge: { percentile: 95, windowMs: 0 } }, RangeError, /hedge\.windowMs/],
    [{ hedge: { delayMs: 5, windowMs: 1000 } }, TypeError, /hedge\.windowMs applies to percentile/],
    [{ selection: { type: 'random' } }, TypeError, /selection\.type must be one of .*got "random"/],
    [{ selection: 'fastest' }, TypeError, /selection\.type .*"fastest"/],
    [{ selection: 'race', hedge: { delayMs: 5 } }, TypeError, /hedge cannot be combined/],
    [{ concurrency: 0 }, RangeError, /concurrency must be >= 1/],
    [{ maxQueue: -1 }, RangeError, /maxQueue must be >= 0/],
    [{ budget: {} }, TypeError, /budget must have recordRequest/],
    [
      { protection: { attempts: 0 } },
      RangeError,
      /createRouter: protection\.attempts must be >= 1/,
    ],
    [
      { providers: [{ id: 'a', resource: 1, protection: { circuit: { threshold: 1 } } }] },
      TypeError,
      /createRouter: providers\[0\]\.protection\.circuit\.cooldown is required/,
    ],
    [{ health: { registry: {} } }, TypeError, /health\.registry\.success/],
  ])('%j throws naming the problem', (options, type, message) => {
    expect(() => make(options as Partial<RouterOptions<number>>)).toThrow(type);
    expect(() => make(options as Partial<RouterOptions<number>>)).toThrow(message);
  });

  it('accepts valid options, including the selection shorthand', () => {
    const router = make({
      selection: 'round-robin',
      hedge: { delayMs: 0, maxHedges: 0 },
      protection: { timeout: '2s', backoff: { type: 'fixed', delay: '100ms' } },
    });
    expect(router.providerIds).toEqual(['a', 'b']);
  });
});
