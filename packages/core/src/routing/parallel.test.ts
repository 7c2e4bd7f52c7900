import { describe, expect, it } from 'vitest';
import { isRoutingError, type RoutingError } from '../errors/routing-error.js';
import type { RetryBudget } from '../retry/budget.js';
import { call, type FakeResource, failing, fake, setup } from './test-helpers/fake-providers.js';
import type { Router } from './types.js';

const run = (router: Router<FakeResource>, signal?: AbortSignal) =>
  router.execute((r, ctx) => call(r, ctx), signal ? { signal } : {});

describe('race selection', () => {
  it('starts every eligible provider at once; the first success wins; losers are aborted, not failures', async () => {
    const { router, res, clock } = setup(['a', 'b', 'c'], {
      selection: 'race',
      protection: { circuit: { failureThreshold: 1, openDurationMs: 1000 } },
    });
    res.a = Object.assign(res.a!, fake('a', clock, 30));
    res.b = Object.assign(res.b!, fake('b', clock, 10));
    res.c = Object.assign(res.c!, fake('c', clock, 20));
    const failed: string[] = [];
    router.onFailed((e) => failed.push(e.providerId));
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect([res.a.calls, res.b.calls, res.c.calls]).toEqual([1, 1, 1]);
    expect(res.a.signals[0]?.aborted).toBe(true);
    expect(res.c.signals[0]?.aborted).toBe(true);
    expect(res.b.signals[0]?.aborted).toBe(false);
    expect(failed).toEqual([]);
    // Losers are neutral: circuits stay closed, health records no failure.
    expect(router.circuit('a')?.state).toBe('closed');
    expect(router.health.snapshot().a).toBeUndefined();
    expect(clock.pending).toBe(0);
  });

  it('a failed racer does not end the race; all failing → RoutingError', async () => {
    const { router, res, clock } = setup(['a', 'b'], { selection: { type: 'race' } });
    failing(res.a!, 'A');
    res.b = Object.assign(res.b!, fake('b', clock, 10));
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    failing(res.b, 'B');
    const error = (await run(router).catch((e) => e)) as RoutingError;
    expect(isRoutingError(error)).toBe(true);
    expect(error.visits.map((v) => v.providerId).sort()).toEqual(['a', 'b']);
  });

  it('cancellation aborts every racer and rejects with the reason', async () => {
    const { router, res, clock } = setup(['a', 'b'], { selection: 'race' });
    res.a = Object.assign(res.a!, fake('a', clock, 10));
    res.b = Object.assign(res.b!, fake('b', clock, 10));
    const ac = new AbortController();
    const p = run(router, ac.signal);
    await clock.flush();
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(res.a.signals[0]?.aborted && res.b.signals[0]?.aborted).toBe(true);
  });
});

