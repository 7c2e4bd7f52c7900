import { describe, expect, it } from 'vitest';
import { protect } from './protect.js';

describe('protect: options', () => {
  it.each([
    [{ concurrency: { limit: 0 } }, RangeError, /protect: concurrency\.limit must be >= 1/],
    [{ concurrency: { limit: 1.5 } }, RangeError, /concurrency\.limit/],
    [{ concurrency: 4 }, TypeError, /concurrency must be an object/],
    [{ concurrency: { limit: 1, maxQueue: -1 } }, RangeError, /concurrency\.maxQueue/],
    [{ retry: { attempts: 0 } }, RangeError, /retry\.attempts must be >= 1/],
    [{ retry: { attempts: 11 } }, RangeError, /retry\.attempts must be <= 10/],
    [{ retry: { attempts: 1.5 } }, RangeError, /retry\.attempts/],
    [{ retry: { attempts: '3' } }, TypeError, /retry\.attempts/],
    [{ attemptTimeoutMs: -1 }, RangeError, /attemptTimeoutMs/],
    [{ attemptTimeoutMs: 0 }, RangeError, /attemptTimeoutMs/],
    [{ attemptTimeoutMs: '5 seconds' }, TypeError, /attemptTimeoutMs/],
    [{ timeoutMs: 0 }, RangeError, /protect: timeoutMs/],
    [{ timeoutMode: 'x' }, TypeError, /timeoutMode/],
    [{ circuit: { failureThreshold: 0 } }, RangeError, /circuit\.failureThreshold/],
    [{ circuit: true }, TypeError, /circuit/],
    [{ retry: { backoff: { baseDelayMs: -1 } } }, RangeError, /retry\.backoff\.baseDelayMs/],
    [{ retry: { backoff: { type: 'fixed', delay: 1 } } }, TypeError, /retry\.backoff\.type/],
    [{ classify: 'retry' }, TypeError, /classify/],
    [{ budget: 3 }, TypeError, /budget/],
    [{ rateLimit: 3 }, TypeError, /rateLimit/],
    [{ throttle: {} }, TypeError, /throttle/],
    [{ sleep: 1 }, TypeError, /sleep/],
    // The old names are gone, with a pointer to the new ones.
    [{ attempts: 3 }, TypeError, /unknown option `attempts`/],
    [{ backoff: { type: 'fixed', delay: 1 } }, TypeError, /unknown option `backoff`/],
    [{ timeout: 100 }, TypeError, /unknown option `timeout`/],
    [{ maxQueue: 1 }, TypeError, /unknown option `maxQueue`/],
    [{ errorPolicy: () => ({}) }, TypeError, /unknown option `errorPolicy`/],
    [{ hedge: { delayMs: 10 } }, TypeError, /hedge is not supported.*router/],
  ])('%j throws naming the option', (options, type, message) => {
    expect(() => protect(options as never)).toThrow(type);
    expect(() => protect(options as never)).toThrow(message);
  });

  it('accepts the whole vocabulary, and Infinity where documented', () => {
    expect(() =>
      protect({
        timeoutMs: 5_000,
        attemptTimeoutMs: 2_000,
        retry: {
          attempts: 10,
          backoff: { baseDelayMs: 100, strategy: 'exponential', maxDelayMs: 60_000 },
          maxPushbackMs: 1_000,
          onRetry: () => {},
        },
        budget: { ratio: 0.1 },
        rateLimit: { capacity: 10, refillPerSecond: 10 },
        circuit: { failureThreshold: 3, openDurationMs: 30_000 },
        concurrency: { limit: 1_000, maxQueue: Number.POSITIVE_INFINITY },
      }),
    ).not.toThrow();
  });

  it('a non-function fn throws TypeError synchronously, naming fn', () => {
    expect(() => protect()(42 as never)).toThrow(/protect run\(fn\) must be a function, got 42/);
  });
});
