import { systemClock, systemSleep } from '@breakwater/core/time';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisCircuitBreaker,
  createRedisKeyedLimiter,
  createRedisRetryBudget,
  createRedisTokenBucket,
  type RedisCircuitBreaker,
} from '../src/index.js';
import { type RedisCluster, startRedisCluster } from './redis-server.js';

// A real three-master Redis Cluster; two ioredis `Cluster` clients stand for
// two processes. Each shared object's keys carry one hash tag, so its scripts
// run on one node; different objects (and each key of a keyed limiter) spread
// over the nodes. Round trips may take 250 ms (not the default 5) before a
// decision falls back: two loaded cores, three nodes and the tests share a
// machine, and a fallback is not what these tests look at.
const timeoutMs = 250;
let cluster: RedisCluster;
const clients: Cluster[] = [];
const breakers: RedisCircuitBreaker[] = [];

async function connect(): Promise<Cluster> {
  const client = new Cluster(
    cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
    { enableOfflineQueue: false },
  );
  client.on('error', () => {});
  clients.push(client);
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
  return client;
}

/** Runs `decide` until it has been refused for `quietMs` in a row (leases in flight settle). */
async function drain(decide: () => boolean, quietMs = 600): Promise<number> {
  let admitted = 0;
  let refusedSince = Number.NaN;
  for (let i = 0; i < 5000; i++) {
    if (decide()) {
      admitted++;
      refusedSince = Number.NaN;
    } else if (Number.isNaN(refusedSince)) {
      refusedSince = i;
    } else if (i - refusedSince >= quietMs / 2) {
      return admitted;
    }
    await systemSleep(2);
  }
  return admitted;
}

beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 60_000);
afterAll(async () => {
  for (const b of breakers) await b.close();
  for (const c of clients) c.disconnect();
  await cluster?.stop();
});

describe('Redis Cluster (3 masters)', () => {
  it('a shared token bucket admits its capacity once across two processes', async () => {
    const [a, b] = [await connect(), await connect()];
    const shape = { name: 'cluster-bucket', capacity: 40, refillPerSecond: 0.001 };
    // Fail-closed: only tokens taken from Redis are admitted, so the count is exact.
    const one = createRedisTokenBucket({ client: a, ...shape, timeoutMs, fallback: 'closed' });
    const two = createRedisTokenBucket({ client: b, ...shape, timeoutMs, fallback: 'closed' });
    let turn = 0;
    const admitted = await drain(() => (turn++ % 2 === 0 ? one : two).tryAcquire().ok);
    expect(admitted).toBe(40);
    expect(one.linkStats().mode).toBe('shared');
    expect(one.linkStats().errors + two.linkStats().errors).toBe(0);
  });

  it('a shared retry budget grants its minimum once across two processes', async () => {
    const [a, b] = [await connect(), await connect()];
    // ratio 0: only the minimum, 30 retries per 10 s window, for the whole fleet.
    const shape = { name: 'cluster-budget', ratio: 0, minRetriesPerSecond: 3, ttlMs: 10_000 };
    const one = createRedisRetryBudget({ client: a, ...shape, timeoutMs, fallback: 'closed' });
    const two = createRedisRetryBudget({ client: b, ...shape, timeoutMs, fallback: 'closed' });
    let turn = 0;
    const granted = await drain(() => (turn++ % 2 === 0 ? one : two).tryRetry());
    expect(granted).toBeLessThanOrEqual(30);
    expect(granted).toBeGreaterThanOrEqual(25);
    expect(one.linkStats().errors + two.linkStats().errors).toBe(0);
  });

  it('a keyed limiter spreads its keys over the nodes and limits each key fleet-wide', async () => {
    const [a, b] = [await connect(), await connect()];
    const shape = { name: 'cluster-keyed', capacity: 4, refillPerSecond: 0.001 };
    const one = createRedisKeyedLimiter({ client: a, ...shape, timeoutMs, fallback: 'closed' });
    const two = createRedisKeyedLimiter({ client: b, ...shape, timeoutMs, fallback: 'closed' });
    const keys = Array.from({ length: 12 }, (_, k) => `user-${k}`);
    let turn = 0;
    const admitted = await drain(() => {
      const key = keys[Math.floor(turn / 2) % keys.length] as string;
      return (turn++ % 2 === 0 ? one : two).tryAcquire(key).ok;
    });
    expect(admitted).toBe(4 * keys.length);
    // The keys live on more than one master.
    const holders = await Promise.all(
      a
        .nodes('master')
        .map(async (node) => (await node.keys('breakwater:{cluster-keyed:*')).length),
    );
    expect(holders.filter((n) => n > 0).length).toBeGreaterThan(1);
    expect(holders.reduce((x, y) => x + y, 0)).toBe(keys.length);
  });

  it('a circuit opened in one process opens in the other, and the fleet probes once', async () => {
    const breaker = { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 200 };
    const shape = { name: 'cluster-c', breaker, timeoutMs };
    const one = createRedisCircuitBreaker({ client: await connect(), ...shape });
    const two = createRedisCircuitBreaker({ client: await connect(), ...shape });
    breakers.push(one, two);
    await Promise.all([one.ready, two.ready]);
    one.release(one.tryAcquire(), { outcome: 'failure' });
    expect(one.state).toBe('open');
    for (let i = 0; i < 500 && two.state !== 'open'; i++) await systemSleep(2);
    expect(two.state).toBe('open');
    expect(two.tryAcquire()).toBe(-1);
    // After the cool-down only one of the two gets the probe (the lock is on the cluster).
    await systemSleep(250);
    // Both keep asking for 100 ms after the first probe (less than the lock's 200 ms).
    const permits: number[] = [];
    let firstAt = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 1000 && systemClock() - firstAt < 100; i++) {
      for (const b of [one, two]) {
        const p = b.tryAcquire();
        if (p >= 0) permits.push(p);
      }
      if (permits.length > 0) firstAt = Math.min(firstAt, systemClock());
      await systemSleep(2);
    }
    expect(permits).toHaveLength(1);
    expect(one.linkStats().errors + two.linkStats().errors).toBe(0);
  });
});