describe('hedging', () => {
  it('starts the next provider after delayMs; first success wins; the slow one is aborted, not failed', async () => {
    const { router, res, clock } = setup(['a', 'b', 'c'], { hedge: { delayMs: 20, attempts: 2 } });
    res.a = Object.assign(res.a!, fake('a', clock, 100));
    res.b = Object.assign(res.b!, fake('b', clock, 10));
    const hedged: unknown[] = [];
    const selected: unknown[] = [];
    router.onHedged((e) => hedged.push(e));
    router.onSelected((e) => selected.push(e));
    const p = run(router);
    await expect(clock.run(p)).resolves.toBe('ok:b');
    expect(clock()).toBe(1_000_030);
    expect(hedged).toEqual([{ fromProviderId: 'a', toProviderId: 'b', delayMs: 20 }]);
    expect(selected).toEqual([
      { providerId: 'a', visit: 1, hedge: false },
      { providerId: 'b', visit: 2, hedge: true },
    ]);
    expect(res.a.signals[0]?.aborted).toBe(true);
    expect(res.c?.calls).toBe(0);
    expect(router.health.snapshot().a).toBeUndefined();
    expect(clock.pending).toBe(0);
  });

  it('no hedge when the first answer comes in time; the hedge timer is released', async () => {
    const { router, res, clock } = setup(['a', 'b'], { hedge: { delayMs: 20 } });
    res.a = Object.assign(res.a!, fake('a', clock, 5));
    await expect(clock.run(run(router))).resolves.toBe('ok:a');
    expect(res.b?.calls).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('respects maxHedges, and a failure fails over at once (not counted as a hedge)', async () => {
    const { router, res, clock } = setup(['a', 'b', 'c', 'd'], {
      hedge: { delayMs: 10, attempts: 2 },
    });
    res.a = Object.assign(res.a!, fake('a', clock, 100));
    res.b = Object.assign(res.b!, fake('b', clock, 100));
    res.c = Object.assign(res.c!, fake('c', clock, 100));
    const p = run(router);
    await expect(clock.run(p)).resolves.toBe('ok:a');
    expect([res.b.calls, res.c.calls]).toEqual([1, 0]);
    failing(res.a, 'A');
    const hedged: string[] = [];
    router.onHedged((e) => hedged.push(e.toProviderId));
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(hedged).toEqual(['c']);
  });

  it('hedges draw from the retry budget; a refused withdrawal means no hedge', async () => {
    let allow = false;
    let requests = 0;
    const budget = {
      recordRequest: () => void requests++,
      tryRetry: () => allow,
    } as unknown as RetryBudget;
    const { router, res, clock } = setup(['a', 'b'], { hedge: { delayMs: 10 }, budget });
    res.a = Object.assign(res.a!, fake('a', clock, 50));
    await expect(clock.run(run(router))).resolves.toBe('ok:a');
    expect(res.b?.calls).toBe(0);
    allow = true;
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(requests).toBe(2);
  });

  it('percentile hedging waits for enough samples, then hedges at the observed percentile', async () => {
    const { router, res, clock } = setup(['a', 'b'], { hedge: { percentile: 90 } });
    let n = 0;
    res.a!.behave = async (_c, signal) => {
      // 1..20 ms, then a slow call.
      n++;
      await clock.sleep(n <= 20 ? n : 500, signal);
      if (signal.aborted) throw signal.reason;
      return 'ok:a';
    };
    for (let i = 0; i < 20; i++) await clock.run(run(router));
    expect(res.b?.calls).toBe(0);
    const start = clock();
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    // p90 of 1..20 (nearest rank) is 18 ms; b answers at once.
    expect(clock() - start).toBe(18);
  });

  it('percentile hedging forgets latencies older than windowMs', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      hedge: { percentile: 90, windowMs: 1000 },
    });
    let slow = true;
    res.a!.behave = async (_c, signal) => {
      await clock.sleep(slow ? 300 : 10, signal);
      if (signal.aborted) throw signal.reason;
      return 'ok:a';
    };
    // A burst of slow calls: the hedge delay becomes 300 ms.
    for (let i = 0; i < 20; i++) await clock.run(run(router));
    slow = false;
    // Within the window the old burst still decides: a 10 ms call is not hedged.
    for (let i = 0; i < 5; i++) await clock.run(run(router));
    expect(res.b?.calls).toBe(0);
    // Past the window the burst no longer counts, and five fresh samples are too few to hedge on.
    clock.advance(1000);
    slow = true;
    const start = clock();
    await expect(clock.run(run(router))).resolves.toBe('ok:a');
    expect(clock() - start).toBe(300);
    expect(res.b?.calls).toBe(0);
    // Twenty fresh fast calls: p90 is 10 ms, so a slow call is hedged after 10 ms.
    slow = false;
    for (let i = 0; i < 20; i++) await clock.run(run(router));
    slow = true;
    const hedgedAt = clock();
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(clock() - hedgedAt).toBe(10);
  });

  it('all hedged visits failing → RoutingError with every failure', async () => {
    const { router, res, clock } = setup(['a', 'b'], { hedge: { delayMs: 5 } });
    res.a!.behave = async () => {
      await clock.sleep(20);
      throw new Error('A');
    };
    res.b!.behave = async () => {
      await clock.sleep(1);
      throw new Error('B');
    };
    const error = (await clock.run(run(router)).catch((e) => e)) as RoutingError;
    expect(error.visits.map((v) => v.providerId)).toEqual(['b', 'a']);
    expect(error.errors).toHaveLength(2);
  });
});

