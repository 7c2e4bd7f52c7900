import { fixedRandom } from '@breakwater/core/time';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChaosTrpcRouter } from '../trpc/router.js';
import { type ChaosTrpcServer, createChaosTrpcServer } from '../trpc/server.js';
import { chaosLink } from './trpc-link.js';

const servers: ChaosTrpcServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(options: Parameters<typeof chaosLink>[0]) {
  const server = await createChaosTrpcServer({ name: 's' });
  servers.push(server);
  const client = createTRPCClient<ChaosTrpcRouter>({
    links: [chaosLink(options), httpLink({ url: server.url })],
  });
  return { server, client };
}

describe('chaosLink', () => {
  it('fails operations like a 503 without sending a request', async () => {
    const { server, client } = await setup({ errorRate: 1, random: fixedRandom(0) });
    const error = await client.echo.query('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<ChaosTrpcRouter>).data).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      httpStatus: 503,
      path: 'echo',
    });
    expect(server.stats().requests).toBe(0);
  });

  it('fails about errorRate of operations; the rest reach the server', async () => {
    const { server, client } = await setup({ errorRate: 0.3, seed: 9 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 300 }, (_, i) => client.echo.query(String(i))),
    );
    const failed = outcomes.filter((o) => o.status === 'rejected').length;
    expect(failed).toBeGreaterThan(55);
    expect(failed).toBeLessThan(125);
    expect(server.stats().requests).toBe(300 - failed);
  });

  it('uses a custom error, only on the listed paths', async () => {
    const { server, client } = await setup({
      errorRate: 1,
      methods: ['counter.get'],
      error: () => new Error('custom'),
    });
    await expect(client.counter.get.query()).rejects.toThrow('custom');
    await expect(client.echo.query('y')).resolves.toMatchObject({ value: 'y' });
    expect(server.stats().requests).toBe(1);
  });

  it('delays operations; an abort during the delay rejects at once with no request sent', async () => {
    const { server, client } = await setup({ latency: { kind: 'fixed', ms: 50 } });
    const started = performance.now();
    await expect(client.echo.query('late')).resolves.toMatchObject({ value: 'late' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);

    const slow = await setup({ latency: { kind: 'fixed', ms: 5_000 } });
    const abort = new AbortController();
    const pending = slow.client.echo.query('x', { signal: abort.signal });
    setTimeout(() => abort.abort(), 20);
    const t = performance.now();
    await expect(pending).rejects.toBeInstanceOf(TRPCClientError);
    expect(performance.now() - t).toBeLessThan(1_000);
    expect(slow.server.stats().requests).toBe(0);
    expect(server.stats().requests).toBe(1);
  });
});
