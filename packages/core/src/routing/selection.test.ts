import { describe, expect, it } from 'vitest';
import { createHealthRegistry } from '../health/registry.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { createManualClock } from '../time/manual-clock.js';
import { sequenceRandom } from '../time/random.js';
import { createRouter } from './router.js';
import { call, type FakeResource, failing, fake, setup } from './test-helpers/fake-providers.js';
import type { Router } from './types.js';

const run = (router: Router<FakeResource>) => router.execute((r, ctx) => call(r, ctx));

/** Provider ids the router tried, in order, for each request run through `fn`. */
function track(router: Router<FakeResource>): string[] {
  const seen: string[] = [];
  router.onSelected((e) => seen.push(e.providerId));
  return seen;
}

describe('priority selection', () => {
  it('highest priority first; missing = 0; ties by registration order', async () => {
    const { router } = setup(['a', 'b', 'c', 'd'], {
      selection: { type: 'priority', priorities: { c: 5, d: -1 } },
    });
    await expect(run(router)).resolves.toBe('ok:c');
    const { router: r2, res } = setup(['a', 'b', 'c', 'd'], {
      selection: { type: 'priority', priorities: { c: 5, d: -1 } },
    });
    for (const id of ['a', 'b', 'c']) failing(res[id]!);
    const seen = track(r2);
    await expect(run(r2)).resolves.toBe('ok:d');
    expect(seen).toEqual(['c', 'a', 'b', 'd']);
  });

  it('sends exactly one recovery probe to a recovered preferred provider; others use alternatives (probe-busy)', async () => {
    const { router, res, clock } = setup(['a', 'b', 'c'], {
      selection: { type: 'priority', priorities: { a: 10, b: 5 } },
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
    });
    failing(res.a!);
    await expect(run(router)).resolves.toBe('ok:b');
    expect(router.circuit('a')?.state).toBe('open');
    await expect(run(router)).resolves.toBe('ok:b');
    expect(res.a?.calls).toBe(1);

    clock.advance(1000);
    // a has recovered, but answers slowly: its probe stays outstanding for a while.
    res.a!.behave = async () => {
      await clock.sleep(50);
      return 'ok:a';
    };
    const skipped: string[] = [];
    const recovered: string[] = [];
    router.onSkipped((e) => skipped.push(`${e.providerId}:${e.reason}`));
    router.onRecovered((e) => recovered.push(e.providerId));
    const probe = run(router);
    const others = [run(router), run(router), run(router)];
    await expect(Promise.all(others)).resolves.toEqual(['ok:b', 'ok:b', 'ok:b']);
    expect(skipped).toEqual(['a:probe-busy', 'a:probe-busy', 'a:probe-busy']);
    expect(res.a?.calls).toBe(2);
    await expect(clock.run(probe)).resolves.toBe('ok:a');
    expect(recovered).toEqual(['a']);
    expect(router.circuit('a')?.state).toBe('closed');
    // Closed again: traffic returns to the preferred provider.
    const back = run(router);
    await expect(clock.run(back)).resolves.toBe('ok:a');
  });

  it('a failed recovery probe re-opens the circuit for a full cooldown', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
    });
    failing(res.a!);
    await run(router);
    clock.advance(1000);
    await expect(run(router)).resolves.toBe('ok:b');
    expect(res.a?.calls).toBe(2);
    clock.advance(999);
    await run(router);
    expect(res.a?.calls).toBe(2);
  });

  it('with a consulted health registry, one recovery probe goes to a half-open provider', async () => {
    const clock = createManualClock();
    const registry = createHealthRegistry({ failureThreshold: 1, openDurationMs: 100, clock });
    const a = fake('a', clock, 20);
    const b = fake('b', clock);
    const router = createRouter({
      providers: [
        { id: 'a', resource: a },
        { id: 'b', resource: b },
      ],
      health: { registry },
      clock,
      sleep: clock.sleep,
    });
    registry.failure('a');
    clock.advance(100);
    expect(registry.circuitState('a')).toBe('half-open');
    const skipped: string[] = [];
    router.onSkipped((e) => skipped.push(e.reason));
    const probe = run(router);
    await expect(Promise.all([run(router), run(router)])).resolves.toEqual(['ok:b', 'ok:b']);
    expect(skipped).toEqual(['probe-busy', 'probe-busy']);
    await expect(clock.run(probe)).resolves.toBe('ok:a');
    expect(registry.circuitState('a')).toBe('closed');
    expect(a.calls).toBe(1);
  });
});

