import { percentile, runOpenLoop, startGrpcCapacityServer } from '@breakwater/chaos';
import { isConcurrencyLimitError } from '@breakwater/core';
import { ClientError, Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { resilienceMiddleware } from '../src/index.js';
import { echoClient, onCleanup } from './helpers.js';

const OFF = {
  timeoutMs: false,
  attemptTimeoutMs: false,
  retry: false,
  budget: false,
  circuit: false,
} as const;

async function capacityServer(workers: number, serviceMs: number) {
  const server = await startGrpcCapacityServer({ workers, serviceMs });
  onCleanup(() => server.close());
  return server;
}

function adaptiveClient(address: string, adaptive: object = {}) {
  return echoClient(address, resilienceMiddleware({ ...OFF, concurrency: { adaptive } }));
}

const p99 = (ms: number[]) =>
  percentile(
    ms.slice().sort((a, b) => a - b),
    99,
  ) as number;

describe('resilienceMiddleware concurrency.adaptive against a real server', () => {
  it('at 3× capacity keeps admitted calls within 2× the unloaded p99 and refuses the excess as RESOURCE_EXHAUSTED', async () => {
    // 4 workers × 50 ms: 80 calls a second.
    const server = await capacityServer(4, 50);
    const client = adaptiveClient(server.address);
    const unloaded: number[] = [];
    for (let i = 0; i < 40; i++) {
      const t = performance.now();
      await client.Unary({ message: 'x' });
      unloaded.push(performance.now() - t);
    }
    const before = server.received();
    const t0 = performance.now();
    const admitted: number[] = [];
    const refused: unknown[] = [];
    let offered = 0;
    await runOpenLoop({
      rate: 240,
      durationMs: 3_000,
      send: async () => {
        offered++;
        const startedAt = performance.now();
        try {
          await client.Unary({ message: 'x' });
          // The first second is the limit's convergence from its initial 20.
          if (startedAt - t0 >= 1_000) admitted.push(performance.now() - startedAt);
        } catch (error) {
          refused.push(error);
        }
      },
    });
    expect(refused.length).toBeGreaterThan(offered / 3);
    for (const error of refused) {
      expect(error).toBeInstanceOf(ClientError);
      expect((error as ClientError).code).toBe(Status.RESOURCE_EXHAUSTED);
      expect(isConcurrencyLimitError((error as Error).cause)).toBe(true);
    }
    // Refused calls never reached the server.
    expect(server.received() - before).toBe(offered - refused.length);
    expect(p99(admitted)).toBeLessThanOrEqual(2 * p99(unloaded));
  }, 15_000);

  it('takes criticality per call: sheddable calls are refused once half the limit is in flight', async () => {
    const server = await capacityServer(100, 300);
    const client = adaptiveClient(server.address, { initialLimit: 10 });
    const running = Array.from({ length: 5 }, () => client.Unary({ message: 'x' }));
    await expect.poll(() => server.received()).toBe(5);
    const error = await client
      .Unary({ message: 'x' }, { criticality: 'sheddable' })
      .catch((e: unknown) => e);
    expect((error as ClientError).code).toBe(Status.RESOURCE_EXHAUSTED);
    expect((error as Error).cause).toMatchObject({ criticality: 'sheddable', limit: 10 });
    await expect(client.Unary({ message: 'x' }, { criticality: 'critical' })).resolves.toEqual(
      expect.objectContaining({ message: 'x' }),
    );
    await Promise.all(running);
    expect(server.received()).toBe(6);
  }, 15_000);
});
