import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import type { ManualClock } from '../time/manual-clock.js';
import { sequenceRandom } from '../time/random.js';
import { ProviderLoad } from './load.js';
import { createSelection } from './selection.js';
import { call, type FakeResource, setup } from './test-helpers/fake-providers.js';
import type { Router } from './types.js';

const run = (router: Router<FakeResource>) => router.execute((r, ctx) => call(r, ctx));

/** Provider ids the router chose, in order. */
function track(router: Router<FakeResource>): string[] {
  const seen: string[] = [];
  router.onSelected((e) => seen.push(e.providerId));
  return seen;
}

/** Makes `r` answer after `ms` of virtual time from now on. */
function answersIn(r: FakeResource, clock: ManualClock, ms: number): void {
  r.behave = async (_call, signal) => {
    await clock.sleep(ms, signal);
    return `ok:${r.id}`;
  };
}

/** Two providers `a` and `b`, least-loaded, `a` always drawn first (random 0), each answering in `ms`. */
function pair(ms: { a: number; b: number }, selection: object = {}) {
  const s = setup(['a', 'b'], {
    selection: { type: 'least-loaded', ...selection } as never,
    random: () => 0,
  });
  answersIn(s.res.a!, s.clock, ms.a);
  answersIn(s.res.b!, s.clock, ms.b);
  return s;
}

describe("'least-loaded' selection (P2C over peak-EWMA latency × (in flight + 1))", () => {
  it('a slow answer raises the cost at once (the peak); unmeasured providers count as defaultLatencyMs', async () => {
    const { router, res, clock } = pair({ a: 10, b: 20 });
    const seen = track(router);
    // Both unmeasured (30 ms each): a tie, the first drawn (a) goes.
    await clock.run(run(router));
    // a measured 10 ms, b still 30: a again.
    await clock.run(run(router));
    // One slow answer of a (200 ms) replaces its 10 ms estimate at once.
    answersIn(res.a!, clock, 200);
    await clock.run(run(router));
    await clock.run(run(router));
    expect(seen).toEqual(['a', 'a', 'a', 'b']);
  });

  it('a peak decays over decayMs: the slow provider gets calls again once it has decayed below the other', async () => {
    const { router, res, clock } = pair({ a: 100, b: 20 }, { decayMs: 1_000 });
    const seen = track(router);
    await clock.run(run(router)); // a: 100 ms (tie at the default, first drawn)
    await clock.run(run(router)); // b: a costs 100, b 30 (default)
    answersIn(res.a!, clock, 5);
    // After 1 s a has decayed to 100/e = 37 ms, still above b's 20 (just re-measured).
    clock.advance(1_000);
    await clock.run(run(router));
    // Every estimate decays while it gets no answers; b's is renewed by each call it serves.
    // 2 s more: b answers (20 ms again) while a has decayed to 100/e³ ≈ 5 ms, so a is tried again.
    clock.advance(2_000);
    await clock.run(run(router));
    await clock.run(run(router));
    expect(seen).toEqual(['a', 'b', 'b', 'b', 'a']);
  });

  it('weighs latency by the visits in flight: latency × (in flight + 1)', async () => {
    const { router, clock } = pair({ a: 10, b: 25 });
    await clock.run(Promise.all([run(router), run(router)])); // measures a (10) and b (25)
    const seen = track(router);
    // a: 10×1, then 10×2 = 20 < 25, then 10×3 = 30 > 25.
    await clock.run(Promise.all([run(router), run(router), run(router)]));
    expect(seen).toEqual(['a', 'a', 'b']);
  });

  it("a hung visit's elapsed time counts once it exceeds the estimate: its cost rises without any answer", async () => {
    const { router, res, clock } = pair({ a: 10, b: 50 });
    await clock.run(Promise.all([run(router), run(router)])); // measures a (10) and b (50)
    const seen = track(router);
    answersIn(res.a!, clock, 60_000);
    const hung = run(router);
    // 20 ms in: a costs max(10, 20) × 2 = 40 < 50, still a.
    clock.advance(20);
    const second = run(router);
    // 40 ms in: max(10, 40) × 3 = 120 > 50 even though a never answered: b.
    clock.advance(20);
    const third = run(router);
    await clock.run(Promise.all([hung, second, third]));
    expect(seen).toEqual(['a', 'a', 'b']);
  });

  it('a slow failure raises the estimate, a fast one does not lower it', async () => {
    const { router, res, clock } = pair({ a: 10, b: 40 });
    await clock.run(Promise.all([run(router), run(router)])); // a 10, b 40
    const seen = track(router);
    res.a!.behave = async () => {
      throw new Error('refused');
    };
    // A failure at once: a stays at 10 and is still preferred (it fails over to b).
    await clock.run(run(router));
    res.a!.behave = async (_call, signal) => {
      await clock.sleep(300, signal);
      throw new Error('timed out');
    };
    await clock.run(run(router)); // a fails after 300 ms: now a costs 300
    await clock.run(run(router));
    expect(seen).toEqual(['a', 'b', 'a', 'b', 'b']);
  });

  it('ties: equal costs go to the one with fewer in flight, a full tie to the first drawn', async () => {
    // Instant answers measure 0 ms, as the default does here: every cost is 0, whatever the load.
    const { router, res } = setup(['a', 'b'], {
      selection: { type: 'least-loaded', defaultLatencyMs: 0 },
      random: sequenceRandom([0, 0, 0.5, 0]),
    });
    await run(router); // a (drawn first)
    await run(router); // b (drawn first)
    const seen = track(router);
    res.a!.behave = () => new Promise<string>(() => {});
    void run(router); // drawn (a, b): a, which now never answers
    // Drawn (b, a): costs 0 and 0 (a's visit has been out 0 ms); b has fewer in flight.
    await run(router);
    // Drawn (a, b) again: b has none in flight, a one.
    await run(router);
    expect(seen).toEqual(['a', 'b', 'b']);
  });

  it('never chooses an open provider while a healthy one exists', async () => {
    const { router, res, clock } = setup(['a', 'b', 'c'], {
      selection: 'least-loaded',
      protection: {
        circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 60_000 },
      },
      random: () => 0,
    });
    for (const id of ['a', 'b']) {
      res[id]!.behave = async () => {
        throw new Error('down');
      };
    }
    answersIn(res.c!, clock, 50);
    await clock.run(run(router)); // random 0 draws (a, c): a fails, c answers (50 ms)
    await clock.run(run(router)); // draws (b, c) among the healthy: b (30 ms, unmeasured) fails, c answers
    const seen = track(router);
    const skipped: string[] = [];
    router.onSkipped((e) => skipped.push(e.providerId));
    await clock.run(run(router));
    expect(router.circuit('a')?.state).toBe('open');
    expect(router.circuit('b')?.state).toBe('open');
    expect(seen).toEqual(['c']);
    expect(skipped).toEqual([]);
  });

  it('rejects bad settings naming the option', () => {
    const bad = (selection: object) => () => setup(['a', 'b'], { selection: selection as never });
    expect(bad({ type: 'least-loaded', decayMs: 0 })).toThrow(/selection\.decayMs must be > 0/);
    expect(bad({ type: 'least-loaded', defaultLatencyMs: -1 })).toThrow(
      /selection\.defaultLatencyMs must be >= 0/,
    );
    expect(bad({ type: 'least-loaded', decay: 5 })).toThrow(/unknown option `selection\.decay`/);
    expect(bad({ type: 'round-robin', decayMs: 5 })).toThrow(/unknown option `selection\.decayMs`/);
  });
});

