import { describe, expect, it } from 'vitest';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { neverAbortedSignal } from '../internal/abort.js';
import { protect } from '../protect/protect.js';
import { attemptWithTimeout } from '../routing/attempt.js';
import { sharedTimerWheel } from './timer-wheel.js';
import { withTimeout } from './with-timeout.js';

// 600 ms rounds to a 4 ms grain: two calls started in one synchronous burst land in one
// slot of the shared wheel, which is where the old code handed them one shared signal.
const TIMEOUT_MS = 600;
const hang = () => new Promise<never>(() => {});

/** Starts a winner and a hung loser in one burst; returns the winner's signal after the loser timed out. */
async function winnerSignalAfterLoserTimesOut(
  start: (op: (signal: AbortSignal) => Promise<unknown>) => Promise<unknown>,
): Promise<AbortSignal> {
  // Warm up first, so the two calls below start well within one grain of each other.
  await start(() => Promise.resolve('warm'));
  let winnerSignal: AbortSignal | undefined;
  const winner = start((signal) => {
    winnerSignal = signal;
    return Promise.resolve('won');
  });
  const loser = start(() => hang());
  expect(await winner).toBe('won');
  const lost = await loser.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isDeadlineExceededError(lost)).toBe(true);
  return winnerSignal as AbortSignal;
}

describe('each call has its own signal', () => {
  it('withTimeout: a call that won keeps a quiet signal when a call of its slot times out', async () => {
    const signal = await winnerSignalAfterLoserTimesOut((op) =>
      // Declared parameter: the op takes a signal (a body read after the call won, say).
      withTimeout((s: AbortSignal) => op(s), { timeoutMs: TIMEOUT_MS }),
    );
    expect(signal.aborted).toBe(false);
  });

  it('protect: the winning attempt keeps a quiet signal when an attempt of its slot times out', async () => {
    const run = protect({ attemptTimeoutMs: TIMEOUT_MS });
    const signal = await winnerSignalAfterLoserTimesOut((op) => run(({ signal: s }) => op(s)));
    expect(signal.aborted).toBe(false);
  });

  it("router attempts: a winner's signal survives a timed-out attempt of its slot", async () => {
    let n = 0;
    const signal = await winnerSignalAfterLoserTimesOut((op) =>
      attemptWithTimeout(
        (_r: null, ctx) => op(ctx.signal),
        null,
        neverAbortedSignal,
        'p',
        ++n,
        TIMEOUT_MS,
        false,
        sharedTimerWheel,
      ),
    );
    expect(signal.aborted).toBe(false);
  });

  it("a loser's own signal still aborts with its deadline", async () => {
    let loserSignal: AbortSignal | undefined;
    const error = await withTimeout(
      (s) => {
        loserSignal = s;
        return hang();
      },
      { timeoutMs: 20 },
    ).catch((e: unknown) => e);
    expect(loserSignal?.aborted).toBe(true);
    expect(loserSignal?.reason).toBe(error);
  });
});
