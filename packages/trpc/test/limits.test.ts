import { isCircuitOpenError, isQueueFullError, isRateLimitError } from '@breakwater/core';
import { describe, expect, it } from 'vitest';
import { bulkheadLink, hedgeLink, rateLimitLink, resilienceLink } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

describe('rateLimitLink, bulkheadLink, hedgeLink, resilienceLink', () => {
  it('rateLimitLink refuses beyond the bucket without sending', async () => {
    const server = await chaos();
    const client = clientOf([
      rateLimitLink({ capacity: 2, refillPerSecond: 0.001 }),
      batchLink(server.url),
    ]);
    await client.echo.query('1');
    await client.echo.query('2');
    const error = await errorOf(client.echo.query('3'));
    expect(isRateLimitError((error as Error).cause)).toBe(true);
    expect(server.stats().requests).toBe(2);
  });

  it('bulkheadLink runs at most `limit` calls and refuses when the queue is full', async () => {
    const server = await chaos();
    const client = clientOf([bulkheadLink({ limit: 1, maxQueue: 1 }), batchLink(server.url)]);
    const first = client.slow.query({ ms: 100 });
    const second = client.slow.query({ ms: 10 });
    const third = errorOf(client.echo.query('x'));
    expect(isQueueFullError(((await third) as Error).cause)).toBe(true);
    await Promise.all([first, second]);
    // Queued, so the two calls went in separate requests, one after the other.
    expect(server.stats().batchSizes).toEqual([1, 1]);
    expect(server.stats().procedures.echo).toBeUndefined();
  });

  it('hedgeLink sends a second request for a slow query and the first answer wins', async () => {
    // The first request hangs; the hedge, sent after 150 ms, is answered.
    const server = await chaos({ faults: { hangRate: 1 } });
    const client = clientOf([hedgeLink({ delayMs: 150 }), batchLink(server.url)]);
    const pending = client.echo.query('h');
    while (server.stats().requests === 0) await new Promise((r) => setTimeout(r, 2));
    server.setFaults({});
    await expect(pending).resolves.toMatchObject({ value: 'h' });
    expect(server.stats().procedures.echo).toBe(2);
    expect(server.stats().faults.hang).toBe(1);
  });

  it('hedgeLink never hedges mutations by default', async () => {
    const server = await chaos({ faults: { latency: { kind: 'fixed', ms: 120 } } });
    const client = clientOf([hedgeLink({ delayMs: 10 }), batchLink(server.url)]);
    await client.counter.increment.mutate({ by: 1 });
    expect(server.stats().procedures['counter.increment']).toBe(1);
  });

  it('resilienceLink: the circuit counts each call once, after its retries, and then stops traffic', async () => {
    const server = await chaos({ faults: { errorRate: 1 } });
    const client = clientOf([
      resilienceLink({
        retry: { attempts: 3, backoff: { baseDelayMs: 1 } },
        circuit: { failureSpanMs: 0, failureThreshold: 2, openDurationMs: 60_000 },
        attemptTimeoutMs: 1000,
      }),
      batchLink(server.url),
    ]);
    await errorOf(client.echo.query('a'));
    expect(server.stats().requests).toBe(3);
    await errorOf(client.echo.query('b'));
    expect(server.stats().requests).toBe(6);
    // Two failed calls opened the circuit: the third is refused without a request.
    const third = await errorOf(client.echo.query('c'));
    expect(server.stats().requests).toBe(6);
    expect(isCircuitOpenError((third as Error).cause)).toBe(true);
  });
});

describe('a call that fails, times out or is aborted leaves nothing behind', () => {
  it('gives back its bulkhead slot every time', async () => {
    const server = await chaos();
    const client = clientOf([
      resilienceLink({ concurrency: { limit: 1 }, retry: false }),
      batchLink(server.url),
    ]);
    await errorOf(client.fail.query({ code: 'INTERNAL_SERVER_ERROR' }));
    await errorOf(client.slow.query({ ms: 300 }, { context: { timeoutMs: 50 } }));
    const ac = new AbortController();
    const aborted = errorOf(client.slow.query({ ms: 300 }, { signal: ac.signal }));
    ac.abort();
    await aborted;
    // One slot: each of these would be refused with QueueFullError had a slot leaked.
    await expect(client.echo.query('a')).resolves.toMatchObject({ value: 'a' });
    await expect(client.echo.query('b')).resolves.toMatchObject({ value: 'b' });
  });
});
