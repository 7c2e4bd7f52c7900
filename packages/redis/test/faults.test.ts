import { systemSleep } from '@breakwater/core/time';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisRetryBudget,
  createRedisTokenBucket,
  type RedisLinkStats,
} from '../src/index.js';
import { type RedisServer, startRedisServer } from './redis-server.js';

let server: RedisServer;
let admin: Redis;
const clients: Redis[] = [];

/** A client as the README sets it up: fail fast while disconnected, reconnect quickly. */
function connect(): Redis {
  const client = new Redis({
    port: server.port,
    host: '127.0.0.1',
    enableOfflineQueue: false,
    retryStrategy: () => 50,
  });
  client.on('error', () => {});
  clients.push(client);
  return client;
}

/** Polls `check` every 10 ms until it holds or 5 s pass; returns whether it held. */
async function eventually(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    if (check()) return true;
    await systemSleep(10);
  }
  return check();
}

/** Decides until `bucket` is shared again (nothing talks to Redis without decisions). */
function untilShared(bucket: { tryAcquire(): unknown; linkStats(): RedisLinkStats }) {
  return eventually(() => {
    bucket.tryAcquire();
    return bucket.linkStats().mode === 'shared';
  });
}

beforeAll(async () => {
  server = await startRedisServer();
  admin = connect();
});
afterEach(async () => {
  // A test that killed the server leaves it running again for the next one.
  if (admin.status !== 'ready') await server.restart();
  await eventually(() => admin.status === 'ready');
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server?.stop();
});

describe('Redis faults', () => {
  it('kill and restart: decisions never wait, fall back locally, then resume shared', async () => {
    const client = connect();
    const bucket = createRedisTokenBucket({
      client,
      name: 'fault-bucket',
      capacity: 100,
      refillPerSecond: 100,
      localShare: 0.5,
    });
    const budget = createRedisRetryBudget({
      client,
      name: 'fault-budget',
      minRetriesPerSecond: 100,
      localShare: 0.5,
    });
    const modes = new Set<RedisLinkStats['mode']>();
    let admittedWhileDown = 0;
    let decisions = 0;
    /** Makes decisions every ms for `ms`: each one returns at once, whatever Redis does. */
    const drive = async (ms: number, down: boolean) => {
      for (let i = 0; i < ms; i++) {
        const r = bucket.tryAcquire();
        budget.recordRequest();
        const retry = budget.tryRetry();
        // Synchronous answers: never a promise that could hang on Redis.
        expect(typeof r.ok).toBe('boolean');
        expect(typeof retry).toBe('boolean');
        decisions++;
        if (down && r.ok) admittedWhileDown++;
        modes.add(bucket.linkStats().mode);
        await systemSleep(1);
      }
    };

    expect(await untilShared(bucket)).toBe(true);
    await drive(100, false);
    await server.kill();
    await drive(300, true);
    expect(bucket.linkStats().mode).toBe('local');
    expect(budget.linkStats().mode).toBe('local');
    // The local fallback still admits (fail-open by share), bounded by its bucket of 50.
    expect(admittedWhileDown).toBeGreaterThan(0);
    expect(admittedWhileDown).toBeLessThanOrEqual(50 + 0.5 * 100 * 2);

    await server.restart();
    const resumed = await eventually(() => {
      bucket.tryAcquire();
      budget.recordRequest();
      budget.tryRetry();
      return bucket.linkStats().mode === 'shared' && budget.linkStats().mode === 'shared';
    });
    expect(resumed).toBe(true);
    const stats = bucket.linkStats();
    expect(stats.fallbacks).toBeGreaterThanOrEqual(1);
    expect(stats.resumes).toBeGreaterThanOrEqual(1);
    // The restarted server had no script: it was sent again in full.
    expect(stats.scriptReloads).toBeGreaterThanOrEqual(1);
    // Shared state is back in Redis.
    expect(await admin.exists('breakwater:{fault-bucket}:bucket')).toBe(1);
    expect(modes).toEqual(new Set(['shared', 'local']));
    expect(decisions).toBe(400);
  });

  it('SCRIPT FLUSH: the script is sent again and decisions stay shared', async () => {
    const bucket = createRedisTokenBucket({
      client: connect(),
      name: 'flush-bucket',
      capacity: 10,
      refillPerSecond: 1000,
      maxLease: 1,
    });
    expect(await untilShared(bucket)).toBe(true);
    await admin.script('FLUSH');
    const before = bucket.linkStats().scriptReloads;
    expect(
      await eventually(() => {
        bucket.tryAcquire();
        return bucket.linkStats().scriptReloads > before;
      }),
    ).toBe(true);
    expect(bucket.linkStats().mode).toBe('shared');
    expect(bucket.linkStats().fallbacks).toBe(0);
  });

  it('Redis slower than timeoutMs (CLIENT PAUSE): decisions go local, then resume', async () => {
    const bucket = createRedisTokenBucket({
      client: connect(),
      name: 'slow-bucket',
      capacity: 10,
      refillPerSecond: 1000,
      maxLease: 1,
      timeoutMs: 20,
      fallback: 'closed',
      retryMs: 50,
    });
    expect(await untilShared(bucket)).toBe(true);
    await admin.call('CLIENT', 'PAUSE', '400', 'ALL');
    expect(
      await eventually(() => {
        bucket.tryAcquire();
        return bucket.linkStats().mode === 'local';
      }),
    ).toBe(true);
    // Fail-closed while Redis is away (once the lease on hand, at most 1, is spent):
    // refused, with the time Redis is tried again.
    bucket.tryAcquire();
    const refused = bucket.tryAcquire();
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.retryAfterMs).toBe(50);
    expect(bucket.linkStats().timeouts).toBeGreaterThanOrEqual(1);
    expect(await untilShared(bucket)).toBe(true);
    expect(bucket.linkStats().resumes).toBeGreaterThanOrEqual(1);
  });

  it('a lease reply later than timeoutMs is not lost: its tokens are spent', async () => {
    const client = connect();
    expect(await eventually(() => admin.status === 'ready' && client.status === 'ready')).toBe(
      true,
    );
    // Redis answers nothing for 300 ms: the first lease (taken at construction) is late.
    await admin.call('CLIENT', 'PAUSE', '300', 'ALL');
    const bucket = createRedisTokenBucket({
      client,
      name: 'late-lease',
      capacity: 10,
      refillPerSecond: 0.001,
      timeoutMs: 20,
      fallback: 'closed',
      // No second round trip during the test: only the late reply can bring tokens.
      retryMs: 60_000,
    });
    expect(await eventually(() => bucket.linkStats().timeouts === 1)).toBe(true);
    expect(bucket.tryAcquire().ok).toBe(false);
    // The late reply took a token from the fleet's bucket in Redis: it is spent here, once.
    expect(await eventually(() => bucket.tryAcquire().ok)).toBe(true);
    expect(bucket.tryAcquire().ok).toBe(false);
    expect(await admin.hget('breakwater:{late-lease}:bucket', 'u')).toBe('9000.000');
  });

  it("fallback 'open' admits every decision while Redis is down", async () => {
    const bucket = createRedisTokenBucket({
      client: connect(),
      name: 'open-bucket',
      capacity: 1,
      refillPerSecond: 1,
      fallback: 'open',
    });
    expect(await untilShared(bucket)).toBe(true);
    await server.kill();
    expect(
      await eventually(() => {
        bucket.tryAcquire();
        return bucket.linkStats().mode === 'local';
      }),
    ).toBe(true);
    for (let i = 0; i < 20; i++) expect(bucket.tryAcquire().ok).toBe(true);
  });
});
