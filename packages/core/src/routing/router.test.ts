import { describe, expect, it } from 'vitest';
import { isErrorPolicyError } from '../errors/error-policy-error.js';
import { isQueueFullError, QueueFullError } from '../errors/queue-full-error.js';
import { isRoutingError, type RoutingError } from '../errors/routing-error.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { call, failing, setup } from './test-helpers/fake-providers.js';

const run = (router: ReturnType<typeof setup>['router'], opts = {}) =>
  router.execute((r, ctx) => call(r, ctx), opts);

describe('createRouter: traversal', () => {
  it('sends a request to the first provider and stops at the first success', async () => {
    const { router, res } = setup(['a', 'b', 'c']);
    await expect(run(router)).resolves.toBe('ok:a');
    expect([res.a?.calls, res.b?.calls, res.c?.calls]).toEqual([1, 0, 0]);
  });

  it('passes resource, signal, providerId and attempt to the operation', async () => {
    const { router } = setup(['a', 'b'], {
      protection: { retry: { attempts: 2, backoff: { baseDelayMs: 0 } } },
    });
    const seen: unknown[] = [];
    const value = await router.execute((r, { signal, providerId, attempt }) => {
      seen.push([r.id, providerId, attempt, signal instanceof AbortSignal]);
      if (providerId === 'a') throw new Error('a down');
      return 42;
    });
    expect(value).toBe(42);
    expect(seen).toEqual([
      ['a', 'a', 1, true],
      ['a', 'a', 2, true],
      ['b', 'b', 1, true],
    ]);
  });

  it('visits each provider at most once, with its own retries, then fails over', async () => {
    const { router, res } = setup(['a', 'b', 'c'], {
      protection: { retry: { attempts: 3, backoff: { baseDelayMs: 0 } } },
    });
    failing(res.a!);
    res.b!.behave = async (n) => {
      if (n < 3) throw new Error('b flaky');
      return 'ok:b';
    };
    await expect(run(router)).resolves.toBe('ok:b');
    expect([res.a?.calls, res.b?.calls, res.c?.calls]).toEqual([3, 3, 0]);
  });

  it('rejects with RoutingError listing failed visits in order, errors = operation failures', async () => {
    const { router, res } = setup(['a', 'b']);
    failing(res.a!, 'A');
    failing(res.b!, 'B');
    const error = (await run(router).catch((e) => e)) as RoutingError;
    expect(isRoutingError(error)).toBe(true);
    expect(error).toBeInstanceOf(AggregateError);
    expect(error.visits.map((v) => [v.providerId, v.status])).toEqual([
      ['a', 'failed'],
      ['b', 'failed'],
    ]);
    expect(error.errors.map((e: Error) => e.message)).toEqual(['A', 'B']);
    expect((error.cause as Error).message).toBe('B');
  });

  it('failover: false rejects at once with the operation error', async () => {
    const { router, res } = setup(['a', 'b'], {
      protection: { retry: { attempts: 3, backoff: { baseDelayMs: 0 } } },
      classify: () => ({ retry: false, failover: false }),
    });
    failing(res.a!, 'fatal');
    const error = await run(router).catch((e) => e);
    expect(isRoutingError(error)).toBe(false);
    expect(error.message).toBe('fatal');
    expect([res.a?.calls, res.b?.calls]).toEqual([1, 0]);
  });

  it('a per-call classify replaces the router one', async () => {
    const { router, res } = setup(['a', 'b'], { classify: () => ({ failover: false }) });
    failing(res.a!);
    await expect(run(router, { classify: () => ({}) })).resolves.toBe('ok:b');
  });

  it('a throwing policy rejects with ErrorPolicyError, without failover or fallback', async () => {
    const { router, res } = setup(['a', 'b']);
    failing(res.a!, 'op');
    let fallbacks = 0;
    const error = await run(router, {
      classify: () => {
        throw new Error('policy bug');
      },
      fallback: () => {
        fallbacks++;
        return 'fb';
      },
    }).catch((e) => e);
    expect(isErrorPolicyError(error)).toBe(true);
    expect(error.errors.map((e: Error) => e.message)).toEqual(['op', 'policy bug']);
    expect([res.b?.calls, fallbacks]).toEqual([0, 0]);
  });

  it('retry: false moves on to the next provider without retrying', async () => {
    const { router, res } = setup(['a', 'b'], {
      protection: { retry: { attempts: 3, backoff: { baseDelayMs: 0 } } },
      classify: () => ({ retry: false }),
    });
    failing(res.a!);
    await expect(run(router)).resolves.toBe('ok:b');
    expect(res.a?.calls).toBe(1);
  });

  it('waits the provider backoff between its retries (fixed and exponential)', async () => {
    const { router, res, clock } = setup(['a'], {
      protection: {
        retry: {
          attempts: 3,
          backoff: { baseDelayMs: 100, strategy: 'exponential', jitter: 'none' },
        },
      },
    });
    const times: number[] = [];
    res.a!.behave = async (n) => {
      times.push(clock());
      if (n < 3) throw new Error('again');
      return 'ok';
    };
    await expect(clock.run(run(router))).resolves.toBe('ok');
    expect([times[1]! - times[0]!, times[2]! - times[1]!]).toEqual([100, 200]);
  });

  it('times out each attempt and fails over; the attempt signal aborts with the deadline', async () => {
    const { router, res, clock } = setup(['a', 'b'], { protection: { attemptTimeoutMs: 50 } });
    res.a!.behave = (_n, signal) => new Promise(() => void signal);
    const p = run(router);
    await expect(clock.run(p)).resolves.toBe('ok:b');
    expect(res.a?.signals[0]?.reason?.name).toBe('DeadlineExceededError');
    expect(clock()).toBe(1_000_050);
    expect(clock.pending).toBe(0);
  });

  it("timeoutMode 'wait' waits for the timed-out callback to settle", async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { attemptTimeoutMs: 50, timeoutMode: 'wait' },
    });
    res.a!.behave = async (_n, signal) => {
      await clock.sleep(200);
      throw signal.reason;
    };
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(clock()).toBe(1_000_200);
  });
});

