import { describe, expect, it } from 'vitest';
import { isRoutingError } from '../errors/routing-error.js';
import { createRetryBudget } from '../retry/budget.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { call, type FakeResource, failing, setup } from './test-helpers/fake-providers.js';
import type { Router } from './types.js';

// Issue 30: one provider of several is dead, hung or says it is not serving. The router must
// send it as few user calls as it can, and never lose a call another provider would answer.

const run = (router: Router<FakeResource>) => router.execute((r, ctx) => call(r, ctx));
const circuit = { ...COUNT_ONLY_CIRCUIT, failureThreshold: 2, openDurationMs: 200 };
/** The verdict of an error whose message ends in "refused": the request never left. */
const classify = (e: unknown) => ({ neverSent: /refused$/.test((e as Error).message) });
const refused = (r: FakeResource) => failing(r, `${r.id} refused`);
const ids = ['a', 'b', 'c'];

describe('router: a provider that cannot be reached is ejected', () => {
  it('never-sent failures open its circuit, and a never-sent probe re-opens it', async () => {
    const { router, res, clock } = setup(ids, {
      selection: 'round-robin',
      protection: { circuit },
      classify,
    });
    refused(res.a!);
    // 60 calls over 1.2 s: every one answered; a gets its two failures, then one probe per
    // 200 ms (each re-opens it) — not a probe on every one of its round-robin turns.
    for (let i = 0; i < 60; i++) {
      await expect(clock.run(run(router))).resolves.toMatch(/^ok:[bc]$/);
      clock.advance(20);
    }
    expect(res.a!.calls).toBeLessThanOrEqual(2 + 6);
    expect(router.circuit('a')?.state).toBe('open');
  });

  it('a re-opened circuit half-opens on a connection back (signalReachable), and the next call probes', async () => {
    const { router, res, clock } = setup(['a', 'b'], { protection: { circuit }, classify });
    refused(res.a!);
    await clock.run(run(router));
    await clock.run(run(router));
    expect(router.circuit('a')?.state).toBe('open');
    clock.advance(200);
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(router.circuit('a')?.state).toBe('open');
    res.a!.behave = async () => 'ok:a';
    router.signalReachable('a', true);
    await expect(clock.run(run(router))).resolves.toBe('ok:a');
    expect(router.circuit('a')?.state).toBe('closed');
  });

  it('signalReachable(false): visited after every other provider until it connects again', async () => {
    const { router, res, clock } = setup(ids, { selection: 'round-robin', classify });
    router.signalReachable('a', false);
    for (let i = 0; i < 9; i++) await expect(clock.run(run(router))).resolves.toMatch(/^ok:[bc]$/);
    expect(res.a!.calls).toBe(0);
    // No other provider answers: a is still tried, last.
    failing(res.b!);
    failing(res.c!);
    await expect(clock.run(run(router))).resolves.toBe('ok:a');
    router.signalReachable('a', true);
    res.b!.behave = async () => 'ok:b';
    res.c!.behave = async () => 'ok:c';
    const served = [];
    for (let i = 0; i < 3; i++) served.push(await clock.run(run(router)));
    expect(served).toContain('ok:a');
  });
});

describe('router: a recovery probe never costs the caller', () => {
  it('a failed probe fails over, with no budget drawn when it never left', async () => {
    const budget = createRetryBudget({ ratio: 0, minRetriesPerSecond: 0 });
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { circuit: { ...circuit, failureThreshold: 1 } },
      classify,
      budget,
    });
    refused(res.a!);
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    clock.advance(200);
    expect(router.circuit('a')?.state).toBe('half-open');
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(res.a!.calls).toBe(2);
    expect(budget.stats().retries).toBe(0);
  });

  it('no new probe while the last one is out (a hung probe): the calls go elsewhere', async () => {
    for (const hedge of [undefined, { delayMs: 50_000 }]) {
      const { router, res, clock } = setup(['a', 'b'], {
        protection: { circuit: { ...circuit, failureThreshold: 1 } },
        ...(hedge === undefined ? {} : { hedge }),
        panic: false,
      });
      failing(res.a!);
      await clock.run(run(router));
      clock.advance(200);
      res.a!.behave = (_n, signal) => clock.sleep(10_000, signal).then(() => 'ok:a');
      const probe = run(router);
      // Past the probe slot's lease (one open duration): the circuit would admit another probe.
      for (let i = 0; i < 10; i++) {
        clock.advance(100);
        await expect(clock.run(run(router))).resolves.toBe('ok:b');
      }
      expect(res.a!.calls).toBe(2);
      await clock.run(probe);
      // Once the probe is back, the next probe may go.
      expect(router.circuit('a')?.state).toBe('closed');
    }
  });
});

describe('router: a provider whose health service says NOT_SERVING', () => {
  it('is ejected at once, gets no probe while another answers, and SERVING lets the next call probe', async () => {
    const { router, res, clock } = setup(['a', 'b'], { protection: { circuit } });
    router.signalServing('a', false);
    expect(router.circuit('a')?.state).toBe('open');
    // Open durations pass: its circuit half-opens, but a probe goes there only if b fails.
    for (let i = 0; i < 10; i++) {
      clock.advance(100);
      await expect(clock.run(run(router))).resolves.toBe('ok:b');
    }
    expect(res.a!.calls).toBe(0);
    router.signalServing('a', true);
    await expect(clock.run(run(router))).resolves.toBe('ok:a');
    expect(router.circuit('a')?.state).toBe('closed');
  });

  it("the router's own health watch: a reported NOT_SERVING ejects, SERVING brings it back", async () => {
    let report: ((healthy: boolean, reason?: string) => void) | undefined;
    const probe = Object.assign(async () => {}, {
      watch: (target: FakeResource, ctx: { signal: AbortSignal; report: typeof report }) =>
        new Promise<undefined>((resolve) => {
          if (target.id === 'a') report = ctx.report;
          ctx.signal.addEventListener('abort', () => resolve(undefined));
        }),
    });
    const { router, res, clock } = setup(['a', 'b'], {
      protection: { circuit },
      health: { probe, intervalMs: 60_000 },
    });
    try {
      await clock.flush();
      report?.(true, 'SERVING');
      await expect(clock.run(run(router))).resolves.toBe('ok:a');
      report?.(false, 'NOT_SERVING');
      expect(router.circuit('a')?.state).toBe('open');
      clock.advance(1_000);
      await expect(clock.run(run(router))).resolves.toBe('ok:b');
      report?.(true, 'SERVING');
      await expect(clock.run(run(router))).resolves.toBe('ok:a');
      expect(res.a!.calls).toBe(2);
    } finally {
      router.stop();
    }
  });

  it('with every provider ejected, the outage probe goes to one that did not say NOT_SERVING', async () => {
    const { router, res, clock } = setup(['a', 'b'], { protection: { circuit } });
    router.signalServing('a', false);
    failing(res.b!);
    await expect(clock.run(run(router))).rejects.toSatisfy(isRoutingError);
    await expect(clock.run(run(router))).rejects.toSatisfy(isRoutingError);
    expect(router.circuit('b')?.state).toBe('open');
    res.b!.behave = async () => 'ok:b';
    clock.advance(200);
    await expect(clock.run(run(router))).resolves.toBe('ok:b');
    expect(res.a!.calls).toBe(0);
  });
});
