import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { spawnGrpcChaosServer } from './child.js';
import { echoUnary } from './echo-calls.js';
import { createEchoClient } from './echo-client.js';

describe('spawnGrpcChaosServer', () => {
  it('runs in a child process that can be killed and restarted on the same port', async () => {
    const server = await spawnGrpcChaosServer({ replica: 'child-a' });
    const client = createEchoClient(server.address);
    try {
      const first = await echoUnary(client, { message: 'hi' }, { callId: 'c' });
      expect(first.value).toMatchObject({ message: 'hi', replica: 'child-a', attempt: 1 });

      await server.setFaults([{ firstAttempts: 1, status: status.UNAVAILABLE }]);
      expect((await echoUnary(client, {}, { callId: 'd' })).error?.code).toBe(status.UNAVAILABLE);
      const stats = await server.stats();
      expect(stats.total).toBe(2);
      expect(stats.observed.map((o) => o.callId)).toEqual(['c', 'd']);

      const { port, pid } = server;
      await server.kill();
      expect(server.pid).toBeUndefined();
      const down = await echoUnary(client, {}, { callOptions: { deadline: Date.now() + 2_000 } });
      expect(down.error?.code).toBe(status.UNAVAILABLE);

      await server.restart();
      expect(server.port).toBe(port);
      expect(server.pid).not.toBe(pid);
      await expect
        .poll(async () => (await echoUnary(client, { message: 'back' })).value?.message, {
          timeout: 5_000,
        })
        .toBe('back');
    } finally {
      client.close();
      await server.close();
    }
  }, 90_000);

  it('takes a capacity, changes it at runtime and reports what it served', async () => {
    const server = await spawnGrpcChaosServer({
      capacity: { workers: 1, serviceMs: 50, queue: 0 },
    });
    const client = createEchoClient(server.address);
    try {
      const both = await Promise.all([echoUnary(client, {}), echoUnary(client, {})]);
      expect(both.map((o) => o.error?.code)).toEqual([undefined, status.RESOURCE_EXHAUSTED]);
      expect(await server.capacityStats()).toMatchObject({ served: 1, refused: 1 });
      await server.setCapacity({ workers: 2, serviceMs: 50, queue: 0 });
      const again = await Promise.all([echoUnary(client, {}), echoUnary(client, {})]);
      expect(again.every((o) => o.ok)).toBe(true);
      await server.reset();
      expect(await server.capacityStats()).toMatchObject({ served: 0, refused: 0 });
      await server.setCapacity(undefined);
      expect((await echoUnary(client, {})).ok).toBe(true);
    } finally {
      client.close();
      await server.close();
    }
  });

  it('keeps at most maxObservations attempts and counts every one', async () => {
    const server = await spawnGrpcChaosServer({ replica: 'child-b', maxObservations: 1 });
    const client = createEchoClient(server.address);
    try {
      for (const callId of ['a', 'b', 'c']) {
        expect((await echoUnary(client, {}, { callId })).value?.replica).toBe('child-b');
      }
      const stats = await server.stats();
      expect(stats.total).toBe(3);
      expect(stats.observed.map((o) => o.callId)).toEqual(['a']);
    } finally {
      client.close();
      await server.close();
    }
  });
});
