import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRoutingError } from '../errors/routing-error.js';
import type { Probe, ProbeWatchContext } from '../health/probe.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { call, type FakeResource, failing, setup } from './test-helpers/fake-providers.js';

const run = (router: ReturnType<typeof setup>['router']) =>
  router.execute((r, ctx) => call(r, ctx));

const circuit = { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1000 };

/** Opens provider `r`'s threshold-1 circuit with one failed visit. */
async function openCircuit(router: ReturnType<typeof setup>['router'], r: FakeResource) {
  const behave = r.behave;
  failing(r);
  await run(router).catch(() => {});
  r.behave = behave;
}

describe('router: a recovery probe is never retried', () => {
  it('a probe visit makes one attempt, re-opens on failure and fails over', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { circuit, retry: { attempts: 3, backoff: { baseDelayMs: 0 } } },
      panic: false,
    });
    failing(res.a!);
    await expect(run(router)).resolves.toBe('ok:b');
    expect(res.a?.calls).toBe(3);
    expect(router.circuit('a')?.state).toBe('open');
    clock.advance(1000);
    await expect(run(router)).resolves.toBe('ok:b');
    // The probe: one attempt, not three.
    expect(res.a?.calls).toBe(4);
    expect(router.circuit('a')?.state).toBe('open');
  });

  it('the same with hedging on (the parallel traversal)', async () => {
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { circuit, retry: { attempts: 3, backoff: { baseDelayMs: 0 } } },
      hedge: { delayMs: 500 },
      panic: false,
    });
    failing(res.a!);
    await clock.run(run(router));
    expect(res.a?.calls).toBe(3);
    clock.advance(1000);
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(res.a?.calls).toBe(4);
  });

  it('property: a probe visit makes exactly one attempt', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 10 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        async (attempts, probeFails) => {
          const { router, res, clock } = setup(['a'], {
            protection: { circuit, retry: { attempts, backoff: { baseDelayMs: 0 } } },
            panic: false,
          });
          await openCircuit(router, res.a!);
          for (const fails of probeFails) {
            clock.advance(1000);
            const before = res.a!.calls;
            if (fails) failing(res.a!);
            else res.a!.behave = async () => 'ok:a';
            await clock.run(run(router)).catch(() => {});
            expect(res.a!.calls - before).toBe(1);
            expect(router.circuit('a')?.state).toBe(fails ? 'open' : 'closed');
            if (!fails) break;
          }
        },
      ),
      { seed: 42, numRuns: 60 },
    );
  });
});

describe('router: a probe that never reached the provider', () => {
  it('re-opens the circuit (the provider is unreachable); a connection back lets the next request probe', async () => {
    const { router, res, clock } = setup(['a'], {
      protection: { circuit },
      classify: () => ({ neverSent: true }),
      panic: false,
    });
    await openCircuit(router, res.a!);
    clock.advance(1000);
    failing(res.a!);
    await expect(run(router)).rejects.toSatisfy(isRoutingError);
    expect(router.circuit('a')?.state).toBe('open');
    await expect(run(router)).rejects.toSatisfy(isRoutingError);
    expect(res.a!.calls).toBe(2);
    res.a!.behave = async () => 'ok:a';
    router.signalReachable('a', true);
    await expect(run(router)).resolves.toBe('ok:a');
    expect(router.circuit('a')?.state).toBe('closed');
  });
});

describe('router: the panic rule', () => {
  it('threshold: panics once that fraction of providers is ejected; false turns it off', async () => {
    const half = setup(['a', 'b', 'c'], {
      protection: { circuit },
      panic: { threshold: 0.5, ratio: 1 },
      selection: { type: 'priority', priorities: { a: 2, b: 1, c: 0 } },
    });
    await openCircuit(half.router, half.res.a!);
    // One of three is ejected: no panic, a is skipped.
    await expect(run(half.router)).resolves.toBe('ok:b');
    failing(half.res.b!);
    await run(half.router);
    half.res.b!.behave = async () => 'ok:b';
    // Two of three (>= 0.5): a request visits the ejected a as its probe (ratio 1: every request).
    await expect(run(half.router)).resolves.toBe('ok:a');
    expect(half.router.circuit('a')?.state).toBe('closed');

    const off = setup(['a'], { protection: { circuit }, panic: false });
    await openCircuit(off.router, off.res.a!);
    for (let i = 0; i < 20; i++) await expect(run(off.router)).rejects.toSatisfy(isRoutingError);
    expect(off.res.a!.calls).toBe(1);
  });

  it('a panic visit never overrides an isolated circuit or a probe in flight', async () => {
    const { router, res, clock } = setup(['a'], { protection: { circuit }, panic: { ratio: 1 } });
    router.circuit('a')?.isolate();
    for (let i = 0; i < 5; i++) await expect(run(router)).rejects.toSatisfy(isRoutingError);
    expect(res.a!.calls).toBe(0);
    router.circuit('a')?.reset();
    await openCircuit(router, res.a!);
    // Every provider is ejected: the outage gate's probe goes one interval after the opening.
    clock.advance(1000);
    let release: (v: string) => void = () => {};
    res.a!.behave = () => new Promise<string>((r) => (release = r));
    const probe = run(router);
    await expect(run(router)).rejects.toSatisfy(isRoutingError);
    release('ok:a');
    await expect(probe).resolves.toBe('ok:a');
  });

  it('rejects a bad panic option naming its path', () => {
    expect(() => setup(['a'], { panic: { ratio: 0 } })).toThrow(/panic\.ratio.*0/);
    expect(() => setup(['a'], { panic: { threshold: 2 } })).toThrow(/panic\.threshold.*2/);
    expect(() => setup(['a'], { panic: { rate: 1 } as never })).toThrow(/panic\.rate/);
  });
});

