import {
  type ChildGrpcChaosServer,
  createEchoClient,
  type EchoOutcome,
  echoUnary,
  loadEchoPackageDefinition,
  spawnGrpcChaosServer,
} from '@breakwater/chaos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcHealthProbe } from '../src/health.js';
import {
  createRoutingChannel,
  idempotentMethods,
  type RoutingChannelOptions,
} from '../src/index.js';
import { FAST_RECONNECT, replicas } from './routing-helpers.js';

// Three replica processes shared by the tests of this file (a tsx child takes a while to start).
let servers: ChildGrpcChaosServer[] = [];
beforeAll(async () => {
  // Generous start timeout: on a busy machine a tsx child needs several seconds to listen.
  servers = await Promise.all(
    [1, 2, 3].map((i) => spawnGrpcChaosServer({ replica: `replica-${i}`, startTimeoutMs: 45_000 })),
  );
}, 60_000);
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

const idempotent = idempotentMethods(loadEchoPackageDefinition());

function routedClient(options: Omit<RoutingChannelOptions, 'targets'>) {
  const channel = createRoutingChannel({
    idempotent,
    ...options,
    targets: servers.map((s, i) => ({
      id: `replica-${i + 1}`,
      address: s.address,
      options: FAST_RECONNECT,
    })),
  });
  return { channel, client: createEchoClient('routed', { channelOverride: channel }) };
}

async function totals(): Promise<number[]> {
  return Promise.all(servers.map(async (s) => (await s.stats()).total));
}

describe('routing over three replica processes', () => {
  it('a replica whose health check says NOT_SERVING gets no traffic', async () => {
    const probe = createGrpcHealthProbe();
    const { channel, client } = routedClient({
      selection: 'round-robin',
      // Open longer than the test: the failed checks alone keep the replica out.
      circuit: { failureSpanMs: 0, failureThreshold: 2, openDurationMs: 30_000 },
      health: { probe },
    });
    try {
      await servers[2]?.setHealth('NOT_SERVING');
      await channel.checkHealth();
      await channel.checkHealth();
      const before = await totals();
      const outcomes: EchoOutcome[] = [];
      for (let i = 0; i < 30; i++) outcomes.push(await echoUnary(client, {}));
      const after = await totals();
      const seen = after.map((n, i) => n - (before[i] ?? 0));
      expect(outcomes.every((o) => o.ok)).toBe(true);
      expect(seen[2]).toBe(0);
      expect(seen[0]).toBeGreaterThan(0);
      expect(seen[1]).toBeGreaterThan(0);
      expect(new Set(replicas(outcomes))).toEqual(new Set(['replica-1', 'replica-2']));
    } finally {
      await servers[2]?.setHealth('SERVING');
      client.close();
      probe.close();
    }
  });

  it('kill the primary mid-run: zero failed calls; restart: traffic returns after one recovery call', async () => {
    const { channel, client } = routedClient({
      selection: 'priority',
      circuit: { failureSpanMs: 0, failureThreshold: 2, openDurationMs: 300 },
    });
    const recovered: string[] = [];
    channel.onRecovered((e) => recovered.push(e.providerId));
    try {
      const outcomes: EchoOutcome[] = [];
      let killed: Promise<void> | undefined;
      // Four callers in parallel; the primary dies under them after 40 calls.
      await Promise.all(
        [0, 1, 2, 3].map(async (w) => {
          for (let i = 0; i < 40; i++) {
            outcomes.push(await echoUnary(client, { message: `${w}-${i}` }));
            if (outcomes.length === 40) killed = servers[0]?.kill();
          }
        }),
      );
      await killed;
      expect(outcomes.filter((o) => !o.ok)).toEqual([]);
      const answered = replicas(outcomes);
      expect(answered.slice(0, 30).every((r) => r === 'replica-1')).toBe(true);
      expect(answered.slice(-20).every((r) => r === 'replica-2')).toBe(true);

      await servers[0]?.restart();
      const afterRestart: string[] = [];
      let primaryTotalAtRecovery = -1;
      for (let i = 0; i < 400 && !afterRestart.includes('replica-1'); i++) {
        const outcome = await echoUnary(client, {});
        expect(outcome.ok).toBe(true);
        afterRestart.push(outcome.value?.replica ?? 'failed');
        if (outcome.value?.replica === 'replica-1') {
          primaryTotalAtRecovery = (await servers[0]?.stats())?.total ?? -1;
        } else await new Promise((r) => setTimeout(r, 5));
      }
      // Until the recovery call, everything went to replica-2; the restarted primary saw exactly that one call.
      expect(afterRestart.at(-1)).toBe('replica-1');
      expect(afterRestart.slice(0, -1).every((r) => r === 'replica-2')).toBe(true);
      expect(primaryTotalAtRecovery).toBe(1);
      expect(recovered).toContain('replica-1');
      const back: EchoOutcome[] = [];
      for (let i = 0; i < 10; i++) back.push(await echoUnary(client, {}));
      expect(replicas(back)).toEqual(Array(10).fill('replica-1'));
      expect((await servers[0]?.stats())?.total).toBe(11);
    } finally {
      client.close();
    }
  });
});