describe("'least-loaded' order (fast-check)", () => {
  const provider = fc.record({
    latencyMs: fc.option(fc.integer({ min: 0, max: 500 }), { nil: undefined }),
    inflight: fc.integer({ min: 0, max: 4 }),
    healthy: fc.boolean(),
  });

  it('is a permutation; the first two are distinct healthy providers; the first is never worse on both latency and load', () => {
    fc.assert(
      fc.property(
        fc.array(provider, { minLength: 1, maxLength: 6 }),
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
          minLength: 2,
          maxLength: 2,
        }),
        (providers, draws) => {
          const now = 10_000;
          const loads = providers.map((p) => {
            const load = new ProviderLoad({ decayMs: 10_000, defaultLatencyMs: 30 });
            if (p.latencyMs !== undefined) load.succeeded(p.latencyMs, now);
            for (let i = 0; i < p.inflight; i++) load.begin(now);
            return load;
          });
          const ids = providers.map((_, i) => `p${i}`);
          const view = {
            count: providers.length,
            latency: () => undefined,
            load: (i: number) => loads[i] as ProviderLoad,
            clock: () => now,
            healthy: (i: number) => providers[i]?.healthy === true,
          };
          const order = createSelection('least-loaded', ids, view, sequenceRandom(draws)).order();
          expect([...order].sort()).toEqual(ids.map((_, i) => i).sort());
          const healthy = providers.filter((p) => p.healthy).length;
          if (healthy >= 1) expect(providers[order[0] as number]?.healthy).toBe(true);
          if (healthy < 2) return;
          const [first, second] = [order[0] as number, order[1] as number];
          expect(first).not.toBe(second);
          expect(providers[second]?.healthy).toBe(true);
          const [f, s] = [loads[first] as ProviderLoad, loads[second] as ProviderLoad];
          const worseOnBoth = f.latency(now) > s.latency(now) && f.inflight > s.inflight;
          expect(worseOnBoth).toBe(false);
        },
      ),
      { seed: 30, numRuns: 500 },
    );
  });
});