describe('createRouter: protection inheritance', () => {
  it('providers inherit the shared protection; own keys override; nested objects replace whole', async () => {
    const { router, res, clock } = setup(['a', 'b']);
    // Rebuild with per-provider overrides on the same resources.
    const { createRouter } = await import('./router.js');
    const inherited = {
      attempts: 3,
      backoff: { baseDelayMs: 100, maxDelayMs: 100, jitter: 'full' as const },
    };
    const r2 = createRouter({
      providers: [
        { id: 'a', resource: res.a!, protection: { timeoutMs: 1_000 } },
        {
          id: 'b',
          resource: res.b!,
          protection: { retry: { attempts: 2, backoff: { baseDelayMs: 10, jitter: 'none' } } },
        },
      ],
      protection: { retry: inherited },
      clock,
      sleep: clock.sleep,
      random: () => 0.999,
    });
    void router;
    const times: Record<string, number[]> = { a: [], b: [] };
    for (const id of ['a', 'b']) {
      res[id]!.behave = async () => {
        times[id]!.push(clock());
        throw new Error(id);
      };
    }
    await expect(clock.run(r2.execute((r, ctx) => call(r, ctx)))).rejects.toThrow(/No provider/);
    // a: 3 attempts (inherited retry), full jitter on the router's random: 100 × 0.999.
    expect(times.a).toHaveLength(3);
    expect(times.a![1]! - times.a![0]!).toBeCloseTo(99.9, 5);
    // b: its own retry object replaced the inherited one whole: 2 attempts, no jitter.
    expect(times.b).toHaveLength(2);
    expect(times.b![1]! - times.b![0]!).toBe(10);
  });

  it('circuit: false disables an inherited circuit; an own circuit replaces the shared one', async () => {
    const { createRouter } = await import('./router.js');
    const { res, clock } = setup(['a', 'b', 'c']);
    const router = createRouter({
      providers: [
        { id: 'a', resource: res.a! },
        { id: 'b', resource: res.b!, protection: { circuit: false } },
        {
          id: 'c',
          resource: res.c!,
          protection: {
            circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 5, openDurationMs: 10 },
          },
        },
      ],
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
      clock,
    });
    expect(router.circuit('a')).toBeDefined();
    expect(router.circuit('b')).toBeUndefined();
    expect(router.circuit('c')).toBeDefined();
    failing(res.a!);
    failing(res.c!);
    await router.execute((r, ctx) => call(r, ctx));
    expect(router.circuit('a')?.state).toBe('open');
    expect(() => router.circuit('zz')).toThrow(/unknown provider "zz"/);
  });
});

