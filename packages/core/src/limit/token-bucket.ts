import type { RateLimitError } from '../errors/rate-limit-error.js';
import { abortError } from '../internal/abort.js';
import { checkFunction, checkOptions, keysOf } from '../internal/validate.js';
import type { Result } from '../result/result.js';
import type { Clock } from '../time/clock.js';
import { type Sleep, systemSleep } from '../time/sleep.js';
import {
  type BucketState,
  bucketShape,
  checkTokens,
  monotonic,
  refill,
  take,
  waitMs,
  wholeTokens,
} from './bucket.js';

/** Options of {@link createTokenBucket}. */
export interface TokenBucketOptions {
  /** Most tokens the bucket holds; it starts full. Required, > 0. */
  capacity: number;
  /** Tokens added per second, computed lazily from the clock. Required, > 0. */
  refillPerSecond: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** How `acquire` waits. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** Keys of {@link TokenBucketOptions}. @internal */
export const TOKEN_BUCKET_KEYS = keysOf<TokenBucketOptions>()([
  'capacity',
  'refillPerSecond',
  'clock',
  'sleep',
]);

/** A token bucket: bursts up to `capacity`, sustained `refillPerSecond`. */
export interface TokenBucket {
  /**
   * Takes `n` tokens (default 1) now, or refuses without taking any. On
   * success the value is the whole tokens left; on refusal the
   * `RateLimitError.retryAfterMs` is the smallest whole number of ms after
   * which the same request succeeds if nobody else takes tokens, and
   * `Infinity` when `n` exceeds `capacity` (it can never succeed).
   */
  tryAcquire(n?: number): Result<number, RateLimitError>;
  /**
   * Takes `n` tokens (default 1), waiting through `sleep` until they are
   * available. Waiters are served in call order: each reserves its tokens
   * up front (the bucket goes into debt), so `tryAcquire` cannot overtake
   * them. Rejects with the abort error if `signal` aborts, returning its
   * reservation, and with `RangeError` when `n` exceeds `capacity`.
   */
  acquire(n?: number, signal?: AbortSignal): Promise<void>;
  /** Whole tokens available now (0 while waiters hold reservations). */
  available(): number;
  /** The configured capacity. */
  readonly capacity: number;
}

/**
 * Creates a token bucket that refills lazily from the clock: no background
 * timer, O(1) per call.
 * @example
 * const bucket = createTokenBucket({ capacity: 10, refillPerSecond: 5 });
 * const r = bucket.tryAcquire();
 * if (!r.ok) res.setHeader('Retry-After', Math.ceil(r.error.retryAfterMs / 1000));
 */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  checkOptions('createTokenBucket', options, TOKEN_BUCKET_KEYS, '', false);
  const shape = bucketShape(options.capacity, options.refillPerSecond);
  checkFunction('clock', options.clock);
  checkFunction('sleep', options.sleep);
  const time = monotonic(options.clock);
  const sleep = options.sleep ?? systemSleep;
  const state: BucketState = { units: shape.maxUnits, last: time.now() };
  const capacity = options.capacity;

  const refund = (units: number) => {
    state.units = Math.min(shape.maxUnits, state.units + units);
  };

  return {
    capacity,
    tryAcquire(n = 1) {
      checkTokens(n);
      refill(state, shape, time.now());
      return take(state, shape, n);
    },
    async acquire(n = 1, signal) {
      checkTokens(n);
      if (n > capacity) {
        throw new RangeError(`n must be <= capacity (${capacity}), got ${n}`);
      }
      if (signal?.aborted) throw abortError(signal);
      refill(state, shape, time.now());
      const need = n * 1000;
      // Reserve first, then wait out the debt: FIFO among waiters, one sleep each.
      const wait = waitMs(state, shape, need);
      state.units -= need;
      if (wait === 0) return;
      try {
        await sleep(wait, signal);
      } catch (e) {
        refund(need);
        throw e;
      }
      if (signal?.aborted) {
        refund(need);
        throw abortError(signal);
      }
    },
    available() {
      refill(state, shape, time.now());
      return wholeTokens(state);
    },
  };
}
