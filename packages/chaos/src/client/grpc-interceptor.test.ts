import { fixedRandom } from '@breakwater/core/time';
import { type ServiceError, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { callMetadata, echoUnary } from '../grpc/echo-calls.js';
import { createEchoClient, type EchoClient } from '../grpc/echo-client.js';
import { type GrpcChaosServer, startGrpcChaosServer } from '../grpc/server.js';
import { chaosInterceptor } from './grpc-interceptor.js';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

async function setup(options: Parameters<typeof chaosInterceptor>[0]) {
  const server: GrpcChaosServer = await startGrpcChaosServer();
  open.push(server);
  const client: EchoClient = createEchoClient(server.address, {
    interceptors: [chaosInterceptor(options)],
  });
  open.push(client);
  return { server, client };
}

describe('chaosInterceptor', () => {
  it('fails calls with the chosen status before they reach the server', async () => {
    const { server, client } = await setup({
      errorRate: 1,
      status: status.RESOURCE_EXHAUSTED,
      random: fixedRandom(0),
    });
    const out = await echoUnary(client, { message: 'x' }, { callId: 'c' });
    expect(out.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(out.error?.details).toBe('chaos: injected RESOURCE_EXHAUSTED');
    expect(server.total()).toBe(0);
  });

  it('fails about errorRate of calls; the rest reach the server', async () => {
    const { server, client } = await setup({ errorRate: 0.3, seed: 11 });
    const outcomes = await Promise.all(
      Array.from({ length: 300 }, (_, i) => echoUnary(client, { message: String(i) })),
    );
    const failed = outcomes.filter((o) => !o.ok).length;
    // Binomial(300, 0.3): sd ≈ 7.9.
    expect(failed).toBeGreaterThan(55);
    expect(failed).toBeLessThan(125);
    expect(server.total()).toBe(300 - failed);
    expect(outcomes.filter((o) => o.ok).every((o) => o.value?.message !== undefined)).toBe(true);
  });

  it('delays calls by the latency, then passes them through with their message', async () => {
    const { server, client } = await setup({ latency: { kind: 'fixed', ms: 60 } });
    const started = performance.now();
    const out = await echoUnary(client, { message: 'late' }, { callId: 'd' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect(out.value?.message).toBe('late');
    expect(server.attempts('d')).toBe(1);
  });

  it('a call cancelled during the injected delay ends CANCELLED and never reaches the server', async () => {
    const { server, client } = await setup({ latency: { kind: 'fixed', ms: 5_000 } });
    const result = new Promise<ServiceError | null>((resolve) => {
      const call = client.Unary({ message: 'x' }, callMetadata('e'), {}, (e) => resolve(e));
      setTimeout(() => call.cancel(), 20);
    });
    const started = performance.now();
    const error = await result;
    expect(error?.code).toBe(status.CANCELLED);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.total()).toBe(0);
  });

  it('leaves other methods alone and validates status', async () => {
    const { server, client } = await setup({ errorRate: 1, methods: ['UnaryUnsafe'] });
    expect((await echoUnary(client, {})).ok).toBe(true);
    expect((await echoUnary(client, {}, { method: 'UnaryUnsafe' })).error?.code).toBe(
      status.UNAVAILABLE,
    );
    expect(server.total()).toBe(1);
    expect(() => chaosInterceptor({ status: 99 as status })).toThrow(RangeError);
  });
});
