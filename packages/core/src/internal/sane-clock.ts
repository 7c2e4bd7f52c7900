import { type Clock, systemClock } from '../time/clock.js';

/**
 * Largest clock reading, in absolute value, that Breakwater believes: the
 * range of an ECMAScript `Date` (±100 000 000 days from the epoch). A reading
 * outside it (or `NaN`, `±Infinity`) cannot be a time, and one such reading
 * must not poison state that keeps times (a bucket's last refill, a circuit's
 * `openedAt`) for good.
 * @internal
 */
export const MAX_CLOCK_READING_MS = 8.64e15;

/** True for a reading a clock could really give: finite and within the `Date` range. @internal */
export function isSaneReading(t: number): boolean {
  // NaN fails both comparisons.
  return t >= -MAX_CLOCK_READING_MS && t <= MAX_CLOCK_READING_MS;
}

/**
 * `clock` with hostile readings (non-finite or outside the `Date` range)
 * replaced by the last sane one (0 before any), so time simply stands still
 * for that reading and moves on with the next sane one. `systemClock` (or no
 * clock) is returned as is: the wall clock is always in range, and the hot paths
 * that read it pay nothing.
 * @internal
 */
export function saneClock(clock: Clock | undefined): Clock {
  if (clock === undefined || clock === systemClock) return systemClock;
  let last = 0;
  return () => {
    const t = clock();
    if (isSaneReading(t)) last = t;
    return last;
  };
}
