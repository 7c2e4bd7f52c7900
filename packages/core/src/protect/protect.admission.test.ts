import { describe, expect, it } from 'vitest';
import { isCircuitOpenError } from '../errors/circuit-open-error.js';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { isRateLimitError } from '../errors/rate-limit-error.js';
import { createTokenBucket } from '../limit/token-bucket.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

/** A promise settled from outside. */
function gate<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A runner with one slot, a queue and a 200 ms call deadline, on a manual clock. */
function oneSlot200ms() {
  const clock = createManualClock();
  return {
    clock,
    run: protect({
      timeoutMs: 200,
      concurrency: { limit: 1, maxQueue: 5 },
      clock,
      sleep: clock.sleep,
    }),
  };
}

describe('protect: admission order (deadline → circuit → rate limit → slot)', () => {
  it('time queued for a slot counts against timeoutMs: the call fails at its deadline without running', async () => {
    const { clock, run } = oneSlot200ms();
    const slow = gate<string>();
    const first = run(() => slow.promise).catch((e: unknown) => e);
    let ran = 0;
    const queued = run(() => ++ran).catch((e: unknown) => e);
    expect(run.queued).toBe(1);
    await clock.advanceAsync(200);
    expect(isDeadlineExceededError(await queued)).toBe(true);
    expect(ran).toBe(0);
    expect(run.queued).toBe(0);
    expect(isDeadlineExceededError(await first)).toBe(true);
    slow.resolve('late');
    await clock.flush();
    expect(clock.pending).toBe(0);
  });

  it('a call that waited runs attempt 1 with what is left of its deadline', async () => {
    const { clock, run } = oneSlot200ms();
    const slow = gate<string>();
    const first = run(() => slow.promise);
    const second = run(() => new Promise(() => {})).catch((e: unknown) => e);
    await clock.advanceAsync(150);
    slow.resolve('ok');
    await expect(first).resolves.toBe('ok');
    // 150 ms were spent queued: the attempt is cut 50 ms after it starts, not 200 ms.
    await clock.advanceAsync(50);
    expect(isDeadlineExceededError(await second)).toBe(true);
  });

  it('a circuit that refuses (a half-open probe in flight) refuses before the slot: no place in the queue, no wait', async () => {
    const clock = createManualClock();
    const run = protect({
      concurrency: { limit: 1, maxQueue: 1 },
      circuit: { failureThreshold: 1, failureSpanMs: 0, openDurationMs: 100 },
      clock,
      sleep: clock.sleep,
    });
    await run(() => Promise.reject(new Error('down'))).catch(() => {});
    await clock.advanceAsync(100);
    const slow = gate<string>();
    const probe = run(() => slow.promise);
    let ran = 0;
    const refused = run(() => ++ran).catch((e: unknown) => e);
    expect(run.active).toBe(1);
    expect(run.queued).toBe(0);
    expect(isCircuitOpenError(await refused)).toBe(true);
    slow.resolve('ok');
    await expect(probe).resolves.toBe('ok');
    expect(ran).toBe(0);
  });

  it('a rate-limited call takes no slot and no place in the queue', async () => {
    const clock = createManualClock();
    const run = protect({
      concurrency: { limit: 1, maxQueue: 1 },
      rateLimit: createTokenBucket({ capacity: 1, refillPerSecond: 1, clock }),
      clock,
      sleep: clock.sleep,
    });
    const slow = gate<string>();
    const first = run(() => slow.promise);
    const refused = run(() => 'ran').catch((e: unknown) => e);
    // Refused at once, not after the slow call: it never waited in the queue.
    expect(run.queued).toBe(0);
    expect(isRateLimitError(await refused)).toBe(true);
    slow.resolve('ok');
    await expect(first).resolves.toBe('ok');
  });
});
