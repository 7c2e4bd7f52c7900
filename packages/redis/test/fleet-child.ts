// One process of a test fleet: offers open-loop load to a Redis-backed object
// and, for comparison, to the same core object kept locally; prints one JSON
// line of counts over the measured window. Config as JSON in argv[2].
import {
  createCircuitBreaker,
  createKeyedLimiter,
  createRetryBudget,
  createTokenBucket,
} from '@breakwater/core';
import { systemClock, systemSleep } from '@breakwater/core/time';
import { Redis } from 'ioredis';
import {
  createRedisCircuitBreaker,
  createRedisKeyedLimiter,
  createRedisRetryBudget,
  createRedisTokenBucket,
} from '../src/index.js';

/** What the parent asks a child to do. */
export interface FleetChildConfig {
  port: number;
  kind: 'bucket' | 'keyed' | 'budget' | 'circuit' | 'outage';
  /** This child's place in the fleet, 0-based (set by `runFleet`). */
  index?: number;
  name: string;
  /** Calls before this long after `startAt` are not counted (bursts, first leases). */
  warmMs: number;
  /** Length of the counted window. */
  measureMs: number;
  /** Calls this process offers per second, on a fixed schedule. */
  offeredPerSecond: number;
  /** Keyed limiter: calls go round-robin over this many keys. */
  keys?: number;
  /** Budget: retries each failed call asks for. */
  retriesPerCall?: number;
  capacity?: number;
  refillPerSecond?: number;
  ratio?: number;
  minRetriesPerSecond?: number;
  ttlMs?: number;
  localShare?: number;
  /** Circuit: the breakers' cool-down. */
  openDurationMs?: number;
  /**
   * The facades' `timeoutMs`. Defaults to 250: the fleet shares two cores with
   * Redis and the test runner, and a stalled child is no Redis outage.
   */
  timeoutMs?: number;
  /** The facades' `fallback`. Defaults to `'local'`. */
  fallback?: 'local' | 'open' | 'closed';
  /**
   * Bucket and keyed limiter: which limiter gets the load. `'both'` feeds each
   * call to both; a heavy run measures them apart, so the comparison does not
   * take CPU from the shared limiter. Defaults to `'both'`.
   */
  side?: 'shared' | 'local' | 'both';
  /**
   * Outage: the upstream fails every call from this long after the start
   * until `recoverAtMs`. Only child 0 calls during the first `quietMs` of the
   * outage, so its trip is the one that must reach the others.
   */
  outage?: { tripAtMs: number; quietMs: number; recoverAtMs: number };
}

