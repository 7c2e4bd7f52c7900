import { describe, expect, it } from 'vitest';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { isRateLimitError } from '../errors/rate-limit-error.js';
import { createTokenBucket } from '../limit/token-bucket.js';
import { attemptTimes } from '../test-helpers/attempt-times.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

const boom = () => new Error('boom');

describe('protect: the ResilienceOptions vocabulary', () => {
  it('timeoutMs bounds the whole call: a retry that cannot start before it is skipped, the last error returned', async () => {
    const clock = createManualClock();
    const run = protect({
      timeoutMs: 250,
      retry: { attempts: 5, backoff: { baseDelayMs: 100, maxDelayMs: 100, jitter: 'none' } },
      clock,
      sleep: clock.sleep,
    });
    const { at, error } = await attemptTimes(run, clock);
    // Attempts at 0, 100, 200; the next would start at 300, past the deadline at 250.
    expect(at).toEqual([0, 100, 200]);
    expect((error as Error).message).toBe('boom');
    expect(clock()).toBe(200);
    expect(clock.pending).toBe(0);
  });

  it('timeoutMs ends an attempt still running at the deadline with DeadlineExceededError', async () => {
    const clock = createManualClock();
    const run = protect({
      timeoutMs: 150,
      attemptTimeoutMs: 100,
      retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
      clock,
      sleep: clock.sleep,
    });
    const timeouts: unknown[] = [];
    run.onTimeout((e) => timeouts.push(e));
    const seen: AbortSignal[] = [];
    const error = await clock
      .run(run(({ signal }) => new Promise(() => void seen.push(signal))))
      .catch((e: unknown) => e);
    expect(isDeadlineExceededError(error)).toBe(true);
    // Attempt 1 timed out at 100 (its own timeout); attempt 2 got the 50 ms left of the call.
    expect(clock()).toBe(150);
    expect(timeouts).toEqual([
      { attempt: 1, timeoutMs: 100 },
      { attempt: 2, timeoutMs: 150 },
    ]);
    expect(seen.every((s) => s.aborted)).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it('rateLimit takes one token per call; a refusal is a RateLimitError, neutral for the circuit, with fallback', async () => {
    const clock = createManualClock();
    const run = protect({
      rateLimit: createTokenBucket({ capacity: 1, refillPerSecond: 1, clock }),
      retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
      circuit: { failureThreshold: 1, openDurationMs: 1_000 },
      clock,
      sleep: clock.sleep,
    });
    const rejects: unknown[] = [];
    run.onReject((e) => rejects.push(e));
    let calls = 0;
    const fails = () => {
      calls++;
      return Promise.reject(boom());
    };
    // The one token covers a call and all its retries.
    await expect(clock.run(run(fails))).rejects.toThrow('boom');
    expect(calls).toBe(3);
    run.circuit?.reset();
    const refused = await run(fails).catch((e: unknown) => e);
    expect(isRateLimitError(refused)).toBe(true);
    expect(calls).toBe(3);
    expect(run.circuit?.state).toBe('closed');
    expect(rejects).toEqual([{ reason: 'rate-limited' }]);
    await expect(
      run(fails, { fallback: (e) => (isRateLimitError(e) ? 'later' : 'x') }),
    ).resolves.toBe('later');
  });

  it('retry.onRetry hears the attempt that failed; a throwing listener never breaks the call', async () => {
    const clock = createManualClock();
    const heard: number[] = [];
    const run = protect({
      retry: {
        attempts: 3,
        backoff: { baseDelayMs: 0 },
        onRetry: (e) => {
          heard.push(e.attempt);
          throw new Error('listener');
        },
      },
      clock,
      sleep: clock.sleep,
    });
    await expect(
      clock.run(
        run(({ attempt }) => {
          if (attempt < 3) throw boom();
          return 'ok';
        }),
      ),
    ).resolves.toBe('ok');
    expect(heard).toEqual([1, 2]);
  });

  it('a retry defaults to the one default backoff (exponential from 100 ms, full jitter)', async () => {
    const clock = createManualClock();
    const run = protect({ retry: {}, random: () => 0.5, clock, sleep: clock.sleep });
    const { at } = await attemptTimes(run, clock);
    // 3 attempts; full jitter draws half of 100, then half of 200.
    expect(at).toEqual([0, 50, 150]);
  });
});
