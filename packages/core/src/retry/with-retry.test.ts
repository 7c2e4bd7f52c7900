import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  DeadlineExceededError,
  isDeadlineExceededError,
} from '../errors/deadline-exceeded-error.js';
import { isErrorPolicyError } from '../errors/error-policy-error.js';
import { isOperationAbortedError } from '../errors/operation-aborted-error.js';
import { neverAbortedSignal } from '../internal/abort.js';
import { trackUnhandledRejections } from '../test-helpers/unhandled.js';
import { createManualClock } from '../time/manual-clock.js';
import { createBackoff } from './backoff.js';
import { createRetryBudget } from './budget.js';
import { type RetryAttemptInfo, withRetry } from './with-retry.js';

const transient = (label = 'flaky') => Object.assign(new Error(label), { status: 503 });
const backoff = createBackoff({ baseDelayMs: 100, jitter: 'none' });

const unhandled = trackUnhandledRejections();

/** An op that fails with the given errors in order, then succeeds with 'ok'. */
function failing(...errors: unknown[]) {
  const op = vi.fn(async (_signal: AbortSignal) => {
    if (op.mock.calls.length <= errors.length) throw errors[op.mock.calls.length - 1];
    return 'ok';
  });
  return op;
}

describe('withRetry', () => {
  it('returns the first success and passes neverAbortedSignal when there is no signal', async () => {
    const op = vi.fn(async (_signal: AbortSignal) => 42);
    await expect(withRetry(op)).resolves.toBe(42);
    expect(op).toHaveBeenCalledTimes(1);
    expect(op.mock.calls[0]?.[0]).toBe(neverAbortedSignal);
  });

  it('retries transient failures on the backoff schedule, onRetry before each sleep', async () => {
    const clock = createManualClock();
    const seen: (RetryAttemptInfo & { at: number })[] = [];
    const e1 = transient('1');
    const e2 = transient('2');
    const op = failing(e1, e2);
    const result = clock.run(
      withRetry(op, {
        backoff,
        sleep: clock.sleep,
        clock,
        onRetry: (info) => seen.push({ ...info, at: clock() }),
      }),
    );
    await expect(result).resolves.toBe('ok');
    expect(op).toHaveBeenCalledTimes(3);
    expect(seen).toEqual([
      { attempt: 1, delayMs: 100, error: e1, at: 0 },
      { attempt: 2, delayMs: 200, error: e2, at: 100 },
    ]);
    expect(clock()).toBe(300);
  });

  it('rethrows the last error unchanged after the last attempt (default 3)', async () => {
    const clock = createManualClock();
    const last = transient('last');
    const op = failing(transient('a'), transient('b'), last);
    await expect(clock.run(withRetry(op, { backoff, sleep: clock.sleep }))).rejects.toBe(last);
    expect(op).toHaveBeenCalledTimes(3);
  });

  it('does not retry what classify refuses (default: isTransientError)', async () => {
    const permanent = Object.assign(new Error('bad request'), { status: 400 });
    const op = failing(permanent);
    await expect(withRetry(op, { backoff })).rejects.toBe(permanent);
    expect(op).toHaveBeenCalledTimes(1);
    const custom = failing(new Error('x'), new Error('y'));
    const clock = createManualClock();
    const classify = vi.fn(() => ({ retry: true }));
    await expect(
      clock.run(withRetry(custom, { backoff, classify, sleep: clock.sleep })),
    ).resolves.toBe('ok');
    expect(classify.mock.calls.map((c) => (c as unknown[])[1])).toEqual([1, 2]);
  });

  it('attempts defaults to backoff.budgetedAttempts; more than that throws', async () => {
    const budgeted = createBackoff({
      baseDelayMs: 10,
      jitter: 'none',
      attempts: 2,
      maxTotalDelayMs: 10,
    });
    const clock = createManualClock();
    const op = failing(transient(), transient(), transient());
    await expect(
      clock.run(withRetry(op, { backoff: budgeted, sleep: clock.sleep })),
    ).rejects.toThrow('flaky');
    expect(op).toHaveBeenCalledTimes(2);
    expect(() => withRetry(op, { backoff: budgeted, attempts: 3 })).toThrow(
      /attempts 3 exceeds the backoff's budgetedAttempts 2/,
    );
  });

  it('never calls op on an already aborted signal', async () => {
    const op = vi.fn(async () => 1);
    const reason = new Error('gone');
    await expect(withRetry(op, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(withRetry(op, { signal: AbortSignal.abort('why') })).rejects.toSatisfy(
      isOperationAbortedError,
    );
    expect(op).not.toHaveBeenCalled();
  });

  it('never retries a cancellation and never shows it to classify', async () => {
    const ac = new AbortController();
    const classify = vi.fn(() => true);
    const op = vi.fn(async () => {
      ac.abort('user left');
      throw transient();
    });
    const result = withRetry(op, { backoff, signal: ac.signal, classify });
    await expect(result).rejects.toSatisfy(isOperationAbortedError);
    expect(op).toHaveBeenCalledTimes(1);
    expect(classify).not.toHaveBeenCalled();
  });

  it("passes an enclosing deadline's DeadlineExceededError through unchanged", async () => {
    const ac = new AbortController();
    const outer = new DeadlineExceededError(1000);
    const op = vi.fn(async () => {
      ac.abort(outer);
      throw new DeadlineExceededError(50); // the inner attempt's own timeout: transient
    });
    await expect(withRetry(op, { backoff, signal: ac.signal })).rejects.toBe(outer);
    expect(op).toHaveBeenCalledTimes(1);
  });

  it('an abort during the backoff sleep rejects at once, without another attempt', async () => {
    const clock = createManualClock();
    const ac = new AbortController();
    const op = failing(transient(), transient());
    const result = withRetry(op, { backoff, signal: ac.signal, sleep: clock.sleep });
    result.catch(() => {});
    await clock.flush();
    expect(clock.pending).toBe(1);
    ac.abort(new Error('stop'));
    await expect(result).rejects.toThrow('stop');
    expect(op).toHaveBeenCalledTimes(1);
    expect(clock.pending).toBe(0);
    expect(clock()).toBe(0);
  });

  it('timeoutMs: a retry that cannot start before the deadline is skipped; the last error at once', async () => {
    const clock = createManualClock();
    const op = vi.fn(async (_signal: AbortSignal) => {
      throw transient();
    });
    const result = clock.run(
      withRetry(op, { backoff, attempts: 10, timeoutMs: 250, sleep: clock.sleep, clock }),
    );
    await expect(result).rejects.toThrow('flaky');
    // Attempts at 0 and 100; the next would start at 300, after the deadline at 250.
    expect(clock()).toBe(100);
    expect(op).toHaveBeenCalledTimes(2);
    expect(clock.pending).toBe(0);
  });

  it('timeoutMs bounds an attempt still running at the deadline with DeadlineExceededError', async () => {
    const clock = createManualClock();
    const signals: AbortSignal[] = [];
    const op = vi.fn(async (signal: AbortSignal) => {
      signals.push(signal);
      if (signals.length === 1) throw transient();
      return new Promise<string>(() => {});
    });
    const result = clock.run(
      withRetry(op, { backoff, attempts: 10, timeoutMs: 250, sleep: clock.sleep, clock }),
    );
    await expect(result).rejects.toSatisfy(isDeadlineExceededError);
    expect(clock()).toBe(250);
    expect(op).toHaveBeenCalledTimes(2);
    expect(isDeadlineExceededError(signals[1]?.reason)).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it('a refused budget ends the chain with the last error; requests deposit', async () => {
    const clock = createManualClock();
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0.1, ttlMs: 10_000, clock });
    const e1 = transient('first');
    const e2 = transient('second');
    const op = failing(e1, e2);
    await expect(clock.run(withRetry(op, { backoff, budget, sleep: clock.sleep }))).rejects.toBe(
      e2,
    );
    expect(op).toHaveBeenCalledTimes(2);
    expect(budget.stats()).toEqual({ requests: 1, retries: 1, available: 0 });
  });

  it('server pushback (retryAfterMs on the error or the verdict) replaces the backoff', async () => {
    const clock = createManualClock();
    const delays: number[] = [];
    const op = failing(Object.assign(transient(), { retryAfterMs: 5000 }), new Error('plain'));
    const result = withRetry(op, {
      backoff,
      sleep: clock.sleep,
      classify: (e) => (e instanceof Error && e.message === 'plain' ? { retryAfterMs: 30 } : true),
      onRetry: (info) => delays.push(info.delayMs),
    });
    await expect(clock.run(result)).resolves.toBe('ok');
    // The backoff alone would wait 100 then 200.
    expect(delays).toEqual([5000, 30]);
  });

  it('defaults to the one default backoff: exponential from 100 ms with full jitter', async () => {
    const clock = createManualClock();
    const delays: number[] = [];
    const op = failing(transient(), transient());
    const result = withRetry(op, {
      sleep: clock.sleep,
      onRetry: (info) => delays.push(info.delayMs),
    });
    await expect(clock.run(result)).resolves.toBe('ok');
    expect(delays[0]).toBeGreaterThanOrEqual(0);
    expect(delays[0]).toBeLessThan(100);
    expect(delays[1]).toBeLessThan(200);
  });

  it('an observer that throws does not break the chain', async () => {
    const clock = createManualClock();
    const op = failing(transient());
    const onRetry = () => {
      throw new Error('observer bug');
    };
    await expect(clock.run(withRetry(op, { backoff, onRetry, sleep: clock.sleep }))).resolves.toBe(
      'ok',
    );
  });

  it('a synchronous throw from op is a failed attempt like any other', async () => {
    const clock = createManualClock();
    let calls = 0;
    const op = (_signal: AbortSignal) => {
      calls++;
      if (calls === 1) throw transient();
      return 'sync ok';
    };
    await expect(clock.run(withRetry(op, { backoff, sleep: clock.sleep }))).resolves.toBe(
      'sync ok',
    );
  });

  it('rejects invalid options synchronously, naming them', () => {
    const op = async () => 1;
    expect(() => withRetry(op, { attempts: 0 })).toThrow(/attempts must be >= 1/);
    expect(() => withRetry(op, { attempts: 1.5 })).toThrow(/attempts must be an integer/);
    expect(() => withRetry(op, { attempts: Number.NaN })).toThrow(/attempts must be a number/);
    expect(() => withRetry(op, { timeoutMs: -1 })).toThrow(/timeoutMs must be > 0/);
    expect(() => withRetry(op, { classify: 1 as never })).toThrow(/classify must be a function/);
    expect(() => withRetry(op, { backoff: {} as never })).toThrow(/backoff\.baseDelayMs/);
    expect(() => withRetry(op, { attempts: 11 })).toThrow(/attempts must be <= 10/);
    expect(() => withRetry(op, { signal: {} as never })).toThrow(/signal must be an AbortSignal/);
    expect(() => withRetry('op' as never)).toThrow(/withRetry\(op\) must be a function/);
  });
});

describe('withRetry properties', () => {
  it('settles exactly once, with no unhandled rejection, under random failures and abort timings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('ok', 'transient', 'permanent', 'sync-throw', 'abort-inside'), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.option(fc.integer({ min: 0, max: 2000 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 3000 }), { nil: undefined }),
        fc.integer({ min: 1, max: 6 }),
        async (behaviours, abortAt, timeoutMs, attempts) => {
          const clock = createManualClock();
          const ac = new AbortController();
          let call = 0;
          const op = (signal: AbortSignal): Promise<string> | string => {
            const b = behaviours[call++ % behaviours.length];
            if (b === 'sync-throw') throw transient();
            if (b === 'abort-inside') ac.abort(new Error('inside'));
            return clock.sleep(30, signal).then(() => {
              if (b === 'ok') return 'ok';
              throw b === 'permanent' ? new Error('permanent') : transient();
            });
          };
          if (abortAt !== undefined) void clock.sleep(abortAt).then(() => ac.abort('late'));
          let settlements = 0;
          const promise = withRetry(op, {
            backoff,
            attempts,
            signal: ac.signal,
            sleep: clock.sleep,
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
          }).then(
            () => {
              settlements++;
            },
            () => {
              settlements++;
            },
          );
          await clock.run(promise).catch(() => {});
          // Let any late rejection surface before counting.
          await clock.run(clock.sleep(10_000));
          await clock.flush();
          expect(settlements).toBe(1);
          expect(unhandled.reasons).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('withRetry: classifier and sleep failures', () => {
  it('a throwing classify rejects with ErrorPolicyError whose cause is the operation error (as protect)', async () => {
    const opError = transient('op');
    const policyError = new Error('classifier bug');
    const p = withRetry(failing(opError), {
      classify: () => {
        throw policyError;
      },
      sleep: createManualClock().sleep,
    });
    const error = await p.catch((e: unknown) => e);
    expect(isErrorPolicyError(error)).toBe(true);
    expect((error as Error).cause).toBe(opError);
    expect((error as AggregateError).errors).toEqual([opError, policyError]);
  });

  it('a verdict that is not a boolean or an ErrorVerdict (an async classify) rejects with TypeError, never retries', async () => {
    const opError = transient('op');
    for (const classify of [async () => false, () => undefined, () => 'yes']) {
      const op = failing(opError);
      const error = await withRetry(op, {
        classify: classify as never,
        sleep: createManualClock().sleep,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/classify must return a boolean or an ErrorVerdict/);
      expect((error as Error).cause).toBe(opError);
      expect(op).toHaveBeenCalledTimes(1);
    }
  });

  it('a sleep that rejects or throws only shortens the wait: the retry runs at once', async () => {
    const opError = transient('op');
    const sleeps = [
      () => Promise.reject(new Error('sleep broke')),
      () => {
        throw new Error('sleep threw');
      },
    ];
    for (const sleep of sleeps) {
      const op = failing(opError, opError);
      await expect(withRetry(op, { backoff, sleep })).resolves.toBe('ok');
      expect(op).toHaveBeenCalledTimes(3);
    }
    expect(unhandled.reasons).toEqual([]);
  });
});
