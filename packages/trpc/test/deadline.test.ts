import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeadlineExceededError } from '@breakwater/core';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { deadlineLink, resilienceLink, routingLink } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf, slowCallInBatch } from './helpers.js';

describe('deadlineLink inside httpBatchLink', () => {
  it('rejects the one slow call of a batch on time while the others resolve', async () => {
    const { values, error, slowSettledAt, server } = await slowCallInBatch(
      (url) => [deadlineLink({ timeoutMs: 5_000 }), batchLink(url)],
      { timeoutMs: 100 },
    );
    expect(values).toEqual(['a', 'b']);
    expect(slowSettledAt).toBeGreaterThanOrEqual(95);
    expect(slowSettledAt).toBeLessThan(400);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as Error).message).toMatch(/deadline.*timeout/i);
    expect(isDeadlineExceededError((error as Error).cause)).toBe(true);
    // One HTTP request carried all three calls.
    expect(server.stats().batchSizes).toEqual([3]);
  });

  it('applies timeoutMs, per-call context.timeoutMs, and leaves fast calls alone', async () => {
    const server = await chaos();
    const client = clientOf([deadlineLink({ timeoutMs: 150 }), batchLink(server.url)]);
    await client.echo.query('warm-up');
    await expect(client.slow.query({ ms: 10 })).resolves.toMatchObject({ sleptMs: 10 });
    const error = await errorOf(client.slow.query({ ms: 600 }));
    expect(isDeadlineExceededError((error as Error).cause)).toBe(true);
    await expect(
      client.slow.query({ ms: 250 }, { context: { timeoutMs: 2000 } }),
    ).resolves.toMatchObject({ sleptMs: 250 });
  });

  // Friction 8: per-call options are checked where they arrive untyped, in both links.
  it.each([
    ['resilienceLink', (url: string) => [resilienceLink({ retry: false }), batchLink(url)]],
    [
      'routingLink',
      (url: string) => [routingLink({ endpoints: [{ id: 'a', link: batchLink(url) }] })],
    ],
  ] as const)(
    '%s refuses a call whose context misspells one of its keys, before sending it',
    async (_, links) => {
      const server = await chaos();
      const client = clientOf(links(server.url));
      const error = await errorOf(client.slow.query({ ms: 600 }, { context: { timeoutMS: 100 } }));
      expect(error).toBeInstanceOf(TRPCClientError);
      expect((error as Error).message).toBe(
        'unknown option `context.timeoutMS` — did you mean `context.timeoutMs`?',
      );
      expect((error as Error).cause).toBeInstanceOf(TypeError);
      const typed = await errorOf(client.slow.query({ ms: 10 }, { context: { timeoutMs: '100' } }));
      expect((typed as Error).message).toBe('context.timeoutMs must be a number of ms, got "100"');
      // Nothing reached the server; another link's key (callId) is not ours to judge.
      expect(server.stats().procedures.slow).toBeUndefined();
      await expect(
        client.slow.query({ ms: 10 }, { context: { callId: 'c', timeoutMs: 2000 } }),
      ).resolves.toMatchObject({ sleptMs: 10 });
    },
  );

  it('rejects at once when the caller aborts one call of a batch', async () => {
    const server = await chaos();
    const client = clientOf([deadlineLink({ timeoutMs: 5000 }), batchLink(server.url)]);
    const ac = new AbortController();
    const started = performance.now();
    const slow = errorOf(client.slow.query({ ms: 800 }, { signal: ac.signal }));
    const other = client.slow.query({ ms: 150 });
    setTimeout(() => ac.abort(), 20);
    await slow;
    expect(performance.now() - started).toBeLessThan(400);
    await expect(other).resolves.toMatchObject({ sleptMs: 150 });
  });

  it('arms no host timer per call: 50 pending calls with a call and an attempt deadline hold a few at most', async () => {
    // A server that never answers keeps every call pending on its deadlines.
    const server = createServer(() => {});
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = clientOf([
      resilienceLink({
        timeoutMs: 20_000,
        attemptTimeoutMs: 10_000,
        retry: false,
        circuit: false,
        budget: false,
        concurrency: false,
      }),
      batchLink(url),
    ]);
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const ac = new AbortController();
    const calls = Array.from({ length: 50 }, (_, i) =>
      errorOf(client.echo.query(`x${i}`, { signal: ac.signal })),
    );
    await once(server, 'request');
    // A host timer per deadline would be 100 here; the calls share the core's timer wheel.
    expect(timers() - before).toBeLessThan(5);
    ac.abort();
    expect((await Promise.all(calls)).every((e) => e instanceof TRPCClientError)).toBe(true);
    server.closeAllConnections();
    server.close();
  });

  it('rejects invalid durations at construction, naming the option', () => {
    expect(() => deadlineLink({ timeoutMs: 'soon' as never })).toThrow(
      /deadlineLink: timeoutMs must be a number/,
    );
    expect(() => deadlineLink({ timeoutMs: 0 })).toThrow(RangeError);
    expect(() => deadlineLink({} as never)).toThrow(/deadlineLink: timeoutMs is required/);
  });
});