describe('router: a passing health check half-opens the circuit at once', () => {
  it('the next request probes the provider without waiting out the open duration', async () => {
    let up = false;
    const { router, res, clock } = setup(['a', 'b'], {
      protection: {
        circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 60_000 },
      },
      panic: false,
      health: {
        probe: async () => {
          if (!up) throw new Error('down');
        },
        intervalMs: 100,
        timeoutMs: 50,
        failureThreshold: 100,
      },
    });
    try {
      await openCircuit(router, res.a!);
      await expect(run(router)).resolves.toBe('ok:b');
      expect(router.circuit('a')?.state).toBe('open');
      up = true;
      await clock.advanceAsync(100);
      expect(router.circuit('a')?.state).toBe('half-open');
      await expect(run(router)).resolves.toBe('ok:a');
      expect(router.circuit('a')?.state).toBe('closed');
    } finally {
      router.stop();
    }
  });
});

describe('router: a watched health status (pushed, not polled)', () => {
  /** A probe whose watch reports NOT_SERVING at once and then whatever `push` sends. */
  function watching() {
    const open = new Map<string, ProbeWatchContext>();
    const probe: Probe<FakeResource> = Object.assign(async () => {}, {
      watch: (_r: FakeResource, ctx: ProbeWatchContext) =>
        new Promise<void>((resolve) => {
          open.set(ctx.provider, ctx);
          ctx.report(false, 'NOT_SERVING');
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    });
    const push = (id: string, healthy: boolean) => open.get(id)?.report(healthy);
    return { probe, push };
  }

  it('over a long outage a pushed SERVING lets ONE probe go; once healed the next call succeeds', async () => {
    const { probe, push } = watching();
    const { router, res, clock } = setup(['a', 'b', 'c'], {
      protection: {
        circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 200 },
      },
      // Polling every 10 s would not see the recovery for seconds: only the watch can.
      health: { probe, intervalMs: 10_000, timeoutMs: 50, failureThreshold: 100 },
    });
    try {
      await clock.flush();
      const ok = { a: res.a!.behave, b: res.b!.behave, c: res.c!.behave };
      for (const r of [res.a!, res.b!, res.c!]) failing(r);
      const attempts = () => res.a!.calls + res.b!.calls + res.c!.calls;
      // 10 s of outage, a request every 10 ms, and a (false) SERVING pushed every second.
      let requests = 0;
      for (let t = 0; t < 10_000; t += 10) {
        if (t % 1000 === 500) push(['a', 'b', 'c'][(t / 1000) % 3] as string, true);
        await run(router).catch(() => {});
        requests += 1;
        await clock.advanceAsync(10);
      }
      // The outage cadence (one probe per 200 ms: 50) plus one probe per signal (10),
      // plus the three calls that opened the circuits.
      expect(attempts()).toBeLessThanOrEqual(50 + 10 + 3);
      expect(attempts() / requests).toBeLessThanOrEqual(0.2);
      res.a!.behave = ok.a;
      res.b!.behave = ok.b;
      res.c!.behave = ok.c;
      const before = attempts();
      // Just after an outage probe went out: the cadence alone would refuse the next calls.
      push('b', true);
      await expect(run(router)).resolves.toBe('ok:b');
      expect(attempts()).toBe(before + 1);
      expect(router.circuit('b')?.state).toBe('closed');
    } finally {
      router.stop();
    }
    expect(clock.pending).toBe(0);
  });
});

describe('router: health-registry ejections', () => {
  it('the panic rule sends a request to a provider the registry ejected, as its one recovery call', async () => {
    const { router, res } = setup(['a', 'b'], {
      health: { failureThreshold: 1, openDurationMs: 60_000 },
      panic: { threshold: 0.5, ratio: 0.5 },
    });
    failing(res.a!);
    await run(router).catch(() => {});
    expect(router.health.isOpen('a')).toBe(true);
    res.a!.behave = async () => 'ok:a';
    await expect(run(router)).resolves.toBe('ok:b');
    await expect(run(router)).resolves.toBe('ok:a');
    expect(router.health.circuitState('a')).toBe('closed');
  });

  it('registry.halfOpen(name): an open entry lets its recovery call through now', () => {
    const { router } = setup(['a'], { health: { failureThreshold: 1, openDurationMs: 60_000 } });
    const health = router.health;
    health.failure('a');
    expect(health.circuitState('a')).toBe('open');
    health.halfOpen('a');
    expect(health.circuitState('a')).toBe('half-open');
    // The streak is kept: the next failure re-opens at once.
    health.failure('a');
    expect(health.circuitState('a')).toBe('open');
    health.halfOpen('unknown');
    expect(health.circuitState('unknown')).toBe('closed');
    expect(() => health.halfOpen('')).toThrow(TypeError);
  });
});
