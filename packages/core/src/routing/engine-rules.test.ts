import { describe, expect, it } from 'vitest';
import { isRoutingError } from '../errors/routing-error.js';
import type { RetryBudget } from '../retry/budget.js';
import type { ManualClock } from '../time/manual-clock.js';
import { call, type FakeResource, failing, fake, setup } from './test-helpers/fake-providers.js';
import type { Router } from './types.js';

const run = (router: Router<FakeResource>) => router.execute((r, ctx) => call(r, ctx));

/** Runs one request with `deadlineAt` ms from now; settles with its value or error. */
function runBy(router: Router<FakeResource>, clock: ManualClock, inMs: number): Promise<unknown> {
  const deadlineAt = clock() + inMs;
  return clock
    .run(router.execute((r, ctx) => call(r, ctx), { deadlineAt }))
    .catch((e: unknown) => e);
}

/** Makes `r` fail every call with `Error('<id> down')` after `ms` of virtual time. */
function slowFailing(r: FakeResource, clock: ManualClock, ms: number, times?: number[]): void {
  r.behave = async (_n, signal) => {
    times?.push(clock());
    await clock.sleep(ms, signal);
    throw new Error(`${r.id} down`);
  };
}

/** A budget that counts deposits and withdrawals and allows `allowed` withdrawals. */
function countingBudget(allowed: number) {
  const seen = { requests: 0, retries: 0 };
  const budget = {
    recordRequest: () => void seen.requests++,
    tryRetry: () => {
      seen.retries++;
      return seen.retries <= allowed;
    },
  } as unknown as RetryBudget;
  return { budget, seen };
}

