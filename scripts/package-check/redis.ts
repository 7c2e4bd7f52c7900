// A consumer of the packed @breakwater/redis, as a user would write it, run
// against a real redis-server (port in REDIS_PORT). Two clients stand for two
// processes of a fleet. The same source is compiled as ESM, as CommonJS and
// bundled with esbuild. Run from the project root.
import { strict as assert } from 'node:assert';
import { protect } from '@breakwater/core';
import {
  createRedisCircuitBreaker,
  createRedisKeyedLimiter,
  createRedisRetryBudget,
  createRedisTokenBucket,
} from '@breakwater/redis';
import { Redis } from 'ioredis';

const port = Number(process.env.REDIS_PORT);
const connect = () => new Redis({ port, host: '127.0.0.1', enableOfflineQueue: false });

const one = connect();
const two = connect();
const closing: Array<{ close(): Promise<void> }> = [];

async function main(): Promise<void> {
  assert.ok(port > 0, 'REDIS_PORT names the redis-server to use');
  await Promise.all([one, two].map((c) => new Promise((ready) => c.once('ready', ready))));
  /** Waits, a Redis round trip at a time, until `check` holds. */
  const eventually = async (check: () => boolean, what: string): Promise<void> => {
    for (let i = 0; i < 500 && !check(); i++) await one.ping();
    assert.ok(check(), `never: ${what}`);
  };

  const name = `package-check-${process.pid}`;
  // A decision budget for a loaded CI host: with the default few ms, one slow round trip
  // falls back to local decisions and this check (not a user) would wait for Redis again.
  const timeoutMs = 1_000;
  const shared = { client: one, name, timeoutMs };
  const rateLimit = createRedisTokenBucket({ ...shared, capacity: 10, refillPerSecond: 5 });
  const budget = createRedisRetryBudget({ ...shared, ratio: 0.1 });
  const perUser = createRedisKeyedLimiter({ ...shared, capacity: 2, refillPerSecond: 1 });
  // A count alone opens it (the default 500 ms span would keep one failure from opening it).
  const breaker = { failureThreshold: 1, failureSpanMs: 0, openDurationMs: 60_000 };
  const circuit = createRedisCircuitBreaker({ ...shared, breaker });
  const otherProcess = createRedisCircuitBreaker({ client: two, name, timeoutMs, breaker });
  closing.push(circuit, otherProcess);
  await Promise.all([circuit.ready, otherProcess.ready]);

  // Using Redis is a constructor change: the objects go where the local ones went.
  const run = protect({ rateLimit, budget, circuit });
  assert.equal(await run(async () => 'ok'), 'ok');
  await eventually(() => rateLimit.linkStats().mode === 'shared', 'the bucket reaches Redis');
  assert.equal(await one.exists(`breakwater:{${name}}:bucket`), 1);
  assert.equal(perUser.tryAcquire('user-1').ok, true);

  // A circuit opened in one process refuses calls in the other.
  circuit.release(circuit.tryAcquire(), { outcome: 'failure' });
  assert.equal(circuit.state, 'open');
  await eventually(() => otherProcess.state === 'open', 'the trip reaches the other process');
  assert.ok(otherProcess.tryAcquire() < 0);
  console.log('ok: redis bucket, budget, keyed limiter, circuit');
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const c of closing) await c.close();
    one.disconnect();
    two.disconnect();
  });
