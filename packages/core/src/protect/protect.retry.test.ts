import { describe, expect, it } from 'vitest';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { isErrorPolicyError } from '../errors/error-policy-error.js';
import type { RetryBudget } from '../retry/budget.js';
import { attemptTimes } from '../test-helpers/attempt-times.js';
import { createManualClock } from '../time/manual-clock.js';
import { fixedRandom } from '../time/random.js';
import { protect } from './protect.js';

const boom = (n = 1) => new Error(`boom ${n}`);

describe('protect: retry', () => {
  it('attempts includes the first call and the last error is rethrown unchanged', async () => {
    const run = protect({ retry: { attempts: 3, backoff: { baseDelayMs: 0 } } });
    const seen: number[] = [];
    const last = boom(3);
    await expect(
      run(({ attempt }) => {
        seen.push(attempt);
        throw attempt === 3 ? last : boom(attempt);
      }),
    ).rejects.toBe(last);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('defaults to one attempt', async () => {
    let calls = 0;
    await expect(
      protect()(() => {
        calls++;
        throw boom();
      }),
    ).rejects.toThrow('boom');
    expect(calls).toBe(1);
  });

  it('returns the first success', async () => {
    const run = protect({ retry: { attempts: 5, backoff: { baseDelayMs: 0 } } });
    await expect(
      run(async ({ attempt }) => (attempt < 3 ? Promise.reject(boom()) : attempt)),
    ).resolves.toBe(3);
  });

  it('exponential backoff starts at baseDelayMs and doubles; capped at maxDelayMs it stays', async () => {
    for (const [strategy, expected] of [
      ['exponential', [0, 100, 300, 700]],
      ['fixed', [0, 100, 200, 300]],
    ] as const) {
      const clock = createManualClock();
      const backoff =
        strategy === 'exponential'
          ? { baseDelayMs: 100, strategy, jitter: 'none' as const }
          : { baseDelayMs: 100, maxDelayMs: 100, jitter: 'none' as const };
      const run = protect({
        retry: { attempts: 4, backoff },
        clock,
        sleep: clock.sleep,
      });
      const at: number[] = [];
      const p = run(() => {
        at.push(clock());
        throw boom();
      });
      await expect(clock.run(p)).rejects.toThrow('boom');
      expect(at).toEqual(expected);
    }
  });

  it("the runner's random drives the backoff's jitter", async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 2, backoff: { baseDelayMs: 1000, jitter: 'full' } },
      random: fixedRandom(0.5),
      clock,
      sleep: clock.sleep,
    });
    const { at } = await attemptTimes(run, clock);
    expect(at).toEqual([0, 500]);
  });

  it('server pushback replaces the backoff, shorter or longer', async () => {
    const clock = createManualClock();
    const pushback = [5, 500];
    const run = protect({
      retry: { attempts: 3, backoff: { baseDelayMs: 100, maxDelayMs: 100, jitter: 'none' } },
      classify: () => ({ retryAfterMs: pushback.shift() as number }),
      clock,
      sleep: clock.sleep,
    });
    const { at } = await attemptTimes(run, clock);
    expect(at).toEqual([0, 5, 505]);
  });

  it('classify retry: false stops; retryAfterMs replaces the backoff', async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 5, backoff: { baseDelayMs: 10, maxDelayMs: 10, jitter: 'none' } },
      clock,
      sleep: clock.sleep,
      classify: (e) =>
        (e as Error).message === 'fatal' ? { retry: false } : { retryAfterMs: 500 },
    });
    const at: number[] = [];
    await expect(
      clock.run(
        run(({ attempt }) => {
          at.push(clock());
          throw new Error(attempt === 3 ? 'fatal' : 'again');
        }),
      ),
    ).rejects.toThrow('fatal');
    expect(at).toEqual([0, 500, 1000]);
  });

  it('the policy runs after timeouts too, and a per-call policy replaces the runner’s', async () => {
    const clock = createManualClock();
    const runnerPolicy: unknown[] = [];
    const callPolicy: unknown[] = [];
    const run = protect({
      retry: { attempts: 2, backoff: { baseDelayMs: 0 } },
      attemptTimeoutMs: 100,
      clock,
      sleep: clock.sleep,
      classify: (e) => {
        runnerPolicy.push(e);
        return {};
      },
    });
    const p = run(() => new Promise(() => {}), {
      classify: (e) => {
        callPolicy.push(e);
        return { retry: false };
      },
    });
    await expect(clock.run(p)).rejects.toSatisfy(isDeadlineExceededError);
    expect(runnerPolicy).toEqual([]);
    expect(callPolicy).toHaveLength(1);
    expect(isDeadlineExceededError(callPolicy[0])).toBe(true);
  });

  it('a throwing policy yields ErrorPolicyError with errors = [opError, policyError], cause = opError, no retry, no fallback', async () => {
    const op = boom();
    const policyError = new Error('policy broke');
    let calls = 0;
    let fallbacks = 0;
    const run = protect({
      retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
      classify: () => {
        throw policyError;
      },
    });
    const error = await run(
      () => {
        calls++;
        throw op;
      },
      { fallback: () => ++fallbacks },
    ).catch((e: unknown) => e);
    expect(isErrorPolicyError(error)).toBe(true);
    expect((error as AggregateError).errors).toEqual([op, policyError]);
    expect((error as Error).cause).toBe(op);
    expect(calls).toBe(1);
    expect(fallbacks).toBe(0);
  });

  it('a refused retry budget ends the call with the last error; every call deposits', async () => {
    let requests = 0;
    let retries = 0;
    const budget = {
      recordRequest: () => void requests++,
      tryRetry: () => ++retries <= 1,
    } as unknown as RetryBudget;
    const run = protect({ retry: { attempts: 5, backoff: { baseDelayMs: 0 } }, budget });
    let calls = 0;
    await expect(
      run(({ attempt }) => {
        calls++;
        throw boom(attempt);
      }),
    ).rejects.toThrow('boom 2');
    expect(calls).toBe(2);
    expect(requests).toBe(1);
    expect(retries).toBe(2);
  });

  it('onRetry fires before each retry with the attempt that failed and the delay, no payload', async () => {
    const clock = createManualClock();
    const run = protect({
      retry: { attempts: 3, backoff: { baseDelayMs: 10, strategy: 'exponential', jitter: 'none' } },
      clock,
      sleep: clock.sleep,
    });
    const events: unknown[] = [];
    run.onRetry((e) => events.push(e));
    await expect(clock.run(run(() => Promise.reject(new TypeError('x'))))).rejects.toThrow();
    expect(events).toEqual([
      { attempt: 1, delayMs: 10, errorName: 'TypeError' },
      { attempt: 2, delayMs: 20, errorName: 'TypeError' },
    ]);
  });
});
