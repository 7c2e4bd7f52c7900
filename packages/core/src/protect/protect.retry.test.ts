import { describe, expect, it } from 'vitest';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { isErrorPolicyError } from '../errors/error-policy-error.js';
import { createManualClock } from '../time/manual-clock.js';
import { fixedRandom } from '../time/random.js';
import { protect } from './protect.js';

const boom = (n = 1) => new Error(`boom ${n}`);

describe('protect: retry', () => {
  it('attempts includes the first call and the last error is rethrown unchanged', async () => {
    const run = protect({ attempts: 3 });
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
    const run = protect({ attempts: 5 });
    await expect(
      run(async ({ attempt }) => (attempt < 3 ? Promise.reject(boom()) : attempt)),
    ).resolves.toBe(3);
  });

  it('exponential backoff starts at delay and doubles; fixed stays', async () => {
    for (const [type, expected] of [
      ['exponential', [0, 100, 300, 700]],
      ['fixed', [0, 100, 200, 300]],
    ] as const) {
      const clock = createManualClock();
      const run = protect({
        attempts: 4,
        backoff: { type, delay: 100 },
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

  it('jitter only reduces the delay: delay × (1 − jitter × random())', async () => {
    const clock = createManualClock();
    const run = protect({
      attempts: 2,
      backoff: { type: 'fixed', delay: 1000, jitter: 0.5 },
      random: fixedRandom(0.5),
      clock,
      sleep: clock.sleep,
    });
    const at: number[] = [];
    await expect(
      clock.run(
        run(() => {
          at.push(clock());
          throw boom();
        }),
      ),
    ).rejects.toThrow();
    expect(at).toEqual([0, 750]);
  });

  it('errorPolicy retry: false stops; retryAfterMs is a minimum delay', async () => {
    const clock = createManualClock();
    const run = protect({
      attempts: 5,
      backoff: { type: 'fixed', delay: 10 },
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
      attempts: 2,
      timeout: 100,
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
      attempts: 3,
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
    };
    const run = protect({ attempts: 5, budget });
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

  it('onRetry fires before each retry with the attempt and delay, no payload', async () => {
    const clock = createManualClock();
    const run = protect({
      attempts: 3,
      backoff: { type: 'exponential', delay: 10 },
      clock,
      sleep: clock.sleep,
    });
    const events: unknown[] = [];
    run.onRetry((e) => events.push(e));
    await expect(clock.run(run(() => Promise.reject(new TypeError('x'))))).rejects.toThrow();
    expect(events).toEqual([
      { attempt: 2, delayMs: 10, errorName: 'TypeError' },
      { attempt: 3, delayMs: 20, errorName: 'TypeError' },
    ]);
  });
});
