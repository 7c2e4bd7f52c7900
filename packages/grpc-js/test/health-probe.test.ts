import { startGrpcChaosServer } from '@breakwater/chaos';
import { runProbe } from '@breakwater/core';
import { describe, expect, it } from 'vitest';
import { createGrpcHealthProbe } from '../src/index.js';

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
});
