import { callMetadata, echoUnary, loadEchoPackageDefinition } from '@breakwater/chaos';
import { createRetryBudget } from '@breakwater/core';
import { systemSleep } from '@breakwater/core/time';
import { status } from '@grpc/grpc-js';
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

/** Three replicas under round-robin, warmed up: their normal latency is what a hung call is judged by. */
async function warmedUp() {
  const setup = await routingSetup([{}, {}, {}], { selection: 'round-robin', idempotent });
  for (let i = 0; i < 40; i++) await echoUnary(setup.client, {});
  return { ...setup, hole: setup.servers[2] as (typeof setup.servers)[number] };
}

describe('routing channel over three replicas, one black-holed (accepts, never answers)', () => {
  it('round-robin: backs up each hung call, counts it for its target, ejects the hole within 400 ms and skips it once its circuit opens', async () => {
    const { servers, channel, client, hole } = await warmedUp();
    const opened: number[] = [];
    channel.circuit(hole.replica)?.onStateChange((e) => {
      if (e.to === 'open') opened.push(performance.now());
    });
    hole.setFaults([{ methods: ['Unary'], hang: true }]);
    for (const s of servers) s.reset();
    const hungAt = performance.now();
    const calls: Promise<boolean>[] = [];
    // ~50 calls a second for 3 s, each with a 1 s deadline.
    for (let i = 0; i < 150; i++) {
      calls.push(
        echoUnary(
          client,
          {},
          { callId: `c${i}`, callOptions: { deadline: Date.now() + 1_000 } },
        ).then((o) => o.ok),
      );
      await systemSleep(20);
    }
    const ok = (await Promise.all(calls)).filter(Boolean).length;
    const openedAfterMs = (opened[0] ?? Number.POSITIVE_INFINITY) - hungAt;
    console.info(
      `routing channel black hole: ${ok}/150 answered; hole's circuit open ${openedAfterMs.toFixed(0)} ms after the hang; the hole saw ${hole.total()} attempts`,
    );
    expect(ok / 150).toBeGreaterThanOrEqual(0.98);
    // Two visits in a row ran past the hole's 100 ms cut while another replica answered: within
    // its round-robin turn (60 ms) and two cuts (measured 624-955 ms before that rule).
    expect(openedAfterMs).toBeLessThan(400);
    // Skipped once open: only the calls before it opened, and recovery probes, went there.
    expect(hole.total()).toBeLessThan(25);
  }, 20_000);
});

