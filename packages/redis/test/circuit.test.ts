import { createCircuitBreaker } from '@breakwater/core';
import { systemClock, systemSleep } from '@breakwater/core/time';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisCircuitBreaker, type RedisCircuitBreaker } from '../src/index.js';
import { runOutage } from './fleet.js';
import { type RedisServer, startRedisServer } from './redis-server.js';

// Four breakers, each with its own connections and its own local breaker, as
// four processes would have; they share only the redis-server.
let server: RedisServer;
const clients: Redis[] = [];
const breakers: RedisCircuitBreaker[] = [];

function connect(): Redis {
  const client = new Redis({ port: server.port, host: '127.0.0.1', retryStrategy: () => 50 });
  client.on('error', () => {});
  clients.push(client);
  return client;
}

async function fleet(name: string, openDurationMs: number): Promise<RedisCircuitBreaker[]> {
  const members = Array.from({ length: 4 }, () =>
    createRedisCircuitBreaker({
      client: connect(),
      name,
      breaker: { failureSpanMs: 0, failureThreshold: 2, openDurationMs },
    }),
  );
  breakers.push(...members);
  await Promise.all(members.map((b) => b.ready));
  return members;
}

async function eventually(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 500 && !check(); i++) await systemSleep(2);
  return check();
}

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  for (const b of breakers) await b.close();
  for (const c of clients) c.disconnect();
  await server?.stop();
});

describe('fleet circuit', () => {
  it('a circuit opened in one process refuses calls in every other', async () => {
    const [a, ...others] = await fleet('spread', 30_000);
    for (let i = 0; i < 2; i++) a?.release(a.tryAcquire(), { outcome: 'failure' });
    expect(a?.state).toBe('open');
    expect(await eventually(() => others.every((b) => b.state === 'open'))).toBe(true);
    for (const b of others) expect(b.tryAcquire()).toBe(-1);
    // A process that joins later reads the stored state.
    const [late] = await fleet('spread', 30_000);
    expect(late?.state).toBe('open');
    expect(late?.retryAfterMs()).toBeGreaterThan(20_000);
  });

  it('during an outage the fleet sends one probe per cool-down, then all close on recovery', async () => {
    const openDurationMs = 100;
    const members = await fleet('probe', openDurationMs);
    // The same fleet with local breakers only, for comparison.
    const locals = Array.from({ length: 4 }, () =>
      createCircuitBreaker({ failureSpanMs: 0, failureThreshold: 2, openDurationMs }),
    );
    let upstreamUp = false;
    let shared = 0;
    let local = 0;
    const call = (b: {
      tryAcquire(): number;
      release(p: number, report: { outcome: 'success' | 'failure' }): void;
    }) => {
      const permit = b.tryAcquire();
      if (permit < 0) return false;
      b.release(permit, { outcome: upstreamUp ? 'success' : 'failure' });
      return true;
    };
    // Trip the fleet, then count what reaches the upstream over several cool-downs.
    for (let i = 0; i < 2; i++) call(members[0] as RedisCircuitBreaker);
    for (const b of locals) for (let i = 0; i < 2; i++) call(b);
    await eventually(() => members.every((b) => b.state === 'open'));
    const start = systemClock();
    while (systemClock() - start < 1000) {
      for (const b of members) if (call(b)) shared++;
      for (const b of locals) if (call(b)) local++;
      await systemSleep(1);
    }
    const coolDowns = 1000 / openDurationMs;
    // A loaded machine overruns the 1 s loop: judge the fleet by the cool-downs that really passed.
    const passed = Math.ceil((systemClock() - start) / openDurationMs);
    // One probe per cool-down for the fleet (the lock lives one cool-down), four with local breakers.
    expect(shared, `${shared} probes in ${passed} cool-downs`).toBeLessThanOrEqual(passed + 2);
    expect(shared * 2).toBeLessThan(local);
    expect(shared).toBeGreaterThanOrEqual(coolDowns / 3);
    expect(local).toBeGreaterThanOrEqual(coolDowns * 3);

    upstreamUp = true;
    const closed = await eventually(() => {
      for (const b of members) call(b);
      return members.every((b) => b.state === 'closed');
    });
    expect(closed).toBe(true);
  });
});

describe('fleet circuit across 4 processes (an outage scaled down from 30 s to 2 s)', () => {
  it('a trip reaches every process within 100 ms, the fleet probes once per cool-down, and all close within 250 ms of recovery', async () => {
    const openDurationMs = 100;
    const outage = { tripAtMs: 400, quietMs: 300, recoverAtMs: 2700 };
    const each = await runOutage(server.port, 'outage', openDurationMs, outage);
    const [leader, ...others] = each;
    const report = JSON.stringify(each.map((r) => [r.openedAtMs, r.shared, r.recoveredAtMs]));
    // Only the leader called when the outage began: it tripped on its own failures...
    expect(leader?.openedAtMs, report).toBeGreaterThanOrEqual(outage.tripAtMs);
    // ...and the others opened from its trip, before they sent anything. (A follower may
    // read its clock a moment before the leader does: the trip is published as it happens.)
    for (const r of others) {
      expect(r.openedAtMs, report).toBeGreaterThanOrEqual(outage.tripAtMs);
      expect(r.openedAtMs - (leader?.openedAtMs ?? 0), report).toBeLessThanOrEqual(100);
    }
    // While all four call into the outage: about one probe per cool-down for the whole fleet.
    const coolDowns = (outage.recoverAtMs - outage.tripAtMs - outage.quietMs) / openDurationMs;
    const probes = each.reduce((sum, r) => sum + r.shared, 0);
    expect(probes, report).toBeLessThanOrEqual(coolDowns + 2);
    expect(probes, report).toBeGreaterThanOrEqual(coolDowns / 3);
    // Recovery: every process has its first success within 250 ms.
    for (const r of each) {
      expect(r.recoveredAtMs, report).toBeGreaterThanOrEqual(outage.recoverAtMs);
      expect(r.recoveredAtMs - outage.recoverAtMs, report).toBeLessThanOrEqual(250);
    }
  });
});