describe('abort reasons reach every running visit (SPEC §0)', () => {
  const reasonOf = (r: FakeResource | undefined) => r?.signals[0]?.reason;

  it.each([
    ['race', { selection: 'race' as const }],
    ['hedge', { hedge: { delayMs: 5, attempts: 3 } }],
    [
      'race with per-visit protection',
      {
        selection: 'race' as const,
        protection: { retry: { attempts: 2, backoff: { baseDelayMs: 0 } }, attemptTimeoutMs: 1000 },
      },
    ],
  ])(
    '%s: the caller aborting gives every running operation the caller’s reason',
    async (_n, opts) => {
      const { router, res, clock } = setup(['a', 'b', 'c'], opts);
      for (const id of ['a', 'b', 'c']) res[id] = Object.assign(res[id]!, fake(id, clock, 100));
      const ac = new AbortController();
      const p = run(router, ac.signal);
      await clock.flush();
      for (let i = 0; i < 4; i++) {
        clock.advance(6);
        await clock.flush();
      }
      expect([res.a!.calls, res.b!.calls, res.c!.calls]).toEqual([1, 1, 1]);
      const reason = new Error('caller gave up');
      ac.abort(reason);
      await expect(p).rejects.toBe(reason);
      for (const id of ['a', 'b', 'c']) {
        expect(res[id]!.signals[0]?.aborted).toBe(true);
        expect(reasonOf(res[id])).toBe(reason);
      }
      await clock.run(Promise.resolve());
      expect(clock.pending).toBe(0);
    },
  );

  it('a non-Error caller reason reaches the operations unchanged', async () => {
    const { router, res, clock } = setup(['a', 'b'], { selection: 'race' });
    for (const id of ['a', 'b']) res[id] = Object.assign(res[id]!, fake(id, clock, 100));
    const ac = new AbortController();
    const p = run(router, ac.signal);
    await clock.flush();
    ac.abort('shutdown');
    await expect(p).rejects.toMatchObject({ name: 'OperationAbortedError', cause: 'shutdown' });
    expect([reasonOf(res.a), reasonOf(res.b)]).toEqual(['shutdown', 'shutdown']);
  });

  it.each([
    ['race', { selection: 'race' as const }],
    ['hedge', { hedge: { delayMs: 5 } }],
  ])('%s: when another provider wins, losers get the "answered first" reason', async (_n, opts) => {
    const { router, res, clock } = setup(['a', 'b'], opts);
    res.a = Object.assign(res.a!, fake('a', clock, 100));
    res.b = Object.assign(res.b!, fake('b', clock, 10));
    const ac = new AbortController();
    await expect(clock.run(run(router, ac.signal))).resolves.toBe('ok:b');
    expect(reasonOf(res.a)).toMatchObject({
      name: 'OperationAbortedError',
      message: 'Another provider answered first',
    });
    expect(res.b.signals[0]?.aborted).toBe(false);
  });
});

describe('hedge losers', () => {
  it("a loser cancelled within its provider's normal latency is neutral; one that ran past it (3 x p99, >= 100 ms) is a failure of its circuit", async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      hedge: { delayMs: 30 },
      protection: { circuit: { failureThreshold: 1, failureSpanMs: 0, openDurationMs: 10_000 } },
    });
    // a's normal latency: 20 ms (under the hedge delay, so nothing is hedged yet).
    res.a = Object.assign(res.a!, fake('a', clock, 20));
    for (let i = 0; i < 20; i++) await clock.run(run(router));
    expect(res.b!.calls).toBe(0);
    // a hangs from now on. b is hedged at +30 and answers at +40: a ran 40 ms, within normal.
    res.a.behave = async (_n, signal) => {
      await clock.sleep(60_000, signal);
      signal.throwIfAborted();
      return 'late';
    };
    res.b = Object.assign(res.b!, fake('b', clock, 10));
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    await new Promise((resolve) => setImmediate(resolve));
    expect(router.circuit('a')?.state).toBe('closed');
    expect(router.health.snapshot().a?.fail).toBe(0);
    // b answers at +130: a ran 130 ms, past 100 ms (3 x its 20 ms p99, raised to the floor).
    res.b.behave = fake('b', clock, 100).behave;
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    // The loser settles once its operation has seen the abort.
    await new Promise((resolve) => setImmediate(resolve));
    expect(res.a.signals.at(-1)?.aborted).toBe(true);
    expect(router.circuit('a')?.state).toBe('open');
    expect(clock.pending).toBe(0);
  });
});
