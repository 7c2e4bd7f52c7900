import { ThrottledError } from '../errors/throttled-error.js';
import { EventEmitter, type Subscribe } from '../internal/events.js';
import { saneClock } from '../internal/sane-clock.js';
import { checkFunction, checkOptions, keysOf, optionalNumber } from '../internal/validate.js';
import { err, ok, type Result } from '../result/result.js';
import type { Clock } from '../time/clock.js';
import { type RandomSource, systemRandom } from '../time/random.js';

/** Modulo that stays non-negative for clocks before the epoch. */
const mod = (a: number, b: number) => ((a % b) + b) % b;

/** Options of {@link createAdaptiveThrottle}. */
export interface AdaptiveThrottleOptions {
  /**
   * How many requests per backend accept are let through before local
   * rejection starts; lower is more aggressive. Defaults to 2.
   */
  k?: number;
  /** Length of the sliding window the counts cover, in ms. Defaults to 120000. */
  windowMs?: number;
  /**
   * Buckets the window is split into; a count leaves the window between
   * `windowMs − windowMs / buckets` and `windowMs` after it was recorded. Defaults to 12.
   */
  buckets?: number;
  /**
   * Whether an error thrown through `execute` means the backend rejected the
   * request (overload, unavailable) rather than handled it. Defaults to every error.
   */
  isRejection?: (error: unknown) => boolean;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Random source for the rejection draw. Defaults to `systemRandom`. */
  random?: RandomSource;
}

/** Keys of {@link AdaptiveThrottleOptions}. @internal */
export const ADAPTIVE_THROTTLE_KEYS = keysOf<AdaptiveThrottleOptions>()([
  'k',
  'windowMs',
  'buckets',
  'isRejection',
  'clock',
  'random',
]);

/** Counts of an {@link AdaptiveThrottle} over its current window. */
export interface AdaptiveThrottleStats {
  /** Requests attempted in the window, locally rejected ones included. */
  requests: number;
  /** Requests the backend accepted in the window. */
  accepts: number;
  /** The current rejection probability. */
  probability: number;
  /** Requests rejected locally since creation. */
  throttled: number;
}

/** Emitted when a request is rejected locally. */
export interface ThrottleRejectEvent {
  /** The rejection probability that was in force. */
  probability: number;
}

/**
 * Client-side adaptive throttling (Google SRE book, "Handling Overload"):
 * when the backend accepts too few requests, reject a share of new ones
 * locally with probability `max(0, (requests − k × accepts) / (requests + 1))`.
 *
 * Reporting: call `tryAcquire()` before each request (it counts the
 * request, refused or not). When the backend *handled* the request — a
 * success, or an error that proves it did the work, such as not-found or
 * invalid-argument — call `recordResult(true)` (or `recordAccept()`). When
 * the backend refused it (overloaded, unavailable, rate limited, timed out),
 * call `recordResult(false)` or nothing at all.
 */
export interface AdaptiveThrottle {
  /** Counts a request and decides, with the current probability, whether to let it through. */
  tryAcquire(): Result<void, ThrottledError>;
  /** Counts a backend accept. */
  recordAccept(): void;
  /** Counts a backend accept when `accepted` is true; a rejection needs no count. */
  recordResult(accepted: boolean): void;
  /**
   * Runs `fn` unless throttled (then rejects with `ThrottledError` without
   * running it), and records an accept unless `fn` fails with an error
   * that `isRejection` classifies as a backend rejection.
   */
  execute<T>(fn: () => T | PromiseLike<T>): Promise<T>;
  /** The rejection probability now. */
  probability(): number;
  /** Subscribes to local rejections. */
  readonly onReject: Subscribe<ThrottleRejectEvent>;
  /** A snapshot of the window's counts. */
  stats(): AdaptiveThrottleStats;
}

/**
 * Creates an adaptive throttle. Counters live in a ring of `buckets` time
 * slices advanced lazily from the clock; no timers.
 * @example
 * const throttle = createAdaptiveThrottle({ isRejection: (e) => isUnavailable(e) });
 * const user = await throttle.execute(() => client.getUser({ id }));
 */
export function createAdaptiveThrottle(options: AdaptiveThrottleOptions = {}): AdaptiveThrottle {
  checkOptions('createAdaptiveThrottle', options, ADAPTIVE_THROTTLE_KEYS);
  const k = optionalNumber('k', options.k, 2, { min: 1 });
  const windowMs = optionalNumber('windowMs', options.windowMs, 120_000, { above: 0 });
  const buckets = optionalNumber('buckets', options.buckets, 12, { min: 1, integer: true });
  checkFunction('isRejection', options.isRejection);
  checkFunction('clock', options.clock);
  checkFunction('random', options.random);
  const isRejection = options.isRejection ?? (() => true);
  const clock = saneClock(options.clock);
  const random = options.random ?? systemRandom;
  const sliceMs = windowMs / buckets;

  const sliceRequests = new Float64Array(buckets);
  const sliceAccepts = new Float64Array(buckets);
  let requests = 0;
  let accepts = 0;
  let throttled = 0;
  // Index of the newest slice (time / sliceMs); a backwards clock keeps counting into it.
  let epoch = Math.floor(clock() / sliceMs);
  const rejects = new EventEmitter<ThrottleRejectEvent>();

  /** Moves the ring to now, dropping slices that left the window. */
  const advance = (): number => {
    const now = Math.floor(clock() / sliceMs);
    if (now > epoch) {
      const steps = Math.min(now - epoch, buckets);
      for (let i = 1; i <= steps; i++) {
        const slot = mod(epoch + i, buckets);
        requests -= sliceRequests[slot] as number;
        accepts -= sliceAccepts[slot] as number;
        sliceRequests[slot] = 0;
        sliceAccepts[slot] = 0;
      }
      epoch = now;
    }
    return mod(epoch, buckets);
  };

  const current = () => Math.max(0, (requests - k * accepts) / (requests + 1));

  const throttle: AdaptiveThrottle = {
    tryAcquire() {
      const slot = advance();
      const p = current();
      sliceRequests[slot] = (sliceRequests[slot] as number) + 1;
      requests++;
      if (p > 0 && random() < p) {
        throttled++;
        if (rejects.active) rejects.emit({ probability: p });
        return err(new ThrottledError(p));
      }
      return ok(undefined);
    },
    recordAccept() {
      const slot = advance();
      sliceAccepts[slot] = (sliceAccepts[slot] as number) + 1;
      accepts++;
    },
    recordResult(accepted) {
      if (accepted) throttle.recordAccept();
    },
    async execute(fn) {
      const admitted = throttle.tryAcquire();
      if (!admitted.ok) throw admitted.error;
      try {
        const value = await fn();
        throttle.recordAccept();
        return value;
      } catch (e) {
        if (!isRejection(e)) throttle.recordAccept();
        throw e;
      }
    },
    probability() {
      advance();
      return current();
    },
    onReject: rejects.on,
    stats() {
      advance();
      return { requests, accepts, probability: current(), throttled };
    },
  };
  return throttle;
}
