import { createKeyedLimiter, err, ok, type RateLimitError, type Result } from '@breakwater/core';
import type { KeyedLimiter, KeyedLimiterStats } from '@breakwater/core/types';
import { Batcher } from './batch.js';
import { Lease, TAKE_TOKENS } from './lease.js';
import { numberOption, RedisLink, type RedisLinkStats, SHARED_KEYS, script } from './link.js';
import {
  bucketSettings,
  checkTokenCount,
  decideLocally,
  type RedisTokenBucketOptions,
  refusal,
} from './token-bucket.js';

/** Options of {@link createRedisKeyedLimiter}. */
export interface RedisKeyedLimiterOptions extends RedisTokenBucketOptions {
  /**
   * Most keys this process keeps a lease for (and the local fallback tracks);
   * the least recently used is forgotten beyond it. The keys in Redis expire
   * on their own once full. Integer >= 1. Defaults to 10000.
   */
  maxKeys?: number;
}

/** A fleet-wide {@link KeyedLimiter} kept in Redis. */
export interface RedisKeyedLimiter extends KeyedLimiter {
  /** Counters of the link to Redis (mode, round trips, fallbacks). */
  linkStats(): RedisLinkStats;
}

const KEYED_KEYS = [
  ...SHARED_KEYS,
  'leaseMs',
  'maxLease',
  'leaseTtlMs',
  'capacity',
  'refillPerSecond',
  'maxKeys',
];

/**
 * Creates a per-key limiter (per user, tenant, IP) shared by every process that
 * uses the same Redis and `name`: each key's bucket holds `capacity` tokens
 * for the whole fleet and refills at `refillPerSecond`. Decisions spend local
 * leases as in {@link createRedisTokenBucket}; the refills of all keys that
 * need one go to Redis together, one script call per event-loop turn (at most
 * one in flight), so thousands of keys cost a few hundred round trips a second.
 * Each key is its own Redis key (its own Cluster slot), so keys spread over a
 * cluster; there, each refill is its own call.
 * @example
 * const perUser = createRedisKeyedLimiter({ client: redis, name: 'per-user', capacity: 20, refillPerSecond: 2 });
 * const r = perUser.tryAcquire(userId);
 */
export function createRedisKeyedLimiter(options: RedisKeyedLimiterOptions): RedisKeyedLimiter {
  const fn = 'createRedisKeyedLimiter';
  const s = bucketSettings(fn, options, KEYED_KEYS);
  const maxKeys = numberOption(fn, 'maxKeys', options.maxKeys, 10_000, 1, {
    inclusive: true,
    integer: true,
  });
  const link = new RedisLink(s.link);
  const take = script(TAKE_TOKENS);
  const head = [s.capacity, s.rate, s.leaseMs];
  // A cluster refuses a script whose keys lie in different slots, and each key
  // has its own slot (see below): there each refill is its own call.
  const cluster = s.link.client.isCluster === true;
  const batcher = cluster ? undefined : new Batcher(link, take, head);
  const clock = s.link.clock;
  const local = createKeyedLimiter({
    capacity: Math.max(1, s.capacity * s.link.localShare),
    refillPerSecond: s.rate * s.link.localShare,
    maxKeys,
    clock,
  });
  // Insertion order is recency order: a touched key is moved to the end.
  const leases = new Map<string, Lease>();
  let evictions = 0;

  const leaseOf = (key: string): Lease => {
    let lease = leases.get(key);
    if (lease !== undefined) {
      leases.delete(key);
    } else {
      // Each user key is its own hash tag, so keys spread over a cluster's slots.
      const redisKey = link.key('key', s.link.name, key);
      const keys = [redisKey];
      lease = new Lease(link, s.leaseMs, s.maxLease, s.leaseTtlMs, (want, late) =>
        batcher === undefined
          ? link.run(take, keys, [...head, want], undefined, late)
          : batcher.ask(redisKey, want, late),
      );
      if (leases.size >= maxKeys) {
        const oldest = leases.keys().next().value as string;
        leases.delete(oldest);
        evictions++;
      }
    }
    leases.set(key, lease);
    return lease;
  };

  return {
    tryAcquire(key, n = 1): Result<number, RateLimitError> {
      const never = checkTokenCount(n, s.capacity);
      if (never !== undefined) return err(never);
      const now = clock();
      const lease = leaseOf(key);
      if (!link.shared) {
        lease.refill(now);
        // Leased tokens were taken from the fleet: spend them first.
        if (lease.stock >= n) {
          lease.stock -= n;
          return ok(Math.floor(lease.stock));
        }
        // A fallback starts each key from an empty local bucket: no burst per outage.
        const episode = link.counters.fallbacks;
        if (lease.drainedFor !== episode) {
          lease.drainedFor = episode;
          local.tryAcquire(key, local.available(key));
        }
        return decideLocally(link, lease, n, s.capacity, () => local.tryAcquire(key, n));
      }
      if (lease.take(n, now)) return ok(Math.floor(lease.stock));
      // A key's first call cannot wait for its first lease: it is decided locally.
      if (lease.fresh) {
        return decideLocally(link, lease, n, s.capacity, () => local.tryAcquire(key, n));
      }
      return err(refusal(lease.retryAfterMs(now)));
    },
    available(key) {
      return link.shared ? Math.floor(leaseOf(key).stock) : local.available(key);
    },
    stats(): KeyedLimiterStats {
      return { size: leases.size, evictions, clockRegressions: local.stats().clockRegressions };
    },
    linkStats: () => link.stats(),
  };
}
