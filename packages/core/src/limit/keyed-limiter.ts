import { LruMap } from '../cache/lru-map.js';
import type { RateLimitError } from '../errors/rate-limit-error.js';
import { checkFunction, checkNumber, checkOptions, keysOf } from '../internal/validate.js';
import type { Result } from '../result/result.js';
import type { Clock } from '../time/clock.js';
import {
  type BucketState,
  bucketShape,
  checkTokens,
  monotonic,
  refill,
  take,
  wholeTokens,
} from './bucket.js';

/** Options of {@link createKeyedLimiter}. */
export interface KeyedLimiterOptions {
  /** Most tokens each key's bucket holds; a new key starts full. Required, > 0. */
  capacity: number;
  /** Tokens added to each key's bucket per second. Required, > 0. */
  refillPerSecond: number;
  /**
   * Most keys tracked; the least recently used key is forgotten beyond it
   * (and starts full if it returns). Defaults to 10000.
   */
  maxKeys?: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link KeyedLimiterOptions}. @internal */
export const KEYED_LIMITER_KEYS = keysOf<KeyedLimiterOptions>()([
  'capacity',
  'refillPerSecond',
  'maxKeys',
  'clock',
]);

/** Counters of a {@link KeyedLimiter}. */
export interface KeyedLimiterStats {
  /** Keys tracked now (never more than `maxKeys`). */
  size: number;
  /** Keys forgotten to stay within `maxKeys`. */
  evictions: number;
  /** Clock readings that went backwards (they earned no tokens). */
  clockRegressions: number;
}

/**
 * A token bucket per string key (per user, tenant, IP), in a bounded LRU.
 *
 * There is deliberately no blocking `acquire`: a waiter's key could be
 * evicted while it sleeps, and the key would come back with a fresh full
 * bucket, splitting one key's budget in two. Callers refuse or retry after
 * `retryAfterMs` instead.
 */
export interface KeyedLimiter {
  /**
   * Takes `n` tokens (default 1) from `key`'s bucket, creating it full if
   * unknown and marking it most recently used. Fails with `RateLimitError`
   * (`retryAfterMs` as for `createTokenBucket`, `Infinity` when `n > capacity`).
   */
  tryAcquire(key: string, n?: number): Result<number, RateLimitError>;
  /** Whole tokens `key` has now; creates the key (full) or marks it most recently used. */
  available(key: string): number;
  /** A snapshot of the counters. */
  stats(): KeyedLimiterStats;
}

/**
 * Creates a per-key rate limiter. Each call is O(1): the registry is a `Map`
 * plus a linked list in least-recently-used order.
 * @example
 * const perUser = createKeyedLimiter({ capacity: 20, refillPerSecond: 2 });
 * const r = perUser.tryAcquire(userId);
 * if (!r.ok) throw r.error;
 */
export function createKeyedLimiter(options: KeyedLimiterOptions): KeyedLimiter {
  checkOptions('createKeyedLimiter', options, KEYED_LIMITER_KEYS, '', false);
  const shape = bucketShape(options.capacity, options.refillPerSecond);
  const maxKeys =
    options.maxKeys === undefined
      ? 10_000
      : checkNumber('maxKeys', options.maxKeys, { min: 1, integer: true });
  checkFunction('clock', options.clock);
  const time = monotonic(options.clock);
  const buckets = new LruMap<string, BucketState>(maxKeys);
  let evictions = 0;

  /** Finds or creates `key`'s bucket, refilled to `now` and marked most recently used. */
  const touch = (key: string, now: number): BucketState => {
    let state = buckets.get(key);
    if (state === undefined) {
      state = { units: shape.maxUnits, last: now };
      if (buckets.set(key, state)) evictions++;
    } else {
      refill(state, shape, now);
    }
    return state;
  };

  return {
    tryAcquire(key, n = 1) {
      checkTokens(n);
      const state = touch(key, time.now());
      return take(state, shape, n);
    },
    available(key) {
      return wholeTokens(touch(key, time.now()));
    },
    stats() {
      return { size: buckets.size, evictions, clockRegressions: time.regressions };
    },
  };
}
