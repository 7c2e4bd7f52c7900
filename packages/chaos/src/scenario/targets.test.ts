import { credentials, makeClientConstructor, status } from '@grpc/grpc-js';
import { createTRPCClient, httpLink } from '@trpc/client';
import { service as healthService } from 'grpc-health-check';
import { describe, expect, it } from 'vitest';
import { spawnGrpcChaosServer } from '../grpc/child.js';
import { echoUnary } from '../grpc/echo-calls.js';
import { createEchoClient } from '../grpc/echo-client.js';
import type { ChaosTrpcRouter } from '../trpc/router.js';
import { createChaosTrpcServer } from '../trpc/server.js';
import { grpcChildTarget, grpcRulesFor, trpcPlanFor, trpcServerTarget } from './targets.js';

describe('fault mapping', () => {
  it('maps one fault description to gRPC rules and a tRPC plan', () => {
    const fault = { errorRate: 0.3, latency: { kind: 'fixed', ms: 5 } as const };
    expect(grpcRulesFor(fault)).toEqual([
      { latency: { kind: 'fixed', ms: 5 } },
      { rate: 0.3, status: status.UNAVAILABLE },
    ]);
    expect(trpcPlanFor(fault)).toEqual({
      errorRate: 0.3,
      error: { type: 'status' },
      latency: { kind: 'fixed', ms: 5 },
    });
    expect(grpcRulesFor(undefined)).toEqual([]);
    expect(trpcPlanFor({ hangRate: 0.1 })).toEqual({ hangRate: 0.1 });
  });
});

describe('trpcServerTarget', () => {
  it('sets faults, kills and restarts, and reports attempts per call id', async () => {
    const server = await createChaosTrpcServer({ name: 'a' });
    const target = trpcServerTarget(server);
    let callId = '';
    const client = createTRPCClient<ChaosTrpcRouter>({
      links: [httpLink({ url: server.url, headers: () => ({ 'x-call-id': callId }) })],
    });
    try {
      callId = 'c1';
      await expect(client.echo.query('x')).resolves.toMatchObject({ server: 'a' });
      await target.setFault({ errorRate: 1 });
      callId = 'c2';
      await expect(client.echo.query('x')).rejects.toThrow();
      await target.setFault(undefined);
      await target.kill();
      callId = 'c3';
      await expect(client.echo.query('x')).rejects.toThrow(/fetch failed/);
      await target.restart();
      callId = 'c4';
      await expect(client.echo.query('x')).resolves.toMatchObject({ server: 'a' });
      expect(await target.attempts()).toEqual([
        { callId: 'c1', replica: 'a', count: 1 },
        { callId: 'c2', replica: 'a', count: 1 },
        { callId: 'c4', replica: 'a', count: 1 },
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('grpcChildTarget', () => {
  it('notServing: health says NOT_SERVING while the fault holds, SERVING once healed, and after a restart', async () => {
    const server = await spawnGrpcChaosServer({ replica: 'h' });
    const target = grpcChildTarget(server, 'h');
    const Health = makeClientConstructor(healthService as never, 'grpc.health.v1.Health');
    const health = new Health(server.address, credentials.createInsecure()) as unknown as {
      Check(r: { service: string }, cb: (e: Error | null, v?: { status: string }) => void): void;
      close(): void;
    };
    const check = () =>
      new Promise<string | undefined>((resolve) =>
        health.Check({ service: '' }, (e, v) => resolve(e ? e.message : v?.status)),
      );
    try {
      expect(await check()).toBe('SERVING');
      await target.setFault({ errorRate: 1, notServing: true });
      expect(await check()).toBe('NOT_SERVING');
      await target.kill();
      await target.restart();
      // The new process starts SERVING: the fault's health is re-applied.
      await expect.poll(check, { timeout: 5_000 }).toBe('NOT_SERVING');
      await target.setFault({ errorRate: 1 });
      expect(await check()).toBe('SERVING');
    } finally {
      health.close();
      await server.close();
    }
  });

  it('keeps the attempts a killed child saw and re-applies the fault after a restart', async () => {
    const server = await spawnGrpcChaosServer({ replica: 'g' });
    const target = grpcChildTarget(server, 'g');
    const client = createEchoClient(server.address);
    try {
      expect((await echoUnary(client, {}, { callId: 'k1' })).ok).toBe(true);
      await target.setFault({ errorRate: 1 });
      await target.kill();
      await target.restart();
      // A fresh channel skips the old one's reconnect backoff.
      const fresh = createEchoClient(server.address);
      const again = await echoUnary(fresh, {}, { callId: 'k2' });
      fresh.close();
      expect(again.error?.code).toBe(status.UNAVAILABLE);
      expect(again.error?.details).toMatch(/chaos/);
      expect(await target.attempts()).toEqual([
        { callId: 'k1', replica: 'g' },
        { callId: 'k2', replica: 'g' },
      ]);
    } finally {
      client.close();
      await server.close();
    }
  });

  it('capacity: the child saturates while the fault holds and is unlimited once cleared', async () => {
    const server = await spawnGrpcChaosServer({ replica: 'c' });
    const target = grpcChildTarget(server, 'c');
    const client = createEchoClient(server.address);
    try {
      await target.setFault({ capacity: { workers: 1, serviceMs: 50, queue: 0 } });
      const both = await Promise.all([echoUnary(client, {}), echoUnary(client, {})]);
      expect(both.map((o) => o.error?.code)).toEqual([undefined, status.RESOURCE_EXHAUSTED]);
      expect(await server.capacityStats()).toMatchObject({ served: 1, refused: 1 });
      await target.setFault(undefined);
      const after = await Promise.all([echoUnary(client, {}), echoUnary(client, {})]);
      expect(after.every((o) => o.ok)).toBe(true);
      expect(() => trpcPlanFor({ capacity: { workers: 1, serviceMs: 1 } })).toThrow(
        /fault\.capacity is for gRPC chaos servers only/,
      );
    } finally {
      client.close();
      await server.close();
    }
  });
});
