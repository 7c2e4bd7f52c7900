import { RateLimitError } from '../errors/rate-limit-error.js';
import { saneClock } from '../internal/sane-clock.js';
import { checkNumber } from '../internal/validate.js';
import { err, ok, type Result } from '../result/result.js';
import type { Clock } from '../time/clock.js';

/**
 * Token-bucket arithmetic shared by the single bucket and the keyed limiter.
 *
 * Tokens are stored as "milli-tokens" (tokens × 1000) so that refilling by
 * `elapsedMs × refillPerSecond` and the wait `deficit / refillPerSecond` stay
 * exact integers for integer rates and millisecond clocks; floating drift
 * would otherwise make a request fail after waiting exactly `retryAfterMs`.
 * @internal
 */
export interface BucketState {
  /** Milli-tokens; negative while blocking `acquire` calls hold reservations. */
  units: number;
  /** Monotonic time of the last refill. */
  last: number;
}

/** Immutable limits of a bucket, in milli-tokens. @internal */
export interface BucketShape {
  /** capacity × 1000. */
  readonly maxUnits: number;
  /** Milli-tokens gained per ms, which equals tokens per second. */
  readonly perMs: number;
}

/** Adds the tokens earned since `state.last`, capped at capacity. @internal */
export function refill(state: BucketState, shape: BucketShape, now: number): void {
  const elapsed = now - state.last;
  if (elapsed > 0) {
    const units = state.units + elapsed * shape.perMs;
    state.units = Math.min(units, shape.maxUnits);
    state.last = now;
  }
}

/** Whole tokens available now (never negative). @internal */
export function wholeTokens(state: BucketState): number {
  return state.units <= 0 ? 0 : Math.floor(state.units / 1000);
}

/**
 * Smallest whole number of ms after which `needUnits` will be available,
 * given no other consumer; `Infinity` when the request exceeds capacity.
 * @internal
 */
export function waitMs(state: BucketState, shape: BucketShape, needUnits: number): number {
  if (needUnits > shape.maxUnits) return Number.POSITIVE_INFINITY;
  const deficit = needUnits - state.units;
  return deficit <= 0 ? 0 : Math.ceil(deficit / shape.perMs);
}

/**
 * A clock that never runs backwards. When the source regresses, the offset
 * grows so time resumes from the last reading: a backwards jump earns no
 * tokens (no refund) and does not freeze refill until wall time catches up.
 * Hostile readings (`NaN`, `±Infinity`, beyond the `Date` range) are ignored
 * (see {@link saneClock}): time stands still for them, so one cannot push the
 * offset to infinity and stop refill for good.
 * @internal
 */
export interface MonotonicClock {
  now(): number;
  /** How many readings went backwards. */
  readonly regressions: number;
}

/** Wraps `clock` in a {@link MonotonicClock}. @internal */
export function monotonic(clock: Clock | undefined): MonotonicClock {
  const read = saneClock(clock);
  let offset = 0;
  let lastReading = Number.NEGATIVE_INFINITY;
  let regressions = 0;
  return {
    now() {
      let t = read() + offset;
      if (t < lastReading) {
        offset += lastReading - t;
        t = lastReading;
        regressions++;
      }
      lastReading = t;
      return t;
    },
    get regressions() {
      return regressions;
    },
  };
}

/** Validates `capacity` and `refillPerSecond` and returns the bucket shape. @internal */
export function bucketShape(capacity: unknown, refillPerSecond: unknown): BucketShape {
  const cap = checkNumber('capacity', capacity, { above: 0 });
  const rate = checkNumber('refillPerSecond', refillPerSecond, { above: 0 });
  return { maxUnits: cap * 1000, perMs: rate };
}

/** Throws a `RangeError` naming `n` unless it is a finite number >= 0. @internal */
export function checkTokens(n: number): void {
  if (!(n >= 0 && n !== Number.POSITIVE_INFINITY)) {
    throw new RangeError(`n must be a finite number of tokens >= 0, got ${String(n)}`);
  }
}

/** Takes `n` tokens from an already refilled bucket, or refuses with the exact wait. @internal */
export function take(
  state: BucketState,
  shape: BucketShape,
  n: number,
): Result<number, RateLimitError> {
  const need = n * 1000;
  if (state.units >= need) {
    state.units -= need;
    return ok(wholeTokens(state));
  }
  return err(new RateLimitError(waitMs(state, shape, need)));
}
