import { isDeadlineExceededError } from '@breakwater/core';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { deadlineLink } from '../src/index.js';
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

  it('rejects invalid durations at construction, naming the option', () => {
    expect(() => deadlineLink({ timeoutMs: 'soon' as never })).toThrow(
      /deadlineLink: timeoutMs must be a number/,
    );
    expect(() => deadlineLink({ timeoutMs: 0 })).toThrow(RangeError);
    expect(() => deadlineLink({} as never)).toThrow(/deadlineLink: timeoutMs is required/);
  });
});
