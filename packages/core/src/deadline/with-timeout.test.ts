import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { isDeadlineTimerError } from '../errors/deadline-timer-error.js';
import { isOperationAbortedError } from '../errors/operation-aborted-error.js';
import { neverAbortedSignal } from '../internal/abort.js';
import { trackUnhandledRejections } from '../test-helpers/unhandled.js';
import { createManualClock } from '../time/manual-clock.js';
import { createDeadline } from './deadline.js';
import { withTimeout } from './with-timeout.js';

const unhandled = trackUnhandledRejections();

/** An op that never settles on its own but records the signal it got. */
function hanging() {
  const seen: AbortSignal[] = [];
  const op = (signal: AbortSignal) => {
    seen.push(signal);
    return new Promise<never>(() => {});
  };
  return { op, seen };
}

describe('withTimeout (injected sleep)', () => {
  it('resolves with op and clears the pending timer when op wins', async () => {
    const clock = createManualClock();
    const result = withTimeout(async () => 'done', { timeoutMs: 1000, sleep: clock.sleep, clock });
    await expect(result).resolves.toBe('done');
    expect(clock.pending).toBe(0);
  });

  it('deadline first: rejects at once with DeadlineExceededError and aborts the op signal with it', async () => {
    const clock = createManualClock();
    const { op, seen } = hanging();
    const result = clock.run(withTimeout(op, { timeoutMs: 500, sleep: clock.sleep }));
    const error = await result.catch((e: unknown) => e);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect((error as { timeoutMs: number }).timeoutMs).toBe(500);
    expect(clock()).toBe(500);
    expect(seen[0]?.aborted).toBe(true);
    expect(seen[0]?.reason).toBe(error);
  });

  it("absorbs op's later rejection (no unhandled rejection)", async () => {
    const clock = createManualClock();
    const op = async (signal: AbortSignal) => {
      await clock.sleep(2000);
      throw new Error(`late, aborted=${signal.aborted}`);
    };
    await expect(
      clock.run(withTimeout(op, { timeoutMs: 100, sleep: clock.sleep })),
    ).rejects.toSatisfy(isDeadlineExceededError);
    await clock.run(clock.sleep(5000));
    await clock.flush();
    expect(unhandled.reasons).toEqual([]);
  });

  it('caller abort first: rejects at once (OperationAbortedError for a non-Error reason)', async () => {
    const clock = createManualClock();
    const ac = new AbortController();
    const { op, seen } = hanging();
    const result = withTimeout(op, { timeoutMs: 1000, signal: ac.signal, sleep: clock.sleep });
    ac.abort('user left');
    const error = await result.catch((e: unknown) => e);
    expect(isOperationAbortedError(error)).toBe(true);
    expect(seen[0]?.reason).toBe(error);
    expect(clock.pending).toBe(0);
  });

  it('caller abort with an Error reason passes it through unchanged', async () => {
    const ac = new AbortController();
    const reason = new Error('outer deadline');
    const result = withTimeout(hanging().op, { timeoutMs: 1000, signal: ac.signal });
    ac.abort(reason);
    await expect(result).rejects.toBe(reason);
  });

  it('an already aborted signal never starts op', async () => {
    const op = vi.fn(async () => 1);
    await expect(
      withTimeout(op, { timeoutMs: 1000, signal: AbortSignal.abort('x') }),
    ).rejects.toSatisfy(isOperationAbortedError);
    expect(op).not.toHaveBeenCalled();
  });

  it('a sleep that rejects → DeadlineTimerError with the cause, op signal aborted', async () => {
    const broken = new Error('timer broke');
    const { op, seen } = hanging();
    const error = await withTimeout(op, {
      timeoutMs: 1000,
      sleep: () => Promise.reject(broken),
    }).catch((e: unknown) => e);
    expect(isDeadlineTimerError(error)).toBe(true);
    expect(isDeadlineExceededError(error)).toBe(false);
    expect((error as Error).cause).toBe(broken);
    expect(seen[0]?.reason).toBe(error);
  });

  it('a sleep that throws synchronously → DeadlineTimerError, op never started', async () => {
    const op = vi.fn(async () => 1);
    const sleep = () => {
      throw new TypeError('no timers here');
    };
    const error = await withTimeout(op, { timeoutMs: 1000, sleep }).catch((e: unknown) => e);
    expect(isDeadlineTimerError(error)).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect(op).not.toHaveBeenCalled();
  });

  it('op errors (async and sync) pass through unchanged and clear the timer', async () => {
    const clock = createManualClock();
    const boom = new Error('boom');
    await expect(
      withTimeout(async () => Promise.reject(boom), { timeoutMs: 10, sleep: clock.sleep }),
    ).rejects.toBe(boom);
    await expect(
      withTimeout(
        () => {
          throw boom;
        },
        { timeoutMs: 10, sleep: clock.sleep },
      ),
    ).rejects.toBe(boom);
    await expect(withTimeout(() => 7, { timeoutMs: 10, sleep: clock.sleep })).resolves.toBe(7);
    expect(clock.pending).toBe(0);
  });

  it('timeoutMs 0 or an expired deadline rejects without starting op; the earlier of timeoutMs and deadline applies', async () => {
    const clock = createManualClock(1000);
    const op = vi.fn(async () => 1);
    await expect(withTimeout(op, { timeoutMs: 0 })).rejects.toSatisfy(isDeadlineExceededError);
    const expired = createDeadline({ at: 900, clock });
    await expect(withTimeout(op, { deadline: expired })).rejects.toSatisfy(isDeadlineExceededError);
    expect(op).not.toHaveBeenCalled();
    const soon = createDeadline({ timeoutMs: 200, clock });
    const { op: stuck } = hanging();
    const result = clock.run(
      withTimeout(stuck, { timeoutMs: 5000, deadline: soon, sleep: clock.sleep }),
    );
    await expect(result).rejects.toSatisfy(isDeadlineExceededError);
    expect(clock()).toBe(1200);
  });

  it('rejects invalid options naming them', () => {
    const op = async () => 1;
    expect(() => withTimeout(op, { timeoutMs: -1 })).toThrow(/timeoutMs must be >= 0/);
    expect(() => withTimeout(op, { timeoutMs: Number.NaN })).toThrow(/timeoutMs must be a number/);
    expect(() => withTimeout(op, { timeoutMs: '5 parsecs' as never })).toThrow(
      /timeoutMs must be a number/,
    );
    expect(() => withTimeout(op, {})).toThrow(/needs timeoutMs or deadline/);
    expect(() => withTimeout(op, { timeoutMs: 1, sleep: 3 as never })).toThrow(
      /sleep must be a function/,
    );
    expect(() => withTimeout(op, { deadline: {} as never })).toThrow(/deadline.remainingMs/);
  });

  it('timeoutMs is a number of ms: a duration string is refused, op never starts', () => {
    let ran = false;
    const op = async () => {
      ran = true;
    };
    expect(() => withTimeout(op, { timeoutMs: '2s' as never })).toThrow(
      new TypeError('timeoutMs must be a number, got "2s"'),
    );
    expect(() => withTimeout(op, { timeout: 2000 } as never)).toThrow(
      'withTimeout: unknown option `timeout` — did you mean `timeoutMs`?',
    );
    expect(ran).toBe(false);
  });
});

