import { systemSleep } from '@breakwater/core/time';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisKeyedLimiter, type RedisKeyedLimiter } from '../src/index.js';
import { TAKE_TOKENS } from '../src/lease.js';
import { connectClient, type RedisServer, startRedisServer } from './redis-server.js';

// A keyed limiter sends the lease refills of all its keys that need one in one
// script call. Two connections stand for two processes. Round trips may take
// 250 ms before decisions fall back: the machine is shared, and these tests
// count tokens, not fallbacks.
const timeoutMs = 250;
let server: RedisServer;
const clients: Redis[] = [];

async function connect(): Promise<Redis> {
  const client = await connectClient(server.port);
  client.on('error', () => {});
  clients.push(client);
  return client;
}

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server?.stop();
});

/**
 * Calls every key once on each limiter per round (one event-loop turn), until
 * a round admits nothing `quiet` times in a row; returns the admissions per key.
 */
async function drainKeys(
  limiters: RedisKeyedLimiter[],
  keys: string[],
  quiet = 20,
): Promise<Map<string, number>> {
  const admitted = new Map<string, number>(keys.map((k) => [k, 0]));
  let idle = 0;
  for (let round = 0; round < 2000 && idle < quiet; round++) {
    let any = false;
    for (const limiter of limiters) {
      for (const key of keys) {
        if (limiter.tryAcquire(key).ok) {
          admitted.set(key, (admitted.get(key) ?? 0) + 1);
          any = true;
        }
      }
    }
    idle = any ? 0 : idle + 1;
    await systemSleep(5);
  }
  return admitted;
}

describe('batched refills (keyed limiter)', () => {
  it('many keys share a few script calls, and each key grants its capacity once across processes', async () => {
    const shape = { name: 'batched', capacity: 3, refillPerSecond: 0.001 };
    // Fail-closed: only tokens taken from Redis are admitted, so every count is exact.
    const one = createRedisKeyedLimiter({
      client: await connect(),
      ...shape,
      timeoutMs,
      fallback: 'closed',
    });
    const two = createRedisKeyedLimiter({
      client: await connect(),
      ...shape,
      timeoutMs,
      fallback: 'closed',
    });
    const keys = Array.from({ length: 300 }, (_, k) => `user-${k}`);
    const admitted = await drainKeys([one, two], keys);
    for (const key of keys) expect(admitted.get(key), key).toBe(3);
    for (const limiter of [one, two]) {
      const s = limiter.linkStats();
      expect(s.timeouts + s.errors).toBe(0);
      // 300 keys, 3 tokens each: one call per key and refill (at least 300) before batching.
      expect(s.calls).toBeLessThanOrEqual(30);
    }
  });

  it('the script takes each listed key in order, a key listed twice twice, atomically', async () => {
    const client = await connect();
    const [a, b] = ['breakwater:{t:a}:key', 'breakwater:{t:b}:key'];
    // capacity 2, 0.001 token/s, lease 50 ms; want 2 from a, 2 from a again, 1 from b.
    const reply = await client.eval(TAKE_TOKENS, 3, a, a, b, 2, 0.001, 50, 2, 2, 1);
    expect(Array.isArray(reply)).toBe(true);
    const granted = (reply as number[]).filter((_, i) => i % 2 === 0);
    expect(granted).toEqual([2, 0, 1]);
    // The second ask for `a` found it empty: it may ask again once a token is back (1000 s).
    expect((reply as number[])[3]).toBeGreaterThanOrEqual(999_000);
  });

  it('SCRIPT FLUSH: a batch sends the script again, and no token is lost or granted twice', async () => {
    const admin = await connect();
    const shape = { name: 'batched-flush', capacity: 2, refillPerSecond: 0.001 };
    const limiter = createRedisKeyedLimiter({
      client: await connect(),
      ...shape,
      timeoutMs,
      fallback: 'closed',
    });
    const keys = Array.from({ length: 200 }, (_, k) => `k-${k}`);
    // One round brings the link up and loads the script.
    for (const key of keys) limiter.tryAcquire(key);
    for (let i = 0; i < 200 && limiter.linkStats().mode !== 'shared'; i++) await systemSleep(5);
    await admin.script('FLUSH');
    const admitted = await drainKeys([limiter], keys);
    for (const key of keys) expect(admitted.get(key), key).toBe(2);
    const s = limiter.linkStats();
    expect(s.scriptReloads).toBeGreaterThanOrEqual(1);
    expect(s.mode).toBe('shared');
    expect(s.fallbacks + s.timeouts + s.errors).toBe(0);
  });
});