describe('createRouter: circuits and skips', () => {
  it('skips an open provider (circuit-open) and RoutingError lists skipped and failed in order', async () => {
    const { router, res } = setup(['a', 'b', 'c'], {
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
    });
    failing(res.a!);
    await expect(run(router)).resolves.toBe('ok:b');
    failing(res.b!, 'B');
    failing(res.c!, 'C');
    const skipped: string[] = [];
    router.onSkipped((e) => skipped.push(`${e.providerId}:${e.reason}`));
    const error = (await run(router).catch((e) => e)) as RoutingError;
    expect(error.visits).toEqual([
      { providerId: 'a', status: 'skipped', reason: 'circuit-open' },
      { providerId: 'b', status: 'failed', cause: expect.objectContaining({ message: 'B' }) },
      { providerId: 'c', status: 'failed', cause: expect.objectContaining({ message: 'C' }) },
    ]);
    expect(error.errors).toHaveLength(2);
    expect(skipped).toEqual(['a:circuit-open']);
    expect(res.a?.calls).toBe(1);
  });

  it('all skipped → RoutingError with only skips and no errors', async () => {
    const { router, res } = setup(['a'], {
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
    });
    failing(res.a!);
    await run(router).catch(() => {});
    const error = (await run(router).catch((e) => e)) as RoutingError;
    expect(error.visits).toEqual([{ providerId: 'a', status: 'skipped', reason: 'circuit-open' }]);
    expect(error.errors).toEqual([]);
    expect(error.cause).toBeUndefined();
  });

  it('counts a provider failure once per visit (after retries) and not when the policy excludes it', async () => {
    const { router, res } = setup(['a', 'b'], {
      protection: {
        retry: { attempts: 3, backoff: { baseDelayMs: 0 } },
        circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 2, openDurationMs: 1000 },
      },
    });
    failing(res.a!);
    await run(router);
    expect(router.circuit('a')?.state).toBe('closed');
    await run(router, { classify: () => ({ countForCircuit: false }) });
    expect(router.circuit('a')?.state).toBe('closed');
    expect(router.health.snapshot().a).toMatchObject({ fail: 1, streak: 1 });
    await run(router);
    expect(router.circuit('a')?.state).toBe('open');
  });

  it('with a failure span, keeps a provider closed when its in-flight calls fail one by one after a stall (all sent before the streak began)', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { circuit: { failureThreshold: 5, failureSpanMs: 500, openDurationMs: 200 } },
    });
    const resets: ((e: Error) => void)[] = [];
    res.a!.behave = () => new Promise<string>((_, reject) => resets.push(reject));
    const calls = Array.from({ length: 64 }, () => run(router));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(resets).toHaveLength(64);
    failing(res.a!);
    await expect(run(router)).resolves.toBe('ok:b');
    // A 600 ms stall, then a starved process works through the in-flight calls' failures
    // (a dropped connection) at 5 ms each: 64 failures over 320 ms.
    clock.advance(600);
    for (const reset of resets) {
      reset(new Error('connection reset'));
      await new Promise<void>((resolve) => setImmediate(resolve));
      clock.advance(5);
    }
    await Promise.all(calls);
    expect(router.circuit('a')?.state).toBe('closed');
  });

  it('records latency and outcomes into its health registry', async () => {
    const { router, res, clock } = setup(['a', 'b']);
    res.a!.behave = async () => {
      await clock.sleep(30);
      return 'slow';
    };
    await clock.run(run(router));
    expect(router.health.latency('a')).toBe(30);
    expect(router.health.snapshot().a).toMatchObject({ ok: 1, fail: 0 });
  });

  it('reads the clock twice per successful call (visit start and end); a count-only circuit and health read none', async () => {
    // With a timeout the deadline wheel reads it once more (on the host timer: performance.now()).
    // A circuit with a failure-rate window reads it once more to date the success in its window.
    const { createManualClock } = await import('../time/manual-clock.js');
    const { createRouter } = await import('./router.js');
    const manual = createManualClock(1000);
    let reads = 0;
    const clock = () => {
      reads++;
      return manual();
    };
    for (const [extra, perCall] of [
      [{}, 2],
      [
        {
          protection: {
            circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 3, openDurationMs: 1000 },
          },
        },
        2,
      ],
      [{ protection: { circuit: { failureThreshold: 3, openDurationMs: 1000 } } }, 3],
      [{ health: { failureThreshold: 2 } }, 2],
      [{ protection: { attemptTimeoutMs: 100 } }, 3],
    ] as const) {
      const router = createRouter({
        providers: [
          { id: 'a', resource: 1 },
          { id: 'b', resource: 2 },
        ],
        clock,
        sleep: manual.sleep,
        ...extra,
      });
      await router.execute((r) => r);
      reads = 0;
      for (let i = 0; i < 5; i++) await router.execute((r) => r);
      expect(reads).toBe(5 * perCall);
      expect(router.health.snapshot().a).toMatchObject({ ok: 6, fail: 0 });
    }
  });

  it('consults a shared health registry and skips providers it reports open', async () => {
    const { createHealthRegistry } = await import('../health/registry.js');
    const { createManualClock } = await import('../time/manual-clock.js');
    const clock = createManualClock();
    const registry = createHealthRegistry({ failureThreshold: 1, openDurationMs: 100, clock });
    const { router, res } = setup(['a', 'b'], { health: { registry }, clock });
    registry.failure('a');
    await expect(run(router)).resolves.toBe('ok:b');
    expect(res.a?.calls).toBe(0);
    expect(router.health).toBe(registry);
  });
});

