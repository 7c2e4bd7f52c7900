import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFleet } from './fleet.js';
import type { FleetChildConfig } from './fleet-child.js';
import { type RedisServer, startRedisServer } from './redis-server.js';

// Four client processes share one redis-server; each offers three times the
// fleet's limit on a fixed (open-loop) schedule. Every child also feeds the
// same schedule to a local core limiter, which admits ~4x: that is what the
// shared one must not do.
const PROCESSES = 4;

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('fleet accuracy (4 processes, open loop at 3x the limit)', () => {
  it('a shared token bucket admits the configured fleet rate within 5%', async () => {
    const rate = 200;
    const measureMs = 4000;
    const { total, each } = await runFleet(PROCESSES, {
      port: server.port,
      kind: 'bucket',
      name: 'accuracy-bucket',
      warmMs: 1000,
      measureMs,
      offeredPerSecond: 3 * rate,
      capacity: rate,
      refillPerSecond: rate,
      localShare: 1 / PROCESSES,
    });
    const expected = (rate * measureMs) / 1000;
    // The load really was above the limit (counted by when calls were made).
    expect(total.offered).toBeGreaterThan(2 * expected);
    expect(
      Math.abs(total.shared - expected) / expected,
      `admitted ${total.shared} of ${expected}: ${JSON.stringify(total)}`,
    ).toBeLessThanOrEqual(0.05);
    // Local buckets: each process admits the whole limit.
    expect(total.local / expected).toBeGreaterThan(3.5);
    // Every process got some: the lease goes to whoever asks, not to one winner.
    for (const r of each) expect(r.shared).toBeGreaterThan(0);
  });

  /**
   * Runs the keyed fleet (3x each key's fleet rate per process) and checks the
   * shared limiter admitted the fleet rate within 5% where local ones admit ~4x.
   */
  async function keyedFleet(
    keys: number,
    perKey: number,
    measureMs: number,
    config: Partial<FleetChildConfig>,
  ): Promise<void> {
    const { total } = await runFleet(PROCESSES, {
      port: server.port,
      kind: 'keyed',
      name: `accuracy-keyed-${keys}`,
      warmMs: 1000,
      measureMs,
      offeredPerSecond: 3 * perKey * keys,
      keys,
      refillPerSecond: perKey,
      localShare: 1 / PROCESSES,
      ...config,
    });
    const expected = (keys * perKey * measureMs) / 1000;
    const message = `admitted ${total.shared} of ${expected}: ${JSON.stringify(total)}`;
    expect(total.offered).toBeGreaterThan(2 * expected);
    expect(Math.abs(total.shared - expected) / expected, message).toBeLessThanOrEqual(0.05);
    expect(total.local / expected).toBeGreaterThan(3.5);
  }

  it('a shared keyed limiter admits each key its configured fleet rate within 5% (many keys)', async () => {
    // Two seconds of tokens: a process descheduled for a while on a loaded machine loses none.
    await keyedFleet(100, 10, 4000, { capacity: 20 });
  });

  it('the same with 1,000 keys (each refill round trip carries many keys)', async () => {
    await keyedFleet(1000, 1, 6000, {
      // Each process calls each key 3 times a second, so the keys' initial tokens
      // are spent in the warm-up. The window is long against the capacity (2 s):
      // a stall of the loaded machine across its start or end moves stored
      // tokens in or out of it.
      warmMs: 1500,
      capacity: 2,
      // Fail-closed: a key's first call in each process is refused, not decided
      // locally and paid back from later tokens (with 4 processes and a small
      // capacity that debt is paid seconds into the window: exact in the long
      // run, not the steady rate), so the window counts only tokens taken from Redis.
      fallback: 'closed',
      // A batch carries hundreds of keys: a child descheduled for 250 ms on a loaded
      // CI host would time them all out (fallbacks are faults.test.ts's subject).
      timeoutMs: 1000,
    });
  });
});

describe('fleet retry budget (4 processes in a sustained outage)', () => {
  it('fleet retries stay within ratio x fleet requests + the minimum per second', async () => {
    const ratio = 0.05;
    const minRetriesPerSecond = 50;
    const measureMs = 4000;
    const { total } = await runFleet(PROCESSES, {
      port: server.port,
      kind: 'budget',
      name: 'accuracy-budget',
      warmMs: 1000,
      measureMs,
      offeredPerSecond: 200,
      retriesPerCall: 2,
      ratio,
      minRetriesPerSecond,
      // Windows of 1 s, so the counted 4 s hold four of them.
      ttlMs: 1000,
      localShare: 1 / PROCESSES,
    });
    // Every call fails, so each asks for its retries: the budget is the only limit.
    const allowed = ratio * total.offered + (minRetriesPerSecond * measureMs) / 1000;
    const message = `${total.sharedRetries} retries for ${total.offered} requests, allowed ${allowed}`;
    expect(total.sharedRetries, message).toBeLessThanOrEqual(allowed * 1.05);
    // The fleet does get its budget (leases do not strand it).
    expect(total.sharedRetries, message).toBeGreaterThanOrEqual(allowed * 0.8);
    // Local budgets each grant the whole minimum: several times what the fleet may add.
    expect(total.localRetries / allowed).toBeGreaterThan(2);
  });
});

describe('fleet circuit (4 processes in a sustained outage)', () => {
  it('once open, the fleet sends about one probe per cool-down; local breakers send one each', async () => {
    const openDurationMs = 100;
    const measureMs = 3000;
    const { total } = await runFleet(PROCESSES, {
      port: server.port,
      kind: 'circuit',
      name: 'fleet-circuit',
      warmMs: 500,
      measureMs,
      offeredPerSecond: 500,
      openDurationMs,
    });
    const coolDowns = measureMs / openDurationMs;
    const message = `${total.shared} probes in ${coolDowns} cool-downs (local: ${total.local})`;
    expect(total.shared, message).toBeLessThanOrEqual(coolDowns * 1.1);
    expect(total.shared, message).toBeGreaterThanOrEqual(coolDowns / 3);
    expect(total.local, message).toBeGreaterThanOrEqual(coolDowns * 3);
  });
});
