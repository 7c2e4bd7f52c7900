// The @breakwater/redis benchmark (not a test): the 10 s fleet runs,
// the added latency per decision with Redis up on loopback, how fast a trip
// spreads, and what decisions do while redis-server is killed and restarted.
// Needs redis-server on PATH. Run:
//   cd bench && node --import tsx redis-fleet.ts [--quick] [--keyed]   (after pnpm build: it imports the built packages)
// (--keyed: only the keyed limiter's accuracy rows)
// and copy the printed table into BENCHMARKS.md ("@breakwater/redis").

import {
  createCircuitBreaker,
  createKeyedLimiter,
  createRetryBudget,
  createTokenBucket,
  systemClock,
  systemSleep,
} from '@breakwater/core';
import {
  createRedisCircuitBreaker,
  createRedisKeyedLimiter,
  createRedisRetryBudget,
  createRedisTokenBucket,
} from '@breakwater/redis';
import { Redis } from 'ioredis';
import { runFleet, runOutage } from '../packages/redis/test/fleet.js';
import { startRedisServer } from '../packages/redis/test/redis-server.js';
import { percentile, sorted } from './harness/stats.js';

const quick = process.argv.includes('--quick');
const keyedOnly = process.argv.includes('--keyed');
const seconds = quick ? 3 : 10;
const server = await startRedisServer();
const clients: Redis[] = [];
const connect = () => {
  const c = new Redis({
    port: server.port,
    host: '127.0.0.1',
    enableOfflineQueue: false,
    retryStrategy: () => 50,
  });
  c.on('error', () => {});
  clients.push(c);
  return c;
};
const rows: string[] = [];
const breakersToClose: { close(): Promise<void> }[] = [];
const row = (...cells: (string | number)[]) => rows.push(`| ${cells.join(' | ')} |`);
const us = (ns: number | undefined) => ((ns ?? 0) / 1000).toFixed(2);

/** p50/p99 of `decide` in ns over `n` calls, one call timed at a time. */
async function latency(decide: () => unknown, n = 20_000): Promise<[number, number]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    decide();
    samples.push(Number(process.hrtime.bigint() - t0));
    // Let leases refill between batches, as traffic would.
    if (i % 100 === 99) await systemSleep(1);
  }
  const s = sorted(samples);
  return [percentile(s, 50) ?? 0, percentile(s, 99) ?? 0];
}

