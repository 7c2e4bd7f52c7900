import {
  createEchoClient,
  echoUnary,
  type GrpcChaosServer,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import { Channel, connectivityState, credentials } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  createRoutingChannel,
  idempotentMethods,
  type RoutingChannelOptions,
} from '../src/index.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());

/** Nearest-rank percentile of `values`. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** A grpc-js channel to `address`, connected: the calls measured never wait for a connection. */
async function connected(address: string): Promise<Channel> {
  const channel = new Channel(address, credentials.createInsecure(), {});
  for (;;) {
    const state = channel.getConnectivityState(true);
    if (state === connectivityState.READY) return channel;
    await new Promise<void>((resolve) =>
      channel.watchConnectivityState(state, Date.now() + 5_000, () => resolve()),
    );
  }
}

/** Calls through a routing channel over `servers` with `selection`, ids `<lane>-<n>`, `workers` at a time. */
async function lane(
  name: string,
  servers: readonly GrpcChaosServer[],
  selection: RoutingChannelOptions['selection'],
  calls: number,
  workers: number,
): Promise<{ latencies: number[]; failed: number }> {
  const targets = await Promise.all(servers.map((s) => connected(s.address)));
  const channel = createRoutingChannel({
    targets: servers.map((s, i) => ({ id: s.replica, channel: targets[i] as Channel })),
    idempotent,
    ...(selection === undefined ? {} : { selection }),
  });
  const client = createEchoClient('routed', { channelOverride: channel });
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (next < calls) {
          const callId = `${name}-${next++}`;
          const t0 = performance.now();
          const outcome = await echoUnary(client, {}, { callId });
          latencies.push(performance.now() - t0);
          if (!outcome.ok) failed++;
        }
      }),
    );
  } finally {
    client.close();
    channel.close();
    for (const t of targets) t.close();
  }
  return { latencies, failed };
}

describe('the default selection of a routing channel is load-aware (least-loaded)', () => {
  it('sends clearly fewer calls to a replica 3× slower than the others, where round robin splits evenly', async () => {
    const latency = (ms: number) => ({ faults: [{ latency: { kind: 'fixed' as const, ms } }] });
    // The slow one first: a default that kept registration order would send it everything.
    const servers = await Promise.all(
      [latency(90), latency(30), latency(30)].map((s, i) =>
        startGrpcChaosServer({ replica: `replica-${i + 1}`, ...s }),
      ),
    );
    try {
      // Both lanes at once over the same servers, so they meet the same conditions.
      const [leastLoaded, roundRobin] = await Promise.all([
        lane('ll', servers, undefined, 150, 3),
        lane('rr', servers, 'round-robin', 150, 3),
      ]);
      const seen = (prefix: string) =>
        servers.map((s) => s.observed.filter((o) => o.callId?.startsWith(`${prefix}-`)).length);
      const [slow, ...fast] = seen('ll');
      const rr = seen('rr');
      console.log(
        `3 replicas, one 90 ms and two 30 ms, 3 calls at a time, 150 calls a lane: ` +
          `least-loaded (default) calls per replica ${[slow, ...fast].join('/')}, ` +
          `p50 ${percentile(leastLoaded.latencies, 50).toFixed(1)} ms, p99 ${percentile(leastLoaded.latencies, 99).toFixed(1)} ms; ` +
          `round-robin ${rr.join('/')}, p50 ${percentile(roundRobin.latencies, 50).toFixed(1)} ms, ` +
          `p99 ${percentile(roundRobin.latencies, 99).toFixed(1)} ms`,
      );
      expect(leastLoaded.failed + roundRobin.failed).toBe(0);
      // Every call reached exactly one server once.
      expect((slow as number) + (fast[0] as number) + (fast[1] as number)).toBe(150);
      for (const f of fast) expect(slow as number).toBeLessThan(0.6 * (f as number));
      // Round robin, over the same servers at the same time, gives the slow one its third.
      expect(rr[0]).toBe(50);
      expect(slow as number).toBeLessThan(40);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  }, 30_000);
});
