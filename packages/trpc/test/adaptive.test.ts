import { isConcurrencyLimitError } from '@breakwater/core';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { classifyTRPCError, resilienceLink } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

// Only the adaptive limit: a retry budget without retries does nothing.
const OFF = { timeoutMs: false, attemptTimeoutMs: false, retry: false, circuit: false } as const;

describe('resilienceLink concurrency.adaptive against a real server', () => {
  it('refuses over the limit with TOO_MANY_REQUESTS, never sent, lowest criticality first', async () => {
    const server = await chaos();
    const client = clientOf([
      resilienceLink({ ...OFF, concurrency: { adaptive: { initialLimit: 10 } } }),
      batchLink(server.url),
    ]);
    // Five calls of `slow` in flight: half its limit (one per procedure), all a sheddable call may use.
    const running = Array.from({ length: 5 }, () => client.slow.query({ ms: 300 }));
    await expect.poll(() => server.stats().procedures['slow']).toBe(5);

    const error = await errorOf(
      client.slow.query({ ms: 1 }, { context: { criticality: 'sheddable' } }),
    );
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<never>).data).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      httpStatus: 429,
    });
    const cause = (error as Error).cause;
    expect(isConcurrencyLimitError(cause)).toBe(true);
    expect(cause).toMatchObject({ criticality: 'sheddable', limit: 10, inFlight: 5 });
    // Never sent, so another provider may take it at once.
    expect(classifyTRPCError(error)).toMatchObject({
      retry: false,
      failover: true,
      neverSent: true,
    });
    expect(server.stats().procedures['slow']).toBe(5);

    await client.slow.query({ ms: 1 }, { context: { criticality: 'critical' } });
    expect(server.stats().procedures['slow']).toBe(6);
    await Promise.all(running);
    // Every slot came back: a sheddable call is admitted again.
    await client.slow.query({ ms: 1 }, { context: { criticality: 'sheddable' } });
    expect(server.stats().procedures['slow']).toBe(7);
  });

  it('an invalid context.criticality is a TypeError naming it', async () => {
    const server = await chaos();
    const client = clientOf([
      resilienceLink({ ...OFF, concurrency: { adaptive: true } }),
      batchLink(server.url),
    ]);
    const error = await errorOf(client.echo.query('x', { context: { criticality: 'low' } }));
    expect(String((error as Error).message ?? error)).toContain(
      'context.criticality must be one of',
    );
    expect(server.stats().calls).toBe(0);
  });
});
