import { RateLimitError } from '@breakwater/core';
import { createManualClock, systemClock, systemSleep } from '@breakwater/core/time';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisKeyedLimiter,
  createRedisRetryBudget,
  createRedisTokenBucket,
} from '../src/index.js';
import { connectClient, type RedisServer, startRedisServer } from './redis-server.js';

// Round trips may take 250 ms before decisions fall back (not the default 5): the
// machine is shared, and these tests are about leases, not fallbacks.
const timeoutMs = 250;
let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  client = await connectClient(server.port);
});
afterAll(async () => {
  client?.disconnect();
  await server?.stop();
});

/** Decides `n` times, a Redis round trip apart, and returns how many were admitted. */
async function decide(n: number, tryAcquire: () => { ok: boolean }): Promise<number> {
  let admitted = 0;
  for (let i = 0; i < n; i++) {
    if (tryAcquire().ok) admitted++;
    await client.ping();
    await systemSleep(1);
  }
  return admitted;
}

describe('leases', () => {
  it('a grant that empties the shared bucket waits for the next token instead of asking again', async () => {
    // Two tokens, then one every 10 s: a slow key of a keyed limiter.
    const bucket = createRedisTokenBucket({
      client,
      timeoutMs,
      name: 'drained',
      capacity: 2,
      refillPerSecond: 0.1,
      fallback: 'closed',
    });
    // The first lease is taken at construction.
    for (let i = 0; i < 100 && bucket.linkStats().mode !== 'shared'; i++) await client.ping();
    expect(await decide(20, () => bucket.tryAcquire())).toBe(2);
    // The first lease (1 token, 1 left) and the one that emptied the bucket: two
    // round trips. Asking again at once after the second (the old way) made a third.
    expect(bucket.linkStats().calls).toBe(2);
  });

  it('so a key limited to 1 per second costs one round trip per token', async () => {
    const limiter = createRedisKeyedLimiter({
      client,
      timeoutMs,
      name: 'per-key',
      capacity: 1,
      refillPerSecond: 1,
      fallback: 'closed',
    });
    let admitted = 0;
    const started = systemClock();
    while (systemClock() - started < 2500)
      admitted += await decide(1, () => limiter.tryAcquire('k'));
    // Tokens at 0 (the full bucket), ~1 s and ~2 s; the first decision waits for its first lease.
    expect(admitted).toBeGreaterThanOrEqual(2);
    expect(admitted).toBeLessThanOrEqual(3);
    expect(limiter.linkStats().calls).toBeLessThanOrEqual(admitted + 1);
  });

  it('a key this process calls less often than leaseTtlMs keeps its token until its next call', async () => {
    // 10,000 keys at 0.1 token/s each, 3,000 calls/s per process: each process
    // calls a key every 3.3 s and gets its token for that next call. Expired
    // after leaseTtlMs (1 s), every such token was lost: the fleet admitted ~0.
    const clock = createManualClock(1000);
    const limiter = createRedisKeyedLimiter({
      client,
      timeoutMs,
      name: 'slow-key',
      // Five tokens in Redis that barely refill on its own clock ('other' takes none of them).
      capacity: 5,
      refillPerSecond: 0.001,
      fallback: 'closed',
      clock,
      sleep: clock.sleep,
    });
    // Another key's round trip brings the link up, so every call below spends a lease.
    limiter.tryAcquire('other');
    for (let i = 0; i < 100 && limiter.linkStats().mode !== 'shared'; i++) await client.ping();
    let admitted = 0;
    for (let i = 0; i < 8; i++) {
      if (limiter.tryAcquire('k').ok) admitted++;
      // The lease's round trip lands before the next call, 3.3 s later here (a
      // keyed limiter sends its refills at the end of the event-loop turn).
      await new Promise((turn) => setImmediate(turn));
      await client.ping();
      await client.ping();
      clock.advance(3300);
    }
    // The first lease expires unused (no interval between calls known yet); from
    // the second on, each is spent by the next call: the four tokens left.
    // Dropping them after 1 s (before) admitted none.
    expect(admitted).toBe(4);
  });

  it('tokens admitted without Redis (before the first lease) are paid back to the shared bucket', async () => {
    const bucket = createRedisTokenBucket({
      client,
      timeoutMs,
      name: 'owed',
      capacity: 10,
      refillPerSecond: 0.001,
    });
    // No reply yet: decided by the local bucket, which starts full.
    let admitted = 0;
    for (let i = 0; i < 3; i++) if (bucket.tryAcquire().ok) admitted++;
    expect(admitted).toBe(3);
    admitted += await decide(40, () => bucket.tryAcquire());
    // The fleet's bucket held 10: the 3 local ones came out of it too (13 before).
    expect(admitted).toBe(10);
  });

  it('retries allowed without Redis (before the first lease) are paid back to the fleet window', async () => {
    // ratio 0: the fleet may retry 10 times in the 10 s window.
    const budget = createRedisRetryBudget({
      client,
      timeoutMs,
      name: 'owed-retries',
      ratio: 0,
      minRetriesPerSecond: 1,
      ttlMs: 10_000,
    });
    let allowed = 0;
    for (let i = 0; i < 3; i++) if (budget.tryRetry()) allowed++;
    expect(allowed).toBe(3);
    allowed += await decide(40, () => ({ ok: budget.tryRetry() }));
    expect(allowed).toBe(10);
  });

  it('a refusal is a RateLimitError without a stack trace (overload makes most decisions refusals)', async () => {
    const bucket = createRedisTokenBucket({
      client,
      timeoutMs,
      name: 'refusals',
      capacity: 1,
      refillPerSecond: 0.001,
      fallback: 'closed',
    });
    expect(await decide(10, () => bucket.tryAcquire())).toBe(1);
    const refused = bucket.tryAcquire();
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error).toBeInstanceOf(RateLimitError);
    expect(refused.error.retryAfterMs).toBeGreaterThan(0);
    expect(refused.error.message).toMatch(/^Rate limit exceeded; retry after \d+ ms$/);
    expect(refused.error.stack).not.toMatch(/\n\s+at /);
  });
});