try {
  // 1. Accuracy: 4 processes, open loop at 3x the limit each.
  // [label, shape, processes, calls per second per process, fleet limit per second,
  //  warm-up ms of the shared run, of the local run]
  const accuracy = [
    [
      'token bucket, 200/s',
      { kind: 'bucket' as const, capacity: 200, refillPerSecond: 200 },
      4,
      600,
      200,
      // Longer than a full bucket lasts (capacity / rate), so the window starts drained.
      3000,
      3000,
    ],
    // 10,000 keys at 0.1/s each: 3,000 calls/s per process, which this machine's
    // four generator processes can offer on schedule. Capacity 4 = the first call
    // of a key in each of the 4 processes, decided locally before its first lease
    // and paid back from the full bucket, so the buckets are drained after the
    // first round over the keys (3.3 s; 10 s leaves room for a loaded machine).
    // A local bucket of 4 per process lasts 20 s against 0.3 calls/s per key:
    // its run warms up longer, so both windows measure the steady rate.
    [
      'keyed limiter, 10,000 keys x 0.1/s',
      { kind: 'keyed' as const, keys: 10_000, capacity: 4, refillPerSecond: 0.1 },
      4,
      3000,
      1000,
      10_000,
      25_000,
    ],
    // Beyond this machine's load generator: 120,000 decisions/s from four
    // processes on two shared cores (the lease refills are batched, a few
    // hundred calls per run); they fall seconds behind schedule and read lease
    // replies late. Kept as a record.
    [
      "keyed limiter, 10,000 keys x 1/s (beyond this machine's generator)",
      { kind: 'keyed' as const, keys: 10_000, capacity: 2, refillPerSecond: 1 },
      4,
      30_000,
      10_000,
      3000,
      3000,
    ],
  ] as const;
  for (const [label, shape, processes, offered, rate, warmShared, warmLocal] of accuracy) {
    if (keyedOnly && shape.kind !== 'keyed') continue;
    // The shared and the local limiters are measured in separate runs: feeding
    // both from one process halves the load it can offer on a small machine.
    const run = (side: 'shared' | 'local') =>
      runFleet(processes, {
        port: server.port,
        name: `bench-${shape.kind}-${rate}-${side}`,
        warmMs: side === 'shared' ? warmShared : warmLocal,
        measureMs: seconds * 1000,
        offeredPerSecond: offered,
        localShare: 1 / processes,
        side,
        ...shape,
      });
    const { total } = await run('shared');
    const { total: local } = await run('local');
    const expected = rate * seconds;
    row(
      `fleet accuracy: ${label}`,
      `${((total.shared / expected) * 100).toFixed(1)}% of the limit (${total.shared}/${expected}); offered ${(total.offered / expected).toFixed(2)}x the limit (planned ${(processes * offered) / rate}x), schedule behind by ${Math.round(total.behindMs / processes)} ms at worst (mean over processes); ${total.redisCalls} round trips, ${total.timeouts} over timeoutMs, ${total.fallbacks} fallbacks`,
      `local limiters: ${((local.local / expected) * 100).toFixed(0)}%`,
    );
  }
  if (!keyedOnly) {
    const budget = await runFleet(4, {
      port: server.port,
      kind: 'budget',
      name: 'bench-budget',
      warmMs: 1000,
      measureMs: seconds * 1000,
      offeredPerSecond: 200,
      retriesPerCall: 2,
      ratio: 0.05,
      minRetriesPerSecond: 50,
      ttlMs: 1000,
      localShare: 0.25,
    });
    const allowed = 0.05 * budget.total.offered + 50 * seconds;
    row(
      'fleet retry budget (outage)',
      `${((budget.total.sharedRetries / allowed) * 100).toFixed(1)}% of ratio x requests + minimum`,
      `local budgets: ${((budget.total.localRetries / allowed) * 100).toFixed(0)}%`,
    );

    // 1b. A 30 s outage with 4 processes: trip spread, probes per cool-down, recovery.
    const coolDownMs = 200;
    const outage = { tripAtMs: 1000, quietMs: 300, recoverAtMs: 1300 + (quick ? 5 : 30) * 1000 };
    const each = await runOutage(server.port, 'bench-outage', coolDownMs, outage);
    const leaderOpened = each[0]?.openedAtMs ?? 0;
    const spread = Math.max(...each.slice(1).map((r) => r.openedAtMs - leaderOpened));
    const probes = each.reduce((sum, r) => sum + r.shared, 0);
    const coolDowns = (outage.recoverAtMs - outage.tripAtMs - outage.quietMs) / coolDownMs;
    const recovered = Math.max(...each.map((r) => r.recoveredAtMs - outage.recoverAtMs));
    row(
      `circuit, ${(outage.recoverAtMs - 1300) / 1000} s outage, 4 processes at 500 calls/s, cool-down ${coolDownMs} ms`,
      `trip open in the 3 others after ${spread} ms; ${probes} probes in ${coolDowns} cool-downs`,
      `every process's first success ${recovered} ms after recovery (max)`,
    );

    // 2. Added latency per decision, Redis up on loopback.
    const client = connect();
    const pairs: [string, () => unknown, () => unknown][] = [];
    const rb = createRedisTokenBucket({
      client,
      name: 'lat-b',
      capacity: 1e6,
      refillPerSecond: 1e6,
    });
    const lb = createTokenBucket({ capacity: 1e6, refillPerSecond: 1e6 });
    pairs.push(['tryAcquire (bucket)', () => rb.tryAcquire(), () => lb.tryAcquire()]);
    const rk = createRedisKeyedLimiter({
      client,
      name: 'lat-k',
      capacity: 1e6,
      refillPerSecond: 1e6,
    });
    const lk = createKeyedLimiter({ capacity: 1e6, refillPerSecond: 1e6 });
    pairs.push(['tryAcquire (keyed, 1 key)', () => rk.tryAcquire('k'), () => lk.tryAcquire('k')]);
    const rr = createRedisRetryBudget({ client, name: 'lat-r', minRetriesPerSecond: 1e6 });
    const lr = createRetryBudget({ minRetriesPerSecond: 1e6 });
    pairs.push([
      'recordRequest + tryRetry',
      () => {
        rr.recordRequest();
        return rr.tryRetry();
      },
      () => {
        lr.recordRequest();
        return lr.tryRetry();
      },
    ]);
    const rc = createRedisCircuitBreaker({ client, name: 'lat-c' });
    await rc.ready;
    const lc = createCircuitBreaker();
    pairs.push([
      'circuit tryAcquire + release',
      () => rc.release(rc.tryAcquire(), 'success'),
      () => lc.release(lc.tryAcquire(), 'success'),
    ]);
    breakersToClose.push(rc);
    for (const [label, redis, local] of pairs) {
      await latency(redis, 2000);
      const [r50, r99] = await latency(redis);
      const [l50, l99] = await latency(local);
      row(
        `decision: ${label}`,
        `Redis-backed p50 ${us(r50)} µs, p99 ${us(r99)} µs`,
        `core alone p50 ${us(l50)} µs, p99 ${us(l99)} µs`,
      );
    }
    const link = rb.linkStats();
    row(
      'lease round trips (bucket, above)',
      `${link.calls} for 22,000 decisions`,
      `smoothed RTT not exposed; timeouts ${link.timeouts}`,
    );

    // 3. A trip spreads: time until three other breakers have opened.
    const fleet = Array.from({ length: 4 }, () =>
      createRedisCircuitBreaker({
        client: connect(),
        name: 'spread',
        breaker: { failureThreshold: 1 },
      }),
    );
    await Promise.all(fleet.map((b) => b.ready));
    const spreads: number[] = [];
    for (let i = 0; i < (quick ? 5 : 20); i++) {
      for (const b of fleet) b.reset();
      await systemSleep(50);
      const opened = fleet.slice(1).map(
        (b) =>
          new Promise<number>((resolve) => {
            const sub = b.onStateChange((e) => {
              if (e.to === 'open') {
                sub.dispose();
                resolve(performance.now());
              }
            });
          }),
      );
      const t0 = performance.now();
      const first = fleet[0];
      first?.release(first.tryAcquire(), 'failure');
      const times = await Promise.all(opened);
      spreads.push(Math.max(...times) - t0);
    }
    const s = sorted(spreads);
    row(
      'circuit opened in one process, open in 3 others',
      `p50 ${percentile(s, 50)?.toFixed(2)} ms`,
      `max ${s[s.length - 1]?.toFixed(2)} ms`,
    );
    for (const b of fleet) await b.close();

    // 4. Kill and restart redis-server under steady decisions.
    const fault = createRedisTokenBucket({
      client,
      name: 'fault',
      capacity: 100,
      refillPerSecond: 100,
      localShare: 0.5,
    });
    const worst: number[] = [];
    let killedAt = 0;
    let localAt = 0;
    let restartedAt = 0;
    let sharedAt = 0;
    const start = systemClock();
    const steps = [
      [
        500,
        () =>
          server.kill().then(() => {
            killedAt = systemClock();
          }),
      ],
      [
        1500,
        () =>
          server.restart().then(() => {
            restartedAt = systemClock();
          }),
      ],
    ] as const;
    let step = 0;
    while (systemClock() - start < 3000) {
      const next = steps[step];
      if (next !== undefined && systemClock() - start >= next[0]) {
        step++;
        await next[1]();
      }
      const t0 = process.hrtime.bigint();
      fault.tryAcquire();
      worst.push(Number(process.hrtime.bigint() - t0));
      const mode = fault.linkStats().mode;
      if (killedAt && !localAt && mode === 'local') localAt = systemClock();
      if (restartedAt && !sharedAt && mode === 'shared') sharedAt = systemClock();
      await systemSleep(1);
    }
    const w = sorted(worst);
    row(
      'decisions while redis-server is killed and restarted',
      `p99 ${us(percentile(w, 99))} µs, max ${us(w[w.length - 1])} µs`,
      `local ${localAt - killedAt} ms after the kill; shared again ${sharedAt - restartedAt} ms after the restart`,
    );
  }
} finally {
  for (const b of breakersToClose) await b.close();
  for (const c of clients) c.disconnect();
  await server.stop();
}
console.log(
  `| measure | @breakwater/redis | comparison |\n| --- | --- | --- |\n${rows.join('\n')}`,
);
