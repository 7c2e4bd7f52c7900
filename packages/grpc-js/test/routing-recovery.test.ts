import { echoUnary, loadEchoPackageDefinition } from '@breakwater/chaos';
import { systemSleep } from '@breakwater/core/time';
import { status as Status } from '@grpc/grpc-js';
import { describe, expect, it, vi } from 'vitest';
import { createGrpcHealthProbe } from '../src/health.js';
import { idempotentMethods } from '../src/index.js';
import { routingSetup } from './routing-helpers.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());

describe('routing channel: a target back to READY half-opens its circuit at once', () => {
  it('the restarted primary gets its recovery call long before its open duration (60 s) ends', async () => {
    const { servers, channel, client } = await routingSetup([{}, {}], {
      idempotent,
      circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 },
    });
    const [primary] = servers;
    expect((await echoUnary(client, {})).value?.replica).toBe('replica-1');
    await primary?.stop();
    // The primary refuses connections: its call fails over, and its circuit opens for 60 s.
    expect((await echoUnary(client, {})).value?.replica).toBe('replica-2');
    expect(channel.circuit('replica-1')?.state).toBe('open');
    await primary?.restart();
    const served: string[] = [];
    // The channel reconnects on its own (FAST_RECONNECT: 50–200 ms backoff) and, once READY,
    // lets the primary's recovery call go; 5 s is only a cap for a loaded machine.
    for (let i = 0; i < 250 && served.at(-1) !== 'replica-1'; i++) {
      await systemSleep(20);
      const outcome = await echoUnary(client, {});
      expect(outcome.ok).toBe(true);
      served.push(outcome.value?.replica ?? 'failed');
    }
    expect(served.at(-1)).toBe('replica-1');
    expect(channel.circuit('replica-1')?.state).toBe('closed');
  });
});

describe("routing channel: the panic rule (the core router's outage gate)", () => {
  /** Three targets all answering UNAVAILABLE; calls every 20 ms for 1 s: attempts the servers saw, and the wall time. */
  async function outage(panic: false | undefined): Promise<{ sent: number; ms: number }> {
    const { servers, client } = await routingSetup([{}, {}, {}], {
      idempotent,
      circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 200 },
      ...(panic === undefined ? {} : { panic }),
    });
    for (const s of servers) s.setFaults([{ status: Status.UNAVAILABLE }]);
    // Fails over through all three: every circuit opens.
    expect((await echoUnary(client, {})).ok).toBe(false);
    const before = servers.reduce((n, s) => n + s.total(), 0);
    const start = performance.now();
    for (let i = 0; i < 50; i++) {
      await systemSleep(20);
      expect((await echoUnary(client, {})).ok).toBe(false);
    }
    return {
      sent: servers.reduce((n, s) => n + s.total(), 0) - before,
      ms: performance.now() - start,
    };
  }

  it('on by default: one recovery call per open duration across all the targets, not one per target', async () => {
    const on = await outage(undefined);
    expect(on.sent).toBeGreaterThanOrEqual(1);
    expect(on.sent).toBeLessThanOrEqual(Math.floor(on.ms / 200) + 1);
    // panic: false leaves each target's circuit to probe on its own (and fail over).
    const off = await outage(false);
    expect(off.sent).toBeGreaterThan(Math.floor(off.ms / 200) + 1);
  });
});

