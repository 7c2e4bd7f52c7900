import { describe, expect, it } from 'vitest';
import { protect } from './protect.js';

describe('protect: options', () => {
  it.each([
    [{ concurrency: 0 }, RangeError, /concurrency/],
    [{ concurrency: 1.5 }, RangeError, /concurrency/],
    [{ maxQueue: -1 }, RangeError, /maxQueue/],
    [{ attempts: 0 }, RangeError, /attempts/],
    [{ attempts: 1.5 }, RangeError, /attempts/],
    [{ attempts: '3' }, TypeError, /attempts/],
    [{ timeout: -1 }, RangeError, /timeout/],
    [{ timeout: 0 }, RangeError, /timeout/],
    [{ timeout: '5 seconds' }, TypeError, /timeout/],
    [{ timeoutMode: 'x' }, TypeError, /timeoutMode/],
    [{ circuit: { threshold: 5 } }, TypeError, /circuit\.cooldown/],
    [{ circuit: { cooldown: 5 } }, TypeError, /circuit\.threshold/],
    [{ circuit: { threshold: 0, cooldown: 5 } }, RangeError, /circuit\.threshold/],
    [{ circuit: true }, TypeError, /circuit/],
    [{ backoff: { type: 'linear', delay: 1 } }, TypeError, /backoff\.type/],
    [{ backoff: { type: 'fixed' } }, TypeError, /backoff\.delay/],
    [{ backoff: { type: 'fixed', delay: 1, jitter: 2 } }, RangeError, /backoff\.jitter/],
    [{ classify: 'retry' }, TypeError, /classify/],
    [{ budget: {} }, TypeError, /budget/],
    [{ throttle: {} }, TypeError, /throttle/],
    [{ sleep: 1 }, TypeError, /sleep/],
  ])('%j throws naming the option', (options, type, message) => {
    expect(() => protect(options as never)).toThrow(type);
    expect(() => protect(options as never)).toThrow(message);
  });

  it('accepts duration strings and Infinity where documented', () => {
    expect(() =>
      protect({
        timeout: '2s',
        backoff: { type: 'exponential', delay: '100ms', jitter: 1, maxDelay: '1m' },
        circuit: { threshold: 3, cooldown: '30s' },
        concurrency: Number.POSITIVE_INFINITY,
        maxQueue: Number.POSITIVE_INFINITY,
      }),
    ).not.toThrow();
  });

  it('a non-function fn throws TypeError synchronously, naming fn', () => {
    expect(() => protect()(42 as never)).toThrow(/protect run\(fn\) must be a function, got 42/);
  });
});