describe('routing channel: the router backs up a hung attempt (its derived attempt timeout)', () => {
  it('an idempotent call is backed up and answered, the hole sees it cancelled; a non-idempotent one is never backed up: it waits for its own deadline, executed once', async () => {
    const { servers, channel, client, hole } = await warmedUp();
    hole.setFaults([{ methods: ['Unary', 'UnaryUnsafe'], hang: true }]);
    for (const s of servers) s.reset();
    const failedBefore = channel.health.snapshot()[hole.replica]?.fail ?? 0;
    // A 5 s deadline: whatever the hole saw end within the next second, the client cancelled.
    const callOptions = () => ({ deadline: Date.now() + 5_000 });
    const startedAt = performance.now();
    const safe: boolean[] = [];
    const unsafe: Array<{ id: string; code: number | undefined; ms: number }> = [];
    // Round-robin over three: three calls of each kind, one of each reaches the hole.
    for (let i = 0; i < 3; i++) {
      const o = await echoUnary(client, {}, { callId: `safe-${i}`, callOptions: callOptions() });
      safe.push(o.ok);
    }
    for (let i = 0; i < 3; i++) {
      const id = `unsafe-${i}`;
      const sentAt = performance.now();
      const o = await echoUnary(
        client,
        {},
        // Its own 1 s deadline ends the one that reaches the hole: no cut could be retried.
        { callId: id, method: 'UnaryUnsafe', callOptions: { deadline: Date.now() + 1_000 } },
      );
      unsafe.push({ id, code: o.error?.code, ms: performance.now() - sentAt });
    }
    expect(performance.now() - startedAt).toBeLessThan(3_000);
    expect(safe).toEqual([true, true, true]);
    const cut = unsafe.filter((u) => u.code !== undefined);
    expect(cut.map((u) => u.code)).toEqual([status.DEADLINE_EXCEEDED]);
    // Waited out its deadline at the hole, not cut at 3 × the p99.
    expect(cut[0]?.ms).toBeGreaterThan(900);
    for (const u of unsafe) {
      expect(servers.reduce((n, s) => n + s.attempts(u.id), 0)).toBe(1);
    }
    const seen = hole.observed.map((a) => a.callId ?? '');
    expect(seen).toHaveLength(2);
    expect(seen.filter((id) => id.startsWith('safe-'))).toHaveLength(1);
    expect(seen).toContain(cut[0]?.id);
    await vi.waitFor(
      () => expect(hole.observed.map((a) => a.outcome)).toEqual(['CANCELLED', 'CANCELLED']),
      { timeout: 1_000 },
    );
    expect(
      (channel.health.snapshot()[hole.replica]?.fail ?? 0) - failedBefore,
    ).toBeGreaterThanOrEqual(1);
  }, 20_000);

  it('never cuts a request stream: its first answer waits on its own writes, and no other target may take it', async () => {
    const { servers, client } = await warmedUp();
    for (const s of servers) s.reset();
    const echoed = await new Promise<string[]>((resolve, reject) => {
      const call = client.Bidi(callMetadata('stream'), { deadline: Date.now() + 5_000 });
      const out: string[] = [];
      call.on('data', (m: { message: string }) => out.push(m.message));
      call.on('error', reject);
      call.on('end', () => resolve(out));
      // Well past 3 × the warm-up's p99 (and the 100 ms floor) before the first write.
      void systemSleep(400).then(() => {
        call.write({ message: 'late' });
        call.end();
      });
    });
    expect(echoed).toEqual(['late']);
    const seen = servers.flatMap((s) => s.observed);
    expect(seen.map((a) => a.outcome)).toEqual(['OK']);
  }, 20_000);

  it('every target hung: each slow attempt is backed up on the next target, and the call ends DEADLINE_EXCEEDED at its own deadline, not "no target available"', async () => {
    const { servers, client } = await warmedUp();
    for (const s of servers) {
      s.setFaults([{ methods: ['Unary'], hang: true }]);
      s.reset();
    }
    const startedAt = performance.now();
    const o = await echoUnary(
      client,
      {},
      { callId: 'all-hung', callOptions: { deadline: Date.now() + 2_000 } },
    );
    expect(o.error?.code, o.error?.details).toBe(status.DEADLINE_EXCEEDED);
    // Backups at ~100 ms each; the three attempts ran on together until the call's deadline.
    const ms = performance.now() - startedAt;
    expect(ms).toBeGreaterThan(1_900);
    expect(ms).toBeLessThan(2_600);
    expect(servers.map((s) => s.attempts('all-hung'))).toEqual([1, 1, 1]);
    await vi.waitFor(() =>
      expect(servers.flatMap((s) => s.observed.map((a) => a.outcome))).toEqual([
        'CANCELLED',
        'CANCELLED',
        'CANCELLED',
      ]),
    );
  }, 20_000);
});

// Issue 30, the demo's "B long tail": replica-1 down, replica-2 slow on every fifth call. A slow
// call runs past replica-2's derived cut; the backup goes to replica-1 (its circuit half-open)
// and fails — replica-2's own attempt, left running, answers it. Killed, replica-1's channel goes
// TRANSIENT_FAILURE and is not backed up to at all; down behind a listener that still accepts
// (UNAVAILABLE on every call), its channel stays READY and its circuit half-opens now and then.
describe('routing channel: one replica down, the other 300 ms slow on some calls', () => {
  it.each(['killed', 'UNAVAILABLE'] as const)(
    '%s: every call is answered by the slow replica, which saw each slow call once',
    async (down) => {
      const { servers, client } = await routingSetup([{}, {}], {
        selection: 'round-robin',
        idempotent,
      });
      const [dead, slow] = servers;
      if (dead === undefined || slow === undefined) throw new Error('two replicas expected');
      for (let i = 0; i < 40; i++) await echoUnary(client, {});
      if (down === 'killed') await dead.stop();
      else dead.setFaults([{ methods: ['Unary'], status: status.UNAVAILABLE }]);
      const lost: string[] = [];
      const slowSeen: number[] = [];
      for (let i = 0; i < 100; i++) {
        await systemSleep(20);
        const callId = `tail-${i}`;
        const isSlow = i % 5 === 0;
        if (isSlow) slow.setFaults([{ methods: ['Unary'], latency: { kind: 'fixed', ms: 300 } }]);
        const o = await echoUnary(
          client,
          {},
          { callId, callOptions: { deadline: Date.now() + 1_000 } },
        );
        if (isSlow) {
          slowSeen.push(slow.attempts(callId));
          slow.setFaults([]);
        }
        if (!o.ok) lost.push(`${callId}: ${o.error?.details}`);
      }
      expect(lost).toEqual([]);
      expect(slowSeen).toEqual(Array.from({ length: 20 }, () => 1));
    },
    20_000,
  );
});
