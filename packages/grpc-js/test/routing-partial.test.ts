import { echoUnary, loadEchoPackageDefinition } from '@breakwater/chaos';
import { createRetryBudget, systemSleep } from '@breakwater/core';
import { describe, expect, it, vi } from 'vitest';
import { createGrpcHealthProbe } from '../src/health.js';
import { idempotentMethods } from '../src/index.js';
import { routingSetup } from './routing-helpers.js';

// Issue 30: one replica of three killed or saying NOT_SERVING, 50 calls/s, a small retry
// budget. Every call must succeed, without the budget paying for failovers no server saw.

const idempotent = idempotentMethods(loadEchoPackageDefinition());

/** `n` calls, one every 20 ms (50 calls/s): how many succeeded. */
async function drive(client: Parameters<typeof echoUnary>[0], n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    await systemSleep(20);
    if ((await echoUnary(client, {})).ok) ok++;
  }
  return ok;
}

describe('routing channel: one replica killed (its listener closed)', () => {
  it('every call succeeds, the dead one is skipped, and its failovers draw nothing from the budget', async () => {
    const budget = createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 1 });
    const { servers, channel, client } = await routingSetup([{}, {}, {}], {
      idempotent,
      selection: 'round-robin',
      budget,
    });
    const [dead, ...alive] = servers;
    expect(await drive(client, 6)).toBe(6);
    await dead?.stop();
    const visits = { dead: 0, refused: 0 };
    channel.onSelected((e) => {
      if (e.providerId === 'replica-1') visits.dead++;
    });
    channel.onFailed(() => visits.refused++);
    const before = alive.reduce((n, s) => n + s.total(), 0);
    const calls = 150;
    expect(await drive(client, calls)).toBe(calls);
    // Each call reached one live replica exactly once: no hedges, no repeats of sent calls.
    expect(alive.reduce((n, s) => n + s.total(), 0) - before).toBe(calls);
    expect(budget.stats().retries).toBe(0);
    // Skipped once its channel is in TRANSIENT_FAILURE or its circuit opened: a few visits
    // while grpc-js notices, not a third of the calls.
    expect(visits.dead, `${visits.dead} visits to the dead replica`).toBeLessThanOrEqual(10);
    expect(visits.refused).toBe(visits.dead);
  });
});

describe('routing channel: a replica that pushes NOT_SERVING (Health/Watch)', () => {
  it('is ejected at once and gets no call; SERVING brings it back', async () => {
    const probe = createGrpcHealthProbe();
    const { servers, channel, client } = await routingSetup([{}, {}, {}], {
      idempotent,
      selection: 'round-robin',
      health: { probe, intervalMs: 10_000 },
    });
    try {
      await vi.waitFor(() => {
        for (const s of servers) expect(channel.health.snapshot()[s.replica]?.ok).toBe(1);
      });
      const [sick] = servers;
      sick?.setHealth('NOT_SERVING');
      await vi.waitFor(() => expect(channel.circuit('replica-1')?.state).toBe('open'));
      const before = sick?.total();
      // 1 s: five open durations of the standard circuit pass, and no probe goes there.
      expect(await drive(client, 50)).toBe(50);
      expect(sick?.total()).toBe(before);
      sick?.setHealth('SERVING');
      await vi.waitFor(async () => {
        expect((await echoUnary(client, {})).value?.replica).toBe('replica-1');
      });
      expect(channel.circuit('replica-1')?.state).toBe('closed');
    } finally {
      probe.close();
    }
  });
});