describe('withTimeout (shared host timer)', () => {
  it('an op without parameters gets neverAbortedSignal; a signal-taking op gets a live one', async () => {
    let received: AbortSignal | undefined;
    await withTimeout(
      (signal) => {
        received = signal;
        return 1;
      },
      { timeoutMs: 1000 },
    );
    expect(received).toBeDefined();
    expect(received).not.toBe(neverAbortedSignal);
    expect(received?.aborted).toBe(false);
  });

  it('fires on real time, aborts the signal with the error, and spares ops that already won', async () => {
    const { op, seen } = hanging();
    let winnerSignal: AbortSignal | undefined;
    const winner = withTimeout(
      async (signal) => {
        winnerSignal = signal;
        return 'won';
      },
      { timeoutMs: 30 },
    );
    await expect(winner).resolves.toBe('won');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const start = performance.now();
    const error = await withTimeout(op, { timeoutMs: 30 }).catch((e: unknown) => e);
    expect(performance.now() - start).toBeGreaterThanOrEqual(25);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(seen[0]?.aborted).toBe(true);
    expect(seen[0]?.reason).toBe(error);
    // The winner's signal is its own: another call's deadline never aborts it.
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(winnerSignal?.aborted).toBe(false);
  });

  it('caller abort with the shared timer', async () => {
    const ac = new AbortController();
    const { op, seen } = hanging();
    const result = withTimeout(op, { timeoutMs: 60_000, signal: ac.signal });
    ac.abort(new Error('bye'));
    await expect(result).rejects.toThrow('bye');
    expect(seen[0]?.aborted).toBe(true);
  });
});

describe('withTimeout properties', () => {
  it('settles exactly once with no unhandled rejection under random op behaviours and abort timings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('resolve', 'reject', 'sync-throw', 'sync-value', 'hang', 'reject-on-abort'),
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 1, max: 200 }),
        fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
        fc.constantFrom('ok', 'reject', 'throw'),
        async (behaviour, opMs, timeoutMs, abortAt, sleepMode) => {
          const clock = createManualClock();
          const ac = new AbortController();
          const op = (signal: AbortSignal): Promise<string> | string => {
            if (behaviour === 'sync-throw') throw new Error('sync');
            if (behaviour === 'sync-value') return 'v';
            if (behaviour === 'hang') return new Promise(() => {});
            if (behaviour === 'reject-on-abort') {
              return new Promise((_, reject) =>
                signal.addEventListener('abort', () => reject(signal.reason)),
              );
            }
            return clock.sleep(opMs).then(() => {
              if (behaviour === 'reject') throw new Error('op failed');
              return 'v';
            });
          };
          const sleep =
            sleepMode === 'ok'
              ? clock.sleep
              : sleepMode === 'reject'
                ? (ms: number, s?: AbortSignal) =>
                    clock.sleep(ms / 2, s).then(() => Promise.reject(new Error('t')))
                : () => {
                    throw new Error('t');
                  };
          if (abortAt !== undefined) void clock.sleep(abortAt).then(() => ac.abort('stop'));
          let settlements = 0;
          const count = () => {
            settlements++;
          };
          const promise = withTimeout(op, { timeoutMs, signal: ac.signal, sleep }).then(
            count,
            count,
          );
          await clock.run(promise);
          await clock.run(clock.sleep(1000));
          await clock.flush();
          expect(settlements).toBe(1);
          expect(unhandled.reasons).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('withTimeout: signals of one slot', () => {
  it('gives each call of a burst its own signal, with no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const signals = new Set<AbortSignal>();
      const calls = Array.from({ length: 50 }, () =>
        withTimeout(
          (signal) => {
            signals.add(signal);
            signal.addEventListener('abort', () => {});
            return Promise.resolve(1);
          },
          { timeoutMs: 60_000 },
        ),
      );
      await Promise.all(calls);
      // Calls started in one synchronous burst land in few slots, yet no two share a signal.
      expect(signals.size).toBe(50);
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
