import { startGrpcChaosServer } from '@breakwater/chaos';
import { runProbe } from '@breakwater/core/internal';
import { describe, expect, it } from 'vitest';
import { createGrpcHealthProbe } from '../src/health.js';

describe('grpcHealthProbe', () => {
  it('SERVING is healthy; NOT_SERVING and a dead server are not', async () => {
    const server = await startGrpcChaosServer();
    const probe = createGrpcHealthProbe();
    const ctx = { provider: 'a', signal: new AbortController().signal };
    try {
      expect(await runProbe(probe, server.address, ctx)).toEqual({
        healthy: true,
        reason: 'SERVING',
      });
      server.setHealth('NOT_SERVING');
      expect(await runProbe(probe, server.address, ctx)).toEqual({
        healthy: false,
        reason: 'NOT_SERVING',
      });
      await server.stop();
      expect((await runProbe(probe, server.address, ctx)).healthy).toBe(false);
    } finally {
      probe.close();
      await server.close();
    }
  });

  it('sees a replica healthy soon after it comes back from an outage of seconds', async () => {
    const server = await startGrpcChaosServer();
    const probe = createGrpcHealthProbe();
    const ctx = { provider: 'a', signal: new AbortController().signal };
    const wait = sleepMs;
    try {
      expect((await runProbe(probe, server.address, ctx)).healthy).toBe(true);
      await server.stop();
      // Probe through ~6 s of outage: grpc-js's default reconnect backoff (1 s, x1.6)
      // would put the next connection attempt ~9 s after the kill.
      for (let i = 0; i < 12; i++) {
        expect((await runProbe(probe, server.address, ctx)).healthy).toBe(false);
        await wait(500);
      }
      await server.restart();
      const back = performance.now();
      let healthy = false;
      while (!healthy && performance.now() - back < 5000) {
        healthy = (await runProbe(probe, server.address, ctx)).healthy;
        if (!healthy) await wait(100);
      }
      expect(healthy).toBe(true);
      expect(performance.now() - back).toBeLessThan(1500);
    } finally {
      probe.close();
      await server.close();
    }
  }, 20_000);
});

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
