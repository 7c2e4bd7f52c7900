import {
  createEchoClient,
  echoUnary,
  type GrpcChaosServer,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import { status as Status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { disableGrpcRetries, idempotentMethods, resilienceInterceptor } from '../src/index.js';

/** For each attempt `flaky` failed: the call's next attempt, as the servers saw it. */
function retriesAfter(flaky: GrpcChaosServer, servers: GrpcChaosServer[]) {
  const all = servers.flatMap((s) => s.observed);
  return flaky.observed
    .filter((o) => o.outcome === 'UNAVAILABLE')
    .map((failed) => {
      const next = all
        .filter(
          (o) => o !== failed && o.callId === failed.callId && o.receivedAt >= failed.receivedAt,
        )
        .sort((a, b) => a.receivedAt - b.receivedAt)[0];
      return {
        gapMs: next === undefined ? Number.NaN : next.receivedAt - failed.receivedAt,
        replica: next?.replica,
      };
    });
}

describe('resilienceInterceptor over round_robin with one replica failing 30% UNAVAILABLE', () => {
  it('sends the retry of a turned-away attempt at once, to another replica (no backoff)', async () => {
    const servers = await Promise.all(
      ['a', 'b', 'flaky'].map((replica) => startGrpcChaosServer({ replica, seed: 7 })),
    );
    const flaky = servers[2] as GrpcChaosServer;
    flaky.setFaults([{ rate: 0.3, status: Status.UNAVAILABLE }]);
    const target = `ipv4:${servers.map((s) => s.address).join(',')}`;
    const client = createEchoClient(target, {
      ...disableGrpcRetries,
      'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
      interceptors: [
        resilienceInterceptor({
          idempotent: idempotentMethods(loadEchoPackageDefinition()),
          // Jitter at the top of its range: a backoff would wait ~99 ms (full jitter from 100 ms).
          random: () => 0.99,
        }),
      ],
    });
    try {
      // One call at a time: round_robin's next pick after the flaky replica is another one.
      const outcomes = [];
      for (let i = 0; i < 60; i++) {
        outcomes.push(
          await echoUnary(
            client,
            { message: `m${i}` },
            { callId: `c${i}`, callOptions: { deadline: Date.now() + 1_000 } },
          ),
        );
      }
      expect(outcomes.filter((o) => o.ok)).toHaveLength(60);
      const retries = retriesAfter(flaky, servers);
      // The seeded schedule fails a share of the flaky replica's ~20 attempts.
      expect(retries.length).toBeGreaterThanOrEqual(3);
      for (const retry of retries) {
        expect(retry.replica).not.toBe('flaky');
        // Server-side arrival times: the retry reached its replica right after the failure.
        expect(retry.gapMs).toBeLessThan(40);
      }
    } finally {
      client.close();
      await Promise.all(servers.map((s) => s.close()));
    }
  }, 15_000);
});