describe('createRouter: background probes', () => {
  it('probes providers in the background and skips those the probes found unhealthy', async () => {
    const probed: string[] = [];
    const { router, res, clock } = setup(['a', 'b'], {
      health: {
        probe: async (resource, { provider }) => {
          probed.push(`${provider}:${resource.id}`);
          if (provider === 'a') throw new Error('a unreachable');
        },
        intervalMs: 1000,
        timeoutMs: 100,
        failureThreshold: 1,
      },
    });
    try {
      await clock.flush();
      expect(probed).toEqual(['a:a', 'b:b']);
      expect(router.health.isOpen('a')).toBe(true);
      const skipped: string[] = [];
      router.onSkipped((e) => skipped.push(`${e.providerId}:${e.reason}`));
      await expect(run(router)).resolves.toBe('ok:b');
      expect(skipped).toEqual(['a:circuit-open']);
      expect(res.a?.calls).toBe(0);
      await clock.advanceAsync(1000);
      expect(probed).toHaveLength(4);
    } finally {
      router.stop();
    }
    await clock.advanceAsync(5000);
    expect(probed).toHaveLength(4);
    expect(clock.pending).toBe(0);
  });
});

describe('createRouter: cancellation, concurrency, fallback', () => {
  it('an already-aborted signal never runs the operation', async () => {
    const { router, res } = setup(['a']);
    const ac = new AbortController();
    ac.abort(new Error('gone'));
    await expect(run(router, { signal: ac.signal })).rejects.toThrow('gone');
    expect(res.a?.calls).toBe(0);
  });

  it('an aborted call never becomes a RoutingError, and does not fail over', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
    });
    res.a!.behave = (_n, signal) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    const ac = new AbortController();
    const p = run(router, { signal: ac.signal });
    await clock.flush();
    const reason = new Error('caller gave up');
    ac.abort(reason);
    const error = await p.catch((e) => e);
    expect(isRoutingError(error)).toBe(false);
    expect(error).toBe(reason);
    expect(res.b?.calls).toBe(0);
    // Cancellation is neutral for the circuit and the registry.
    expect(router.circuit('a')?.state).toBe('closed');
    expect(router.health.snapshot().a).toBeUndefined();
  });

  it('rejects at once on abort even when the operation ignores its signal', async () => {
    const { router, res } = setup(['a']);
    res.a!.behave = () => new Promise(() => {});
    const ac = new AbortController();
    const p = run(router, { signal: ac.signal });
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });

  it('one concurrency slot covers the whole traversal; overflow rejects with QueueFullError', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      concurrency: { limit: 1, maxQueue: 1 },
      protection: { retry: { attempts: 2, backoff: { baseDelayMs: 100, jitter: 'none' } } },
    });
    failing(res.a!);
    res.b!.behave = async () => {
      await clock.sleep(10);
      return 'ok:b';
    };
    const first = run(router);
    const second = run(router);
    const third = run(router);
    await expect(third).rejects.toBeInstanceOf(QueueFullError);
    expect([router.active, router.queued]).toEqual([1, 1]);
    // During a's backoff and the failover to b, the second request stays queued.
    await clock.advanceAsync(100);
    expect([router.active, router.queued]).toEqual([1, 1]);
    await expect(clock.run(first)).resolves.toBe('ok:b');
    await expect(clock.run(second)).resolves.toBe('ok:b');
    expect(res.a?.calls).toBe(4);
  });

  it('the slot is held through the fallback and given back on success and failure alike', async () => {
    const { router, res, clock } = setup(['a'], { concurrency: { limit: 1, maxQueue: 1 } });
    failing(res.a!);
    const slowFallback = async () => {
      await clock.sleep(50);
      return 'fb';
    };
    const first = run(router, { fallback: slowFallback });
    const second = run(router).catch((e: unknown) => e);
    await clock.advanceAsync(49);
    expect([router.active, router.queued, res.a?.calls]).toEqual([1, 1, 1]);
    await expect(clock.run(first)).resolves.toBe('fb');
    expect(isRoutingError(await second)).toBe(true);
    expect([router.active, router.queued, res.a?.calls]).toEqual([0, 0, 2]);
    res.a!.behave = async () => 'ok';
    await expect(run(router)).resolves.toBe('ok');
    expect(router.active).toBe(0);
  });

  it('a queued call whose signal aborts leaves the queue without running', async () => {
    const { router, res, clock } = setup(['a'], { concurrency: { limit: 1, maxQueue: 5 } });
    res.a!.behave = async () => {
      await clock.sleep(10);
      return 'ok';
    };
    const first = run(router);
    const ac = new AbortController();
    const second = run(router, { signal: ac.signal });
    ac.abort();
    await expect(second).rejects.toThrow(/aborted/i);
    expect(router.queued).toBe(0);
    await clock.run(first);
    expect(res.a?.calls).toBe(1);
  });

  it('fallback runs after a RoutingError, and at once on queue overflow', async () => {
    const { router, res, clock } = setup(['a'], { concurrency: { limit: 1 } });
    failing(res.a!);
    const errors: unknown[] = [];
    const fallback = (e: unknown) => {
      errors.push(e);
      return 'fb';
    };
    await expect(run(router, { fallback })).resolves.toBe('fb');
    expect(isRoutingError(errors[0])).toBe(true);
    res.a!.behave = async () => {
      await clock.sleep(10);
      return 'ok';
    };
    const busy = run(router);
    await expect(run(router, { fallback })).resolves.toBe('fb');
    expect(isQueueFullError(errors[1])).toBe(true);
    await clock.run(busy);
  });

  it('fallback is not run on success or cancellation; its error becomes the call error', async () => {
    const { router, res } = setup(['a']);
    let runs = 0;
    const fallback = () => {
      runs++;
      throw new Error('fallback failed');
    };
    await expect(run(router, { fallback })).resolves.toBe('ok:a');
    const ac = new AbortController();
    res.a!.behave = (_n, signal) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    const p = run(router, { fallback, signal: ac.signal });
    ac.abort(new Error('cancelled'));
    await expect(p).rejects.toThrow('cancelled');
    expect(runs).toBe(0);
    failing(res.a!);
    await expect(run(router, { fallback })).rejects.toThrow('fallback failed');
    expect(runs).toBe(1);
  });
});

describe('createRouter: events', () => {
  it('emits selected, failed and skipped with ids, names and timings only', async () => {
    const { router, res } = setup(['a', 'b', 'c'], {
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
    });
    const log: unknown[] = [];
    router.onSelected((e) => log.push(['selected', e]));
    router.onFailed((e) => log.push(['failed', e]));
    router.onSkipped((e) => log.push(['skipped', e]));
    failing(res.a!);
    await run(router);
    await run(router);
    expect(log).toEqual([
      ['selected', { providerId: 'a', visit: 1, hedge: false }],
      ['failed', { providerId: 'a', errorName: 'Error', counted: true, durationMs: 0 }],
      ['selected', { providerId: 'b', visit: 2, hedge: false }],
      ['skipped', { providerId: 'a', reason: 'circuit-open' }],
      ['selected', { providerId: 'b', visit: 2, hedge: false }],
    ]);
  });
});