describe('routing channel: a watched grpc.health.v1 status (Health/Watch)', () => {
  /** A call every 20 ms until `until()` says stop: outcomes with when they settled, and how late ticks ran. */
  async function drive(client: Parameters<typeof echoUnary>[0], until: (calls: number) => boolean) {
    const outcomes: Array<{ ok: boolean; replica: string | undefined; settledAt: number }> = [];
    let lagMs = 0;
    while (!until(outcomes.length)) {
      const due = performance.now() + 20;
      await systemSleep(20);
      lagMs = Math.max(lagMs, performance.now() - due);
      const out = await echoUnary(client, {});
      outcomes.push({ ok: out.ok, replica: out.value?.replica, settledAt: performance.now() });
    }
    return { outcomes, lagMs };
  }

  /** Three replicas behind a routing channel whose probe watches; a recovery call per `openDurationMs` in an outage. */
  async function watched(openDurationMs: number) {
    const probe = createGrpcHealthProbe();
    const setup = await routingSetup([{}, {}, {}], {
      idempotent,
      circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs },
      // Polling every 10 s could not see a recovery within this test: only the watch can.
      health: { probe, intervalMs: 10_000 },
    });
    const attempts = () => setup.servers.reduce((n, s) => n + s.total(), 0);
    // Every watch has reported SERVING once.
    await vi.waitFor(() => {
      for (const s of setup.servers) expect(setup.channel.health.snapshot()[s.replica]?.ok).toBe(1);
    });
    return { ...setup, probe, attempts };
  }

  it('replicas failing and NOT_SERVING shed load; pushed SERVING on recovery: the first call succeeds at once', async () => {
    const { servers, client, attempts, probe } = await watched(2_000);
    try {
      for (const s of servers) {
        s.setFaults([{ status: Status.UNAVAILABLE }]);
        s.setHealth('NOT_SERVING');
      }
      const before = attempts();
      const start = performance.now();
      let last = attempts();
      // At least 1.5 s of outage, ending just after a recovery call went out: the outage
      // cadence alone would send the next one 2 s later.
      const outage = await drive(client, () => {
        const now = attempts();
        const probed = now > last;
        last = now;
        return performance.now() - start > 1_500 && (probed || performance.now() - start > 4_000);
      });
      expect(outage.outcomes.some((o) => o.ok)).toBe(false);
      const perCall = (attempts() - before) / outage.outcomes.length;
      expect(perCall, `${perCall} attempts per call in the outage`).toBeLessThanOrEqual(0.2);

      for (const s of servers) {
        s.setFaults([]);
        s.setHealth('SERVING');
      }
      const recoveredAt = performance.now();
      const atRecovery = attempts();
      const recovery = await drive(client, (n) => n >= 25);
      const first = recovery.outcomes.find((o) => o.ok);
      const firstOk = (first?.settledAt ?? Number.POSITIVE_INFINITY) - recoveredAt;
      // Well within one outage interval (2 s) and the poll (10 s): 100 ms, plus the most the
      // test's own ticks ran late (this 2-core machine's load, not the channel's schedule).
      const bound = 100 + recovery.lagMs;
      expect(firstOk, `first success ${firstOk} ms after recovery`).toBeLessThanOrEqual(bound);
      // The server saw that call.
      expect(attempts()).toBeGreaterThan(atRecovery);
      expect(servers.some((s) => s.replica === first?.replica)).toBe(true);
    } finally {
      probe.close();
    }
  });

  it('a SERVING pushed while calls still fail lets ONE recovery call go, not more, over a long outage', async () => {
    const { servers, client, attempts, probe } = await watched(500);
    try {
      for (const s of servers) s.setFaults([{ status: Status.UNAVAILABLE }]);
      // Every circuit opens (the watch says SERVING throughout: the servers lie).
      expect((await echoUnary(client, {})).ok).toBe(false);
      const before = attempts();
      const start = performance.now();
      let pushes = 0;
      const outage = await drive(client, (n) => {
        // A SERVING pushed every 200 ms, on each replica in turn.
        if (n > 0 && n % 10 === 0) {
          servers[pushes % servers.length]?.setHealth('SERVING');
          pushes += 1;
        }
        return performance.now() - start > 3_000;
      });
      const ms = performance.now() - start;
      const sent = attempts() - before;
      expect(outage.outcomes.some((o) => o.ok)).toBe(false);
      // The outage cadence (one call per 500 ms) plus one per signal.
      expect(sent).toBeLessThanOrEqual(Math.floor(ms / 500) + 1 + pushes);
      expect(sent).toBeGreaterThanOrEqual(pushes / 2);
    } finally {
      probe.close();
    }
  });
});
