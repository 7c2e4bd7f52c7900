import { createTokenBucket, err, ok, RateLimitError, type Result } from '@breakwater/core';
import type { TokenBucket } from '@breakwater/core/types';
import { Lease, TAKE_TOKENS } from './lease.js';
import {
  checkKeys,
  type LinkSettings,
  linkSettings,
  numberOption,
  RedisLink,
  type RedisLinkStats,
  type RedisSharedOptions,
  SHARED_KEYS,
  script,
} from './link.js';

/** Options of a lease: how many tokens a process takes from Redis at once. */
export interface LeaseOptions {
  /**
   * A lease covers this many ms of this process's recent demand, in ms (> 0):
   * larger leases mean fewer round trips, smaller ones a fairer split. Defaults to 50.
   */
  leaseMs?: number;
  /** Most tokens one lease takes, an integer >= 1. Defaults to a quarter of `capacity` (at least 1). */
  maxLease?: number;
  /**
   * Leased tokens unused after this many ms (or after two of this process's
   * intervals between calls, if longer) are dropped, so an idle process holds
   * none (> 0). Defaults to 1000.
   */
  leaseTtlMs?: number;
}

/** Options of {@link createRedisTokenBucket}. */
export interface RedisTokenBucketOptions extends RedisSharedOptions, LeaseOptions {
  /** Most tokens the fleet's bucket holds; it starts full. Required, > 0. */
  capacity: number;
  /** Tokens added to the fleet's bucket per second. Required, > 0. */
  refillPerSecond: number;
}

/** A fleet-wide {@link TokenBucket} kept in Redis. */
export interface RedisTokenBucket extends TokenBucket {
  /** Counters of the link to Redis (mode, round trips, fallbacks). */
  linkStats(): RedisLinkStats;
}

const LEASE_KEYS = ['leaseMs', 'maxLease', 'leaseTtlMs'] as const;
const BUCKET_KEYS = [...SHARED_KEYS, ...LEASE_KEYS, 'capacity', 'refillPerSecond'];

/** Validated shape and lease settings of a shared bucket. @internal */
export interface BucketSettings {
  readonly link: LinkSettings;
  readonly capacity: number;
  readonly rate: number;
  readonly leaseMs: number;
  readonly maxLease: number;
  readonly leaseTtlMs: number;
}

/** Validates the options of a shared bucket or keyed limiter. @internal */
export function bucketSettings(
  fn: string,
  options: RedisTokenBucketOptions,
  known: readonly string[],
): BucketSettings {
  checkKeys(fn, options, known);
  const link = linkSettings(fn, options);
  const capacity = numberOption(fn, 'capacity', options.capacity, undefined, 0);
  const rate = numberOption(fn, 'refillPerSecond', options.refillPerSecond, undefined, 0);
  const maxLease = numberOption(
    fn,
    'maxLease',
    options.maxLease,
    Math.max(1, Math.floor(capacity / 4)),
    1,
    { inclusive: true, integer: true },
  );
  return {
    link,
    capacity,
    rate,
    leaseMs: numberOption(fn, 'leaseMs', options.leaseMs, 50, 0),
    maxLease,
    leaseTtlMs: numberOption(fn, 'leaseTtlMs', options.leaseTtlMs, 1000, 0),
  };
}

/**
 * A refusal: a `RateLimitError` without a stack trace. Under overload most
 * decisions are refusals, and capturing a stack (which would only point
 * inside the limiter) costs ~8× the rest of the decision. @internal
 */
export function refusal(retryAfterMs: number): RateLimitError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new RateLimitError(retryAfterMs);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Refuses `n` tokens as core's bucket does: bad counts throw, more than capacity can never pass. @internal */
export function checkTokenCount(n: number, capacity: number): RateLimitError | undefined {
  if (!(n >= 0 && n !== Number.POSITIVE_INFINITY)) {
    throw new RangeError(`n must be a finite number of tokens >= 0, got ${String(n)}`);
  }
  return n > capacity ? new RateLimitError(Number.POSITIVE_INFINITY) : undefined;
}

/**
 * The local limiter used while Redis is away (`fallback: 'local'`), sized to
 * `localShare` of the fleet's limit. @internal
 */