describe('sticky selection', () => {
  it('starts at the first registered provider and keeps the last successful one', async () => {
    const { router, res } = setup(['a', 'b', 'c'], { selection: { type: 'sticky' } });
    const seen = track(router);
    await run(router);
    failing(res.a!);
    await expect(run(router)).resolves.toBe('ok:b');
    res.a!.behave = async () => 'ok:a';
    await expect(run(router)).resolves.toBe('ok:b');
    expect(seen).toEqual(['a', 'a', 'b', 'b']);
  });

  it('switches once under concurrent failures; late results from an older generation never overwrite', async () => {
    const { router, res, clock } = setup(['a', 'b', 'c'], { selection: 'sticky' });
    res.a!.behave = async () => {
      await clock.sleep(5);
      throw new Error('a down');
    };
    // b fails the first two requests that reach it and answers the rest after 10 ms;
    // c answers after 50 ms — a late success from the same (old) generation.
    res.b!.behave = async (n) => {
      if (n <= 2) throw new Error('b busy');
      await clock.sleep(10);
      return 'ok:b';
    };
    res.c!.behave = async () => {
      await clock.sleep(50);
      return 'ok:c';
    };
    const results = Promise.all([run(router), run(router), run(router), run(router)]);
    await expect(clock.run(results)).resolves.toEqual(['ok:c', 'ok:c', 'ok:b', 'ok:b']);
    const seen = track(router);
    res.b!.behave = async () => 'ok:b';
    await expect(run(router)).resolves.toBe('ok:b');
    expect(seen).toEqual(['b']);
  });

  it('moves on when the sticky provider’s circuit refuses', async () => {
    const { router, res } = setup(['a', 'b', 'c'], {
      selection: { type: 'sticky' },
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
    });
    failing(res.b!);
    failing(res.a!);
    await expect(run(router)).resolves.toBe('ok:c');
    const seen = track(router);
    await expect(run(router)).resolves.toBe('ok:c');
    expect(seen).toEqual(['c']);
  });
});

describe('round-robin selection', () => {
  it('starts each request at the next provider and fails over in rotation', async () => {
    const { router, res } = setup(['a', 'b', 'c'], { selection: 'round-robin' });
    const values = [await run(router), await run(router), await run(router), await run(router)];
    expect(values).toEqual(['ok:a', 'ok:b', 'ok:c', 'ok:a']);
    failing(res.b!);
    const seen = track(router);
    await expect(run(router)).resolves.toBe('ok:c');
    expect(seen).toEqual(['b', 'c']);
  });
});

describe('least-latency selection', () => {
  it('tries unknown providers first, then the lowest smoothed latency', async () => {
    const clock = createManualClock();
    const registry = createHealthRegistry({ clock });
    const res = { a: fake('a', clock, 30), b: fake('b', clock, 10), c: fake('c', clock, 50) };
    const router = createRouter({
      providers: Object.values(res).map((r) => ({ id: r.id, resource: r })),
      selection: { type: 'least-latency' },
      health: { registry },
      clock,
      sleep: clock.sleep,
    });
    registry.success('a', 30);
    registry.success('b', 10);
    await expect(clock.run(run(router))).resolves.toBe('ok:c');
    expect(registry.latency('c')).toBe(50);
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    failing(res.b);
    const seen = track(router);
    await expect(clock.run(run(router))).resolves.toBe('ok:a');
    expect(seen).toEqual(['b', 'a']);
  });
});

describe('power-of-two selection', () => {
  it('picks the less loaded of two random providers, then the lower latency', async () => {
    const clock = createManualClock();
    const res = { a: fake('a', clock, 100), b: fake('b', clock, 10), c: fake('c', clock, 10) };
    // Picks: (a, b), (a, b), (b, c) ...
    const random = sequenceRandom([0, 0.5, 0, 0.5, 0.4, 0.9]);
    const router = createRouter({
      providers: Object.values(res).map((r) => ({ id: r.id, resource: r })),
      selection: { type: 'power-of-two' },
      clock,
      sleep: clock.sleep,
      random,
    });
    const seen = track(router);
    // Equal load and no latency yet: the first pick wins.
    const slow = run(router);
    // a now has a call in flight: b wins.
    const fast = run(router);
    await expect(clock.run(Promise.all([slow, fast]))).resolves.toEqual(['ok:a', 'ok:b']);
    expect(seen).toEqual(['a', 'b']);
    // b and c idle; c has no latency yet, so it is tried first.
    await expect(clock.run(run(router))).resolves.toBe('ok:c');
  });

  it('only picks among healthy providers and still fails over to the rest', async () => {
    const { router, res } = setup(['a', 'b', 'c'], {
      selection: 'power-of-two',
      protection: { circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 } },
      random: () => 0,
    });
    failing(res.a!);
    // random 0 picks (a, c): a fails, c is next.
    await expect(run(router)).resolves.toBe('ok:c');
    const seen = track(router);
    // a is open: the two choices come from b and c only; a is still listed (and skipped) last.
    await run(router);
    expect(seen).toEqual(['b']);
  });
});
