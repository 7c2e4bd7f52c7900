import { systemSleep } from '@breakwater/core/time';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisKeyedLimiter, type RedisKeyedLimiter } from '../src/index.js';
import { redisKey } from '../src/link.js';
import { connectClient, type RedisServer, startRedisServer } from './redis-server.js';

// A name or key a caller chooses must never reach another object's Redis key.

/** The slot-deciding part of a key, as Redis Cluster reads it: between the first `{` and the next `}`. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open < 0 || close <= open + 1 ? key : key.slice(open + 1, close);
}

// Short strings over the characters that matter, so collisions would be found.
const id = fc.string({ unit: fc.constantFrom('a', ':', '{', '}', '%', '3', 'A'), maxLength: 6 });
const parts = fc.constantFrom('bucket', 'budget', 'circuit', 'probe', 'key');

describe('Redis keys', () => {
  it('distinct (prefix, name, key, part) never give the same key; the tag stays the ids', () => {
    const input = fc.record({
      prefix: fc.constantFrom('breakwater:', 'app:', ''),
      ids: fc.tuple(id, id),
      part: parts,
    });
    fc.assert(
      fc.property(input, input, (a, b) => {
        const ka = redisKey(a.prefix, a.ids, a.part);
        const kb = redisKey(b.prefix, b.ids, b.part);
        const same =
          a.prefix === b.prefix && a.part === b.part && a.ids.join('\0') === b.ids.join('\0');
        expect(ka === kb).toBe(same);
        // One keyed limiter key, one slot: its tag holds nothing but the escaped name and key.
        expect(hashTag(ka)).toBe(ka.slice(a.prefix.length + 1, -(a.part.length + 2)));
      }),
      { seed: 29, numRuns: 2000 },
    );
    // Names and keys without % : { } read as written (and keep the keys they had).
    expect(redisKey('breakwater:', ['per-user', 'alice'], 'key')).toBe(
      'breakwater:{per-user:alice}:key',
    );
  });

  it('a facade name alone (one id) never meets a keyed limiter name and key (two)', () => {
    fc.assert(
      fc.property(id, id, id, (name, limiter, key) => {
        expect(redisKey('breakwater:', [name], 'key')).not.toBe(
          redisKey('breakwater:', [limiter, key], 'key'),
        );
      }),
      { seed: 29, numRuns: 1000 },
    );
  });
});

describe('keyed limiter keys in a real redis-server', () => {
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

  /** Calls `key` once per event-loop turn until 20 turns in a row admit nothing; returns the admissions. */
  async function drain(limiter: RedisKeyedLimiter, key: string): Promise<number> {
    let admitted = 0;
    for (let idle = 0, round = 0; idle < 20 && round < 1000; round++) {
      const ok = limiter.tryAcquire(key).ok;
      admitted += ok ? 1 : 0;
      idle = ok ? 0 : idle + 1;
      await systemSleep(5);
    }
    return admitted;
  }

  it('limiter `api` key `v2:alice` and limiter `api:v2` key `alice` each get their full 5 tokens', async () => {
    const limit = { client, capacity: 5, refillPerSecond: 0.001, timeoutMs: 250 };
    const api = createRedisKeyedLimiter({ ...limit, name: 'api' });
    const apiV2 = createRedisKeyedLimiter({ ...limit, name: 'api:v2' });
    expect(await drain(api, 'v2:alice')).toBe(5);
    expect(await drain(apiV2, 'alice')).toBe(5);
    // What Redis holds: one bucket per (limiter, key).
    expect((await client.keys('breakwater:*')).sort()).toEqual([
      'breakwater:{api%3Av2:alice}:key',
      'breakwater:{api:v2%3Aalice}:key',
    ]);
    expect(api.linkStats().mode).toBe('shared');
  });
});