describe('router decisions go through the attempt engine', () => {
  it('failover is charged to the budget; a refused failover ends with a RoutingError', async () => {
    const { budget, seen } = countingBudget(1);
    const { router, res, clock } = setup(['a', 'b', 'c'], { budget });
    failing(res.a!);
    failing(res.b!);
    const error = await clock.run(run(router)).catch((e: unknown) => e);
    expect(isRoutingError(error)).toBe(true);
    // a failed, the failover to b was withdrawn, the failover to c refused.
    expect([res.a!.calls, res.b!.calls, res.c!.calls]).toEqual([1, 1, 0]);
    expect(seen).toEqual({ requests: 1, retries: 2 });
  });

  it('a hedged traversal charges its failovers to the budget too', async () => {
    const { budget, seen } = countingBudget(0);
    const { router, res, clock } = setup(['a', 'b'], { hedge: { delayMs: 50 }, budget });
    failing(res.a!);
    await expect(clock.run(run(router))).rejects.toSatisfy(isRoutingError);
    expect(res.b!.calls).toBe(0);
    expect(seen.retries).toBe(1);
  });

  it('a visit that never reached a provider fails over without the budget (both traversals)', async () => {
    for (const hedge of [undefined, { delayMs: 50 }]) {
      const { budget, seen } = countingBudget(0);
      const { router, res, clock } = setup(['a', 'b', 'c'], {
        budget,
        ...(hedge === undefined ? {} : { hedge }),
        // "a down" never left: no connection.
        classify: (e) => ({ neverSent: (e as Error).message === 'a down' }),
      });
      failing(res.a!);
      failing(res.b!);
      // a (never sent) → b free; b (sent) → c is charged, and refused by the empty budget.
      const error = await clock.run(run(router)).catch((e: unknown) => e);
      expect(isRoutingError(error)).toBe(true);
      expect([res.a!.calls, res.b!.calls, res.c!.calls]).toEqual([1, 1, 0]);
      expect(seen.retries).toBe(1);
      // Every provider but a answers: the budget is never asked.
      res.b!.behave = async () => 'ok:b';
      seen.retries = 0;
      await expect(clock.run(run(router))).resolves.toMatch(/^ok:/);
      expect(seen.retries).toBe(0);
    }
  });

  it('hedge.attempts counts the first visit', async () => {
    const { router, res, clock } = setup(['a', 'b', 'c', 'd'], {
      hedge: { delayMs: 10, attempts: 3 },
    });
    for (const id of ['a', 'b', 'c', 'd']) res[id] = Object.assign(res[id]!, fake(id, clock, 100));
    await expect(clock.run(run(router))).resolves.toBe('ok:a');
    expect([res.a!.calls, res.b!.calls, res.c!.calls, res.d!.calls]).toEqual([1, 1, 1, 0]);
  });

  it('server pushback replaces the provider backoff', async () => {
    const { router, res, clock } = setup(['a'], {
      protection: { retry: { attempts: 2, backoff: { baseDelayMs: 1_000, jitter: 'none' } } },
      classify: () => ({ retryAfterMs: 30 }),
    });
    const times: number[] = [];
    res.a!.behave = async (n) => {
      times.push(clock());
      if (n === 1) throw new Error('busy');
      return 'ok';
    };
    await expect(clock.run(run(router))).resolves.toBe('ok');
    expect(times[1]! - times[0]!).toBe(30);
  });

  it("a retry that cannot start before the visit's timeoutMs is skipped: the next provider gets the call", async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: {
        timeoutMs: 150,
        retry: { attempts: 3, backoff: { baseDelayMs: 100, jitter: 'none' } },
      },
    });
    const times: number[] = [];
    res.a!.behave = async () => {
      times.push(clock());
      throw new Error('a down');
    };
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    // Attempt 2 at +100; attempt 3 would start at +300, after the visit's deadline.
    expect(times.map((t) => t - times[0]!)).toEqual([0, 100]);
    expect(res.b!.calls).toBe(1);
  });

  it("execute's deadlineAt skips a retry that cannot start before it: the last error at once, no timer of its own", async () => {
    const { router, res, clock } = setup(['a'], {
      protection: { retry: { attempts: 3, backoff: { baseDelayMs: 2_000, jitter: 'none' } } },
    });
    const times: number[] = [];
    slowFailing(res.a!, clock, 10, times);
    const error = await runBy(router, clock, 1_000);
    expect(isRoutingError(error) && (error.errors[0] as Error).message).toBe('a down');
    // One attempt, ended at +10: the 2 s backoff would end past the deadline.
    expect(times).toHaveLength(1);
    expect(clock()).toBe(1_000_010);
    // The attempt itself ran without a router timer: its signal never aborted.
    expect(res.a!.signals[0]?.aborted).toBe(false);
  });

  it('attemptTimeoutMs left out: a hung visit is backed up at 3 x the p99 its siblings answered in; the backup wins, the hung visit is cancelled and counted against its provider', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { circuit: { failureThreshold: 1, failureSpanMs: 0 } },
    });
    // a fails at once (neutral for its circuit) and b answers in 50 ms, 20 times: a has no
    // latency of its own (as a provider black-holed from the start), b's p99 is 50 ms.
    const b = res.b!.behave;
    res.b!.behave = async (n, signal) => {
      await clock.sleep(50, signal);
      return b(n, signal);
    };
    failing(res.a!);
    const neutral = () => ({ retry: false, failover: true, countForCircuit: false });
    for (let i = 0; i < 20; i++) {
      await clock.run(router.execute((r, ctx) => call(r, ctx), { classify: neutral }));
    }
    expect(res.b!.calls).toBe(20);
    res.a!.behave = async (_n, signal) => {
      await clock.sleep(60_000, signal);
      if (signal.aborted) throw signal.reason;
      return 'late';
    };
    const t0 = clock();
    expect(await runBy(router, clock, 1_000)).toBe('ok:b');
    // Backed up at +150 (3 x b's 50 ms p99) on b (50 ms); a, cancelled, ran past its cut: a failure.
    expect(clock() - t0).toBe(200);
    expect(res.a!.signals.at(-1)?.aborted).toBe(true);
    await clock.flush();
    expect(router.circuit('a')?.state).toBe('open');
    expect(res.b!.calls).toBe(21);
  });

  it('attemptTimeoutMs left out: a slow visit is not cut while no other provider may answer (its circuit open): the call waits for it', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      selection: 'priority',
      protection: { circuit: { failureThreshold: 1, failureSpanMs: 0, openDurationMs: 60_000 } },
    });
    // a answers in 10 ms, 20 times: its p99 is 10 ms, so a derived cut would come at 100 ms.
    const a = res.a!.behave;
    res.a!.behave = async (n, signal) => {
      await clock.sleep(10, signal);
      return a(n, signal);
    };
    for (let i = 0; i < 20; i++) await clock.run(router.execute((r, ctx) => call(r, ctx)));
    // b's circuit is forced open: no failover could follow a cut of a.
    router.circuit('b')?.isolate();
    res.a!.behave = async (n, signal) => {
      await clock.sleep(300, signal);
      return a(n, signal);
    };
    const t0 = clock();
    expect(await runBy(router, clock, 1_000)).toBe('ok:a');
    expect(clock() - t0).toBe(300);
    expect(res.b!.calls).toBe(0);
  });

  it("no failover starts at or after execute's deadlineAt", async () => {
    // No attempt deadline: the attempt runs to the request's (a derived one would cut it once latency is known).
    const { router, res, clock } = setup(['a', 'b'], { protection: { attemptTimeoutMs: false } });
    slowFailing(res.a!, clock, 50);
    expect(isRoutingError(await runBy(router, clock, 50))).toBe(true);
    expect(res.b!.calls).toBe(0);
    // Before the deadline, the same failure fails over.
    expect(await runBy(router, clock, 51)).toBe('ok:b');
    expect(() => router.execute((r, ctx) => call(r, ctx), { deadlineAt: Number.NaN })).toThrow(
      /router\.execute options\.deadlineAt must be a number, got NaN/,
    );
  });

  it("no hedge starts at or after execute's deadlineAt", async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      hedge: { delayMs: 50 },
      protection: { attemptTimeoutMs: false },
    });
    res.a = Object.assign(res.a!, fake('a', clock, 100));
    const deadlineAt = clock() + 50;
    await expect(clock.run(router.execute((r, ctx) => call(r, ctx), { deadlineAt }))).resolves.toBe(
      'ok:a',
    );
    expect(res.b!.calls).toBe(0);
  });

  it('the visit deadline bounds a slow attempt even without an attempt timeout', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { timeoutMs: 40, attemptTimeoutMs: false },
    });
    res.a!.behave = (_n, signal) => new Promise(() => void signal);
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(res.a!.signals[0]?.reason?.name).toBe('DeadlineExceededError');
    expect(clock()).toBe(1_000_040);
  });

  it('retry.onRetry hears the attempt that failed, and a throwing listener never breaks the call', async () => {
    const heard: number[] = [];
    const { router, res, clock } = setup(['a'], {
      protection: {
        retry: {
          attempts: 3,
          backoff: { baseDelayMs: 0 },
          onRetry: (e) => {
            heard.push(e.attempt);
            throw new Error('listener');
          },
        },
      },
    });
    res.a!.behave = async (n) => {
      if (n < 3) throw new Error('again');
      return 'ok';
    };
    await expect(clock.run(run(router))).resolves.toBe('ok');
    expect(heard).toEqual([1, 2]);
  });
});

describe('router concurrency and abandoned attempts', () => {
  it('an attempt abandoned at its timeout keeps the slot until its operation settles', async () => {
    const { router, res, clock } = setup(['a'], {
      concurrency: { limit: 1, maxQueue: 1 },
      protection: { attemptTimeoutMs: 50 },
    });
    let running = 0;
    let maxRunning = 0;
    res.a!.behave = async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      // Ignores its signal: runs on at the provider for 200 ms.
      await clock.sleep(200);
      running--;
      return 'late';
    };
    const first = run(router).catch((e: unknown) => e);
    const second = run(router).catch((e: unknown) => e);
    await clock.advanceAsync(50);
    expect(isRoutingError(await first)).toBe(true);
    // The caller has its answer, but the operation still runs: the slot stays taken.
    expect([router.active, router.queued]).toEqual([1, 1]);
    await clock.advanceAsync(150);
    expect(res.a!.calls).toBe(2);
    await clock.advanceAsync(300);
    expect(isRoutingError(await second)).toBe(true);
    expect(maxRunning).toBe(1);
    expect([router.active, router.queued]).toEqual([0, 0]);
  });
});