/** What a child prints. */
export interface FleetChildResult {
  offered: number;
  shared: number;
  local: number;
  sharedRetries: number;
  localRetries: number;
  redisCalls: number;
  fallbacks: number;
  timeouts: number;
  errors: number;
  /** Most the schedule fell behind the wall clock inside the window, in ms. */
  behindMs: number;
  /** Outage: ms after the start when this process's circuit first opened (-1: never). */
  openedAtMs: number;
  /** Outage: ms after the start of this process's first successful call after recovery (-1: none). */
  recoveredAtMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as FleetChildConfig;
const clock = systemClock;
const redis = new Redis({
  port: config.port,
  host: '127.0.0.1',
  enableOfflineQueue: false,
});
await new Promise<void>((resolve, reject) => {
  redis.once('ready', resolve);
  redis.once('error', reject);
});

const common = {
  client: redis,
  name: config.name,
  localShare: config.localShare ?? 1,
  timeoutMs: config.timeoutMs ?? 250,
  fallback: config.fallback ?? 'local',
};
const shape = { capacity: config.capacity ?? 1, refillPerSecond: config.refillPerSecond ?? 1 };
const budgetShape = {
  ratio: config.ratio ?? 0.2,
  minRetriesPerSecond: config.minRetriesPerSecond ?? 10,
  ttlMs: config.ttlMs ?? 1000,
};

const useShared = config.side !== 'local';
const useLocal = config.side !== 'shared';
let call: (i: number) => void;
const counts: FleetChildResult = {
  offered: 0,
  shared: 0,
  local: 0,
  sharedRetries: 0,
  localRetries: 0,
  redisCalls: 0,
  fallbacks: 0,
  timeouts: 0,
  errors: 0,
  behindMs: 0,
  openedAtMs: -1,
  recoveredAtMs: -1,
};
let counted = false;
let stats = () => ({ calls: 0, fallbacks: 0, timeouts: 0, errors: 0 });
let cleanup = async () => {};

if (config.kind === 'bucket') {
  const shared = createRedisTokenBucket(Object.assign({}, common, shape));
  const local = createTokenBucket(shape);
  stats = () => shared.linkStats();
  call = () => {
    if (useShared && shared.tryAcquire().ok && counted) counts.shared++;
    if (useLocal && local.tryAcquire().ok && counted) counts.local++;
  };
} else if (config.kind === 'keyed') {
  const shared = createRedisKeyedLimiter(Object.assign({}, common, shape));
  const local = createKeyedLimiter(shape);
  const keys = Array.from({ length: config.keys ?? 1 }, (_, k) => `user-${k}`);
  stats = () => shared.linkStats();
  call = (i) => {
    const key = keys[i % keys.length] as string;
    if (useShared && shared.tryAcquire(key).ok && counted) counts.shared++;
    if (useLocal && local.tryAcquire(key).ok && counted) counts.local++;
  };
} else if (config.kind === 'circuit') {
  // Every call fails (a sustained outage). Counted: calls that reach the
  // upstream once this process has seen the circuit open — the probes.
  const breaker = {
    failureSpanMs: 0,
    failureThreshold: 2,
    openDurationMs: config.openDurationMs ?? 100,
  };
  const shared = createRedisCircuitBreaker({
    client: redis,
    name: config.name,
    timeoutMs: common.timeoutMs,
    breaker,
  });
  await shared.ready;
  const local = createCircuitBreaker(breaker);
  let sharedOpened = false;
  let localOpened = false;
  shared.onStateChange((e) => {
    if (e.to === 'open') sharedOpened = true;
  });
  local.onStateChange((e) => {
    if (e.to === 'open') localOpened = true;
  });
  stats = () => shared.linkStats();
  cleanup = () => shared.close();
  call = () => {
    const p = shared.tryAcquire();
    if (p >= 0) {
      if (sharedOpened && counted) counts.shared++;
      shared.release(p, { outcome: 'failure' });
    }
    const q = local.tryAcquire();
    if (q >= 0) {
      if (localOpened && counted) counts.local++;
      local.release(q, { outcome: 'failure' });
    }
  };
} else if (config.kind === 'outage') {
  // One upstream outage seen by the whole fleet: every call fails between
  // tripAtMs and recoverAtMs (the same wall clock for every process). Counted
  // as `shared`: calls that reach the upstream during the outage once all
  // processes call — the probes.
  const { tripAtMs, quietMs, recoverAtMs } = config.outage ?? {
    tripAtMs: 300,
    quietMs: 300,
    recoverAtMs: 2600,
  };
  const shared = createRedisCircuitBreaker({
    client: redis,
    name: config.name,
    timeoutMs: common.timeoutMs,
    breaker: {
      failureSpanMs: 0,
      failureThreshold: 2,
      openDurationMs: config.openDurationMs ?? 100,
    },
  });
  await shared.ready;
  shared.onStateChange((e) => {
    if (e.to === 'open' && counts.openedAtMs < 0) counts.openedAtMs = clock() - startAt;
  });
  stats = () => shared.linkStats();
  cleanup = () => shared.close();
  call = () => {
    const t = clock() - startAt;
    const down = t >= tripAtMs && t < recoverAtMs;
    if (down && t < tripAtMs + quietMs && config.index !== 0) return;
    const permit = shared.tryAcquire();
    if (permit < 0) return;
    if (down && t >= tripAtMs + quietMs) counts.shared++;
    shared.release(permit, { outcome: down ? 'failure' : 'success' });
    if (t >= recoverAtMs && counts.recoveredAtMs < 0) counts.recoveredAtMs = t;
  };
} else {
  const shared = createRedisRetryBudget(Object.assign({}, common, budgetShape));
  const local = createRetryBudget(budgetShape);
  const retries = config.retriesPerCall ?? 2;
  stats = () => shared.linkStats();
  // Every call fails (a sustained outage) and asks for its retries until refused.
  call = () => {
    shared.recordRequest();
    local.recordRequest();
    for (let r = 0; r < retries && shared.tryRetry(); r++) if (counted) counts.sharedRetries++;
    for (let r = 0; r < retries && local.tryRetry(); r++) if (counted) counts.localRetries++;
  };
}

// Ready: the parent answers with the wall-clock time the whole fleet starts its load.
process.stdout.write('ready\n');
const startAt = await new Promise<number>((resolve) => {
  process.stdin.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
});
process.stdin.pause();
const periodMs = 1000 / config.offeredPerSecond;
const from = startAt + config.warmMs;
const until = from + config.measureMs;
// A little load after the window too, so the last leases of the window are spent as usual.
const end = until + 200;
/** Most calls issued in one event-loop turn: replies from Redis must get turns in between. */
const BATCH = 200;
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
let issued = 0;
// Open loop on the wall clock: calls follow the schedule whatever the answers; a
// descheduled process catches up in bounded batches, never in one long
// synchronous burst (which starved lease replies and let leased tokens expire).
// Calls are counted by when they were really made, so `offered` is the load the
// process really offered inside the window.
for (let now = clock(); now < end; now = clock()) {
  const due = Math.floor((now - startAt) / periodMs);
  const stop = Math.min(due, issued + BATCH);
  counted = now >= from && now < until;
  if (counted) {
    counts.offered += stop - issued;
    counts.behindMs = Math.max(counts.behindMs, (due - stop) * periodMs);
  }
  for (; issued < stop; issued++) call(issued);
  if (issued < due) await yieldTurn();
  else await systemSleep(1);
}
const s = stats();
counts.redisCalls = s.calls;
counts.fallbacks = s.fallbacks;
counts.timeouts = s.timeouts;
counts.errors = s.errors;
//process.stderr.write(`DBG ${JSON.stringify({g:(globalThis as any).__granted,e:(globalThis as any).__exp,l:(globalThis as any).__lost,t:(globalThis as any).__took, lag: clock()-until})}\n`);
process.stdout.write(`${JSON.stringify(counts)}\n`);
await cleanup();
redis.disconnect();