export function fallbackBucket(s: BucketSettings): TokenBucket {
  return createTokenBucket({
    capacity: Math.max(1, s.capacity * s.link.localShare),
    refillPerSecond: s.rate * s.link.localShare,
    clock: s.link.clock,
  });
}

/**
 * Decides `n` tokens without Redis: `'open'` admits, `'closed'` refuses until
 * Redis is tried again, `'local'` asks the local limiter. What is admitted is
 * owed to the shared bucket (`lease`, at most `capacity`). @internal
 */
export function decideLocally(
  link: RedisLink,
  lease: Lease,
  n: number,
  capacity: number,
  local: () => Result<number, RateLimitError>,
): Result<number, RateLimitError> {
  const mode = link.settings.fallback;
  const r =
    mode === 'local' ? local() : mode === 'open' ? ok(0) : err(refusal(link.settings.retryMs));
  if (r.ok) lease.owe(n, capacity);
  return r;
}

/**
 * Creates a token bucket shared by every process that uses the same Redis and
 * `name`: the fleet together gets `refillPerSecond` tokens per second and
 * bursts of up to `capacity`. Each process spends a local lease of tokens
 * taken from Redis by one atomic script and tops it up in the background, so
 * `tryAcquire` never waits on Redis; while Redis is down or slower than
 * `timeoutMs`, decisions follow `fallback` and return to the shared bucket
 * when Redis answers again. Use it wherever core takes a `TokenBucket`
 * (`rateLimit` of `protect`, the router and every adapter).
 * @example
 * const rateLimit = createRedisTokenBucket({ client: redis, name: 'payments', capacity: 100, refillPerSecond: 50 });
 * const run = protect({ rateLimit });
 */
export function createRedisTokenBucket(options: RedisTokenBucketOptions): RedisTokenBucket {
  const fn = 'createRedisTokenBucket';
  const s = bucketSettings(fn, options, BUCKET_KEYS);
  const link = new RedisLink(s.link);
  const take = script(TAKE_TOKENS);
  const keys = [link.key('bucket')];
  const clock = s.link.clock;
  const sleep = s.link.sleep;
  const lease = new Lease(link, s.leaseMs, s.maxLease, s.leaseTtlMs, (want, late) =>
    link.run(take, keys, [s.capacity, s.rate, s.leaseMs, want], undefined, late),
  );
  const local = fallbackBucket(s);
  // Fill the first lease at once, so the first calls find the shared bucket ready.
  lease.refill(clock());

  /** The fallback episode whose start emptied the local bucket. */
  let drainedFor = 0;
  const decideAlone = (n: number): Result<number, RateLimitError> => {
    // Leased tokens were taken from the fleet: spend them first.
    if (lease.stock >= n) {
      lease.stock -= n;
      return ok(Math.floor(lease.stock));
    }
    // A fallback starts from an empty local bucket: a full one would add a burst per outage.
    const episode = link.counters.fallbacks;
    if (episode !== drainedFor) {
      drainedFor = episode;
      local.tryAcquire(local.available());
    }
    return decideLocally(link, lease, n, s.capacity, () => local.tryAcquire(n));
  };

  const tryAcquire = (n = 1): Result<number, RateLimitError> => {
    const never = checkTokenCount(n, s.capacity);
    if (never !== undefined) return err(never);
    const now = clock();
    if (!link.shared) {
      lease.refill(now);
      return decideAlone(n);
    }
    if (lease.take(n, now)) return ok(Math.floor(lease.stock));
    if (lease.fresh) return decideLocally(link, lease, n, s.capacity, () => local.tryAcquire(n));
    return err(refusal(lease.retryAfterMs(now)));
  };

  return {
    capacity: s.capacity,
    tryAcquire,
    async acquire(n = 1, signal) {
      if (n > s.capacity) throw new RangeError(`n must be <= capacity (${s.capacity}), got ${n}`);
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        const r = tryAcquire(n);
        if (r.ok) return;
        await sleep(r.error.retryAfterMs, signal);
      }
    },
    available() {
      return link.shared ? Math.floor(lease.stock) : local.available();
    },
    linkStats: () => link.stats(),
  };
}
