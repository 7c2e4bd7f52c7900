import {
  createEchoClient,
  type EchoClient,
  echoUnary,
  percentile,
  runOpenLoop,
  startGrpcCapacityServer,
} from '@breakwater/chaos';
import { isConcurrencyLimitError } from '@breakwater/core';
import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { breakwaterCause, disableGrpcRetries, type ResilienceCallOptions } from '../src/index.js';
import { only } from './helpers.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function capacityServer(workers: number, serviceMs: number) {
  const server = await startGrpcCapacityServer({ workers, serviceMs });
  cleanup.push(() => server.close());
  return server;
}

function p99(latencies: number[]): number {
  return percentile(
    latencies.slice().sort((a, b) => a - b),
    99,
  ) as number;
}

interface Outcome {
  ok: boolean;
  ms: number;
  code: number | undefined;
  cause: Error | undefined;
  startedAt: number;
}

/** Offers `perSecond` calls for `durationMs`, open loop, as a traffic source does. */
async function offer(
  client: EchoClient,
  perSecond: number,
  durationMs: number,
  callOptions: (index: number) => ResilienceCallOptions = () => ({}),
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const t0 = performance.now();
  await runOpenLoop({
    rate: perSecond,
    durationMs,
    send: async ({ index }) => {
      const startedAt = performance.now();
      const o = await echoUnary(client, { message: 'x' }, { callOptions: callOptions(index) });
      outcomes[index] = {
        ok: o.ok,
        ms: performance.now() - startedAt,
        code: o.error?.code,
        cause: breakwaterCause(o.error),
        startedAt: startedAt - t0,
      };
    },
  });
  return outcomes;
}

async function unloadedP99(client: EchoClient): Promise<number> {
  const latencies: number[] = [];
  for (let i = 0; i < 40; i++) {
    const t = performance.now();
    const o = await echoUnary(client, { message: 'x' });
    expect(o.ok).toBe(true);
    latencies.push(performance.now() - t);
  }
  return p99(latencies);
}

// 4 workers × 50 ms: the server answers 80 calls a second (long enough that a busy runner's
// event-loop stalls of a few ms are not most of what the limit reads).
const WORKERS = 4;
const SERVICE_MS = 50;
const CAPACITY = (WORKERS * 1_000) / SERVICE_MS;

async function adaptiveClient(address: string, options: object = {}): Promise<EchoClient> {
  const client = createEchoClient(address, {
    ...disableGrpcRetries,
    interceptors: [only({ concurrency: { adaptive: options } })],
  });
  cleanup.push(() => client.close());
  return client;
}

describe('concurrency.adaptive against a real server of fixed capacity', () => {
  it('at 3× capacity keeps admitted calls within 2× the unloaded p99 and refuses the excess as RESOURCE_EXHAUSTED', async () => {
    const server = await capacityServer(WORKERS, SERVICE_MS);
    const client = await adaptiveClient(server.address);
    const unloaded = await unloadedP99(client);
    const before = server.received();

    const outcomes = await offer(client, 3 * CAPACITY, 3_000);
    // The first second is the limit's convergence from its initial 20.
    const settled = outcomes.filter((o) => o.startedAt >= 1_000);
    const admitted = settled.filter((o) => o.ok);
    const refused = outcomes.filter((o) => !o.ok);
    expect(refused.length).toBeGreaterThan(outcomes.length / 3);
    for (const o of refused) {
      expect(o.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(isConcurrencyLimitError(o.cause)).toBe(true);
    }
    // Refused calls never reached the server; every admitted one did.
    expect(server.received() - before).toBe(outcomes.length - refused.length);
    expect(p99(admitted.map((o) => o.ms))).toBeLessThanOrEqual(2 * unloaded);
    // Goodput: the server stays busy (admitted calls per second near its capacity).
    expect(admitted.length / 2).toBeGreaterThan(0.75 * CAPACITY);
  }, 15_000);

  it('at 0.5× capacity refuses nothing', async () => {
    const server = await capacityServer(WORKERS, SERVICE_MS);
    const client = await adaptiveClient(server.address);
    const outcomes = await offer(client, 0.5 * CAPACITY, 2_000);
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(server.received()).toBe(outcomes.length);
  }, 15_000);

  it('sheds sheddable calls first: at 1.5× capacity sheddable calls absorb the refusals', async () => {
    const server = await capacityServer(WORKERS, SERVICE_MS);
    const client = await adaptiveClient(server.address);
    await unloadedP99(client);
    const outcomes = await offer(client, 1.5 * CAPACITY, 2_500, (i) => ({
      criticality: i % 2 === 0 ? 'critical' : 'sheddable',
    }));
    // After the first second, the limit's convergence from its initial 20.
    const critical = outcomes.filter((o, i) => i % 2 === 0 && o.startedAt >= 1_000);
    const sheddable = outcomes.filter((o, i) => i % 2 === 1 && o.startedAt >= 1_000);
    const success = (list: Outcome[]) => list.filter((o) => o.ok).length / list.length;
    // Critical calls alone are 0.75× capacity: they fit. (Measured: all of them succeed; a
    // shared 2-core runner's event-loop stalls read as latency and may cost a few.)
    expect(success(critical)).toBeGreaterThanOrEqual(0.95);
    expect(success(sheddable)).toBeLessThan(0.5);
    const refused = sheddable.find((o) => !o.ok);
    expect(isConcurrencyLimitError(refused?.cause)).toBe(true);
    expect((refused?.cause as { criticality?: string } | undefined)?.criticality).toBe('sheddable');
  }, 15_000);
});
