import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHealthChecker } from '../health/checker.js';
import { createHealthRegistry } from '../health/registry.js';
import { createTokenBucket } from '../limit/token-bucket.js';
import { protect } from '../protect/protect.js';
import type { ProtectOptions } from '../protect/types.js';
import type { Backoff } from '../retry/backoff.js';
import { backgroundSleep, systemSleep } from './sleep.js';
import { keepAlive, MAX_HOST_TIMER_MS, startTimer, stopTimer } from './timer.js';

// Node (and browsers) fire a host timer longer than 2^31-1 ms after 1 ms; every wait must
// still last its full length.
const LONG = 2 ** 31;
const DAY = 86_400_000;

/** Real time the tests below give a long wait to (wrongly) finish in. */
const GRACE_MS = 60;
const pause = (ms: number) =>
  new Promise((resolve) => setImmediate(resolve)).then(() => systemSleep(ms));

/** Whether `promise` settles within `ms` of real time. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await pause(ms);
  return settled;
}

describe('startTimer past the host limit (fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('chains host timers: fires after the full length, not after 1 ms', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    startTimer(3 * MAX_HOST_TIMER_MS + 5, fn);
    vi.advanceTimersByTime(1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(3 * MAX_HOST_TIMER_MS + 3);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stopTimer cancels the chain at any link', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const first = startTimer(2 * MAX_HOST_TIMER_MS + 10, fn);
    stopTimer(first);
    const second = startTimer(2 * MAX_HOST_TIMER_MS + 10, fn);
    vi.advanceTimersByTime(MAX_HOST_TIMER_MS + 1); // now on the second link
    stopTimer(second);
    vi.advanceTimersByTime(3 * MAX_HOST_TIMER_MS);
    expect(fn).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a wait of exactly the limit is one host timer; keepAlive applies to every later link', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    startTimer(MAX_HOST_TIMER_MS, fn);
    vi.advanceTimersByTime(MAX_HOST_TIMER_MS - 1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.useRealTimers();

    // Real host timers, to read hasRef(): the chain's unref survives the hop to the next link.
    const chained = startTimer(LONG, fn, true) as unknown as { link: { hasRef(): boolean } };
    expect(chained.link.hasRef()).toBe(false);
    keepAlive(chained as never, true);
    expect(chained.link.hasRef()).toBe(true);
    keepAlive(chained as never, false);
    expect(chained.link.hasRef()).toBe(false);
    stopTimer(chained as never);
  });

  it('systemSleep and backgroundSleep wait past the limit', async () => {
    vi.useFakeTimers();
    for (const sleep of [systemSleep, backgroundSleep]) {
      let done = false;
      void sleep(LONG + 100).then(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(LONG);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(100);
      expect(done).toBe(true);
    }
  });
});

describe('long waits on the real host timer', () => {
  it('systemSleep(2 ** 31) and backgroundSleep(2 ** 31) do not end early; abort ends them', async () => {
    for (const sleep of [systemSleep, backgroundSleep]) {
      const ac = new AbortController();
      const waiting = sleep(LONG, ac.signal);
      expect(await settlesWithin(waiting, GRACE_MS)).toBe(false);
      ac.abort();
      await waiting;
    }
  });

  it.each([
    [
      "a classifier's 30-day retryAfterMs",
      {
        retry: { attempts: 4, maxPushbackMs: 31 * DAY },
        classify: () => ({ retryAfterMs: 30 * DAY }),
      },
    ],
    // A backoff whose first retry waits 2^31 ms, past the host timer's limit.
    [
      'a backoff past the limit',
      { retry: { attempts: 3, backoff: { delayFor: () => LONG } as unknown as Backoff } },
    ],
  ] as const)('protect waits out %s instead of retrying at once', async (_, options) => {
    let calls = 0;
    const ac = new AbortController();
    const call = protect(options as ProtectOptions)(
      async () => {
        calls++;
        throw new Error('down');
      },
      { signal: ac.signal },
    );
    expect(await settlesWithin(call, GRACE_MS)).toBe(false);
    expect(calls).toBe(1);
    ac.abort();
    await expect(call).rejects.toThrow();
    expect(calls).toBe(1);
  });

  it("a drained token bucket's acquire waits the whole 30-day refill", async () => {
    const bucket = createTokenBucket({ capacity: 10_000, refillPerSecond: 10_000 / 2_592_000 });
    expect(bucket.tryAcquire(10_000).ok).toBe(true);
    const ac = new AbortController();
    const acquired = bucket.acquire(10_000, ac.signal);
    expect(await settlesWithin(acquired, GRACE_MS)).toBe(false);
    ac.abort();
    await expect(acquired).rejects.toThrow();
  });

  it('a health checker with intervalMs 3e9 probes once, not every millisecond', async () => {
    let probes = 0;
    const checker = createHealthChecker({
      registry: createHealthRegistry(),
      targets: { a: 'a' },
      probe: async () => {
        probes++;
      },
      intervalMs: 3e9,
      timeoutMs: 1000,
    });
    await pause(GRACE_MS);
    checker.stop();
    expect(probes).toBe(1);
  });
});
