import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../breaker/circuit-breaker.js';
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
    [{ hedge: { delayMs: 10, attempts: 1 } }, RangeError, /hedge\.attempts must be >= 2/],
    [{ hedge: { delayMs: 10, attempts: 11 } }, RangeError, /hedge\.attempts must be <= 10/],
    [{ maxQueue: 1 }, TypeError, /createRouter: unknown option `maxQueue`/],
    [{ errorPolicy: () => ({}) }, TypeError, /createRouter: unknown option `errorPolicy`/],
    [{ hedge: { delayMs: 10, maxHedges: 1 } }, TypeError, /hedge\.maxHedges/],
    [{ hedge: { attempts: 2 } }, TypeError, /exactly one of delayMs or percentile/],
    [{ hedge: { delayMs: 1, percentile: 95 } }, TypeError, /exactly one of delayMs or percentile/],
    [{ hedge: { percentile: 100 } }, RangeError, /hedge\.percentile/],
    [{ hedge: { percentile: 95, windowMs: 0 } }, RangeError, /hedge\.windowMs/],
    [{ hedge: { delayMs: 5, windowMs: 1000 } }, TypeError, /hedge\.windowMs applies to percentile/],
    [{ selection: { type: 'random' } }, TypeError, /selection\.type must be one of .*got "random"/],
    [{ selection: 'fastest' }, TypeError, /selection\.type .*"fastest"/],
    [{ selection: 'race', hedge: { delayMs: 5 } }, TypeError, /hedge cannot be combined/],
    [{ concurrency: { limit: 0 } }, RangeError, /concurrency\.limit must be >= 1/],
    [{ concurrency: 2 }, TypeError, /concurrency must be an object/],
    [{ concurrency: { limit: 1, maxQueue: -1 } }, RangeError, /concurrency\.maxQueue must be >= 0/],
    [{ budget: 3 }, TypeError, /budget must be an object/],
    [
      { protection: { retry: { attempts: 0 } } },
      RangeError,
      /createRouter: protection\.retry\.attempts must be >= 1/,
    ],
    [
      { protection: { retry: { attempts: 11 } } },
      RangeError,
      /createRouter: protection\.retry\.attempts must be <= 10/,
    ],
    [
      { protection: { attempts: 2 } },
      TypeError,
      /createRouter: unknown option `protection\.attempts`/,
    ],
    [
      { providers: [{ id: 'a', resource: 1, protection: { circuit: { failureThreshold: 0 } } }] },
      RangeError,
      /createRouter: providers\[0\]\.protection\.circuit\.failureThreshold/,
    ],
    [
      { protection: { circuit: createCircuitBreaker() } },
      TypeError,
      /protection\.circuit is a CircuitBreaker, which every provider would share/,
    ],
    [{ health: { registry: {} } }, TypeError, /health\.registry\.success/],
  ])('%j throws naming the problem', (options, type, message) => {
    expect(() => make(options as Partial<RouterOptions<number>>)).toThrow(type);
    expect(() => make(options as Partial<RouterOptions<number>>)).toThrow(message);
  });

  it('accepts valid options, including the selection shorthand', () => {
    const router = make({
      selection: 'round-robin',
      hedge: { delayMs: 0, attempts: 3 },
      protection: {
        attemptTimeoutMs: 2_000,
        timeoutMs: 5_000,
        retry: { attempts: 2, backoff: { baseDelayMs: 100 } },
      },
    });
    expect(router.providerIds).toEqual(['a', 'b']);
  });
});
