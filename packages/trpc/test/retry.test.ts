import type { ChaosTrpcRouter } from '@breakwater/chaos';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { retryLink } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

const fast = { baseDelayMs: 5, strategy: 'exponential' as const, maxDelayMs: 20 };

describe('retryLink against a chaos tRPC server', () => {
  it('retries a query failing with 503 until attempt k, and the server counted k', async () => {
    const server = await chaos({ faults: { failFirst: 3 } });
    const retries: number[] = [];
    const client = clientOf([
      retryLink({ attempts: 4, backoff: fast, onRetry: (e) => retries.push(e.attempt) }),
      batchLink(server.url),
    ]);
    const result = await client.echo.query('k', { context: { callId: 'q1' } });
    expect(result).toEqual({ value: 'k', server: 'trpc' });
    expect(server.stats().attempts.q1).toBe(4);
    expect(server.stats().faults.error).toBe(3);
    expect(retries).toEqual([1, 2, 3]);
  });

  it('rethrows the last error unchanged once attempts run out', async () => {
    const server = await chaos({ faults: { failFirst: 10 } });
    const client = clientOf([retryLink({ attempts: 3, backoff: fast }), batchLink(server.url)]);
    const error = await errorOf(client.echo.query('x', { context: { callId: 'q2' } }));
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('SERVICE_UNAVAILABLE');
    expect(server.stats().attempts.q2).toBe(3);
  });

  it('does not retry BAD_REQUEST or INTERNAL_SERVER_ERROR, but retries SERVICE_UNAVAILABLE', async () => {
    const server = await chaos();
    const client = clientOf([retryLink({ attempts: 3, backoff: fast }), batchLink(server.url)]);
    const bad = await errorOf(client.fail.query({ code: 'BAD_REQUEST' }));
    expect((bad as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('BAD_REQUEST');
    expect(server.stats().procedures.fail).toBe(1);
    // A procedure's own failure is not repeated (core's rule, as gRPC's INTERNAL).
    const own = await errorOf(client.fail.query({ code: 'INTERNAL_SERVER_ERROR' }));
    expect((own as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(server.stats().procedures.fail).toBe(1 + 1);
    await errorOf(client.fail.query({ code: 'SERVICE_UNAVAILABLE' }));
    expect(server.stats().procedures.fail).toBe(1 + 1 + 3);
  });

  it('does not retry a mutation without opt-in; does with context.idempotent or idempotent: true', async () => {
    const server = await chaos({ faults: { failFirst: 1 } });
    const client = clientOf([retryLink({ backoff: fast }), batchLink(server.url)]);
    await errorOf(client.counter.increment.mutate({ by: 1 }, { context: { callId: 'm1' } }));
    expect(server.stats().attempts.m1).toBe(1);
    const n = await client.counter.increment.mutate(
      { by: 1 },
      { context: { callId: 'm2', idempotent: true } },
    );
    expect(n).toBe(1);
    expect(server.stats().attempts.m2).toBe(2);

    const optedIn = clientOf([
      retryLink({ backoff: fast, idempotent: true }),
      batchLink(server.url),
    ]);
    await optedIn.counter.increment.mutate({ by: 1 }, { context: { callId: 'm3' } });
    expect(server.stats().attempts.m3).toBe(2);
    expect(await client.counter.get.query()).toBe(2);
  });

  it('honours Retry-After: 1 (waits at least 1 s)', async () => {
    const server = await chaos({
      faults: { failFirst: 1, error: { type: 'status', status: 503, retryAfterSeconds: 1 } },
    });
    const client = clientOf([retryLink({ backoff: fast }), batchLink(server.url)]);
    const started = performance.now();
    await client.echo.query('r', { context: { callId: 'ra' } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(995);
    expect(server.stats().attempts.ra).toBe(2);
  });

  it('stops at a Retry-After that is neither digits nor an HTTP-date in the future; waits for one that is', async () => {
    const garbage = [
      'later 5',
      '1.5',
      '5 s',
      'Sun, 06 Nov 1994 08:49:37 GMT',
      'Mon, 31 Feb 2100 00:00:00 GMT',
    ];
    const server = await chaos({ faults: { failFirst: 3 } });
    for (const [i, value] of garbage.entries()) {
      server.setFaults({
        failFirst: 3,
        error: { type: 'status', status: 503, retryAfterSeconds: value },
      });
      const client = clientOf([retryLink({ attempts: 3, backoff: fast }), batchLink(server.url)]);
      const error = await errorOf(client.echo.query('g', { context: { callId: `g${i}` } }));
      expect((error as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('SERVICE_UNAVAILABLE');
      expect({ value, attempts: server.stats().attempts[`g${i}`] }).toEqual({ value, attempts: 1 });
    }

    // Dates have whole seconds: two seconds ahead is a wait of more than one.
    const soon = new Date(Date.now() + 2_000).toUTCString();
    server.setFaults({
      failFirst: 1,
      error: { type: 'status', status: 503, retryAfterSeconds: soon },
    });
    const client = clientOf([retryLink({ attempts: 3, backoff: fast }), batchLink(server.url)]);
    const started = performance.now();
    await client.echo.query('d', { context: { callId: 'date' } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(995);
    expect(server.stats().attempts.date).toBe(2);
  });

  it('rejects at once when aborted during backoff, and sends nothing more', async () => {
    const server = await chaos({ faults: { failFirst: 100 } });
    const client = clientOf([
      retryLink({ attempts: 5, backoff: { baseDelayMs: 5000 } }),
      batchLink(server.url),
    ]);
    const ac = new AbortController();
    const pending = errorOf(
      client.echo.query('a', { signal: ac.signal, context: { callId: 'ab' } }),
    );
    while (server.stats().requests === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 30));
    const abortedAt = performance.now();
    ac.abort();
    const error = await pending;
    expect(performance.now() - abortedAt).toBeLessThan(500);
    expect(error).toBeInstanceOf(TRPCClientError);
    await new Promise((r) => setTimeout(r, 100));
    expect(server.stats().requests).toBe(1);
    // The caller's abort reason (a DOMException AbortError) is the cause.
    expect(((error as Error).cause as Error).name).toBe('AbortError');
  });

  it('retries a proxy HTML 502 only when the status survived (status-preserving fetch)', async () => {
    const server = await chaos({ faults: { failFirst: 1, error: { type: 'html' } } });
    const plain = clientOf([
      retryLink({ backoff: fast }),
      batchLink(server.url, { preserveStatus: false }),
    ]);
    const lost = await errorOf(plain.echo.query('h', { context: { callId: 'h1' } }));
    expect((lost as TRPCClientError<ChaosTrpcRouter>).meta).toBeUndefined();
    expect(server.stats().attempts.h1).toBe(1);

    const preserved = clientOf([retryLink({ backoff: fast }), batchLink(server.url)]);
    await expect(preserved.echo.query('h', { context: { callId: 'h2' } })).resolves.toMatchObject({
      value: 'h',
    });
    expect(server.stats().attempts.h2).toBe(2);
  });

  it('retries a refused connection once the server is back', async () => {
    const server = await chaos();
    await server.stop();
    const client = clientOf([
      retryLink({ attempts: 10, backoff: { baseDelayMs: 20, strategy: 'linear', maxDelayMs: 20 } }),
      batchLink(server.url),
    ]);
    const pending = client.echo.query('c', { context: { callId: 'cr' } });
    await new Promise((r) => setTimeout(r, 50));
    await server.start();
    await expect(pending).resolves.toMatchObject({ value: 'c' });
    expect(server.stats().attempts.cr).toBe(1);
  });
});
