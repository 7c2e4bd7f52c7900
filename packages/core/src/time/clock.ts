/**
 * A source of the current time in epoch milliseconds.
 *
 * Every primitive that reads time takes a `clock` option so tests can drive it
 * with {@link createManualClock} instead of sleeping.
 */
export type Clock = () => number;

/** The wall clock: `Date.now()`. The only place in Breakwater that reads it. */
export const systemClock: Clock = () => Date.now();

// Node's global `performance` is a getter: taken once, not on every read.
const perf = globalThis.performance;

/**
 * A monotonic clock with sub-millisecond resolution: `performance.now()`.
 * The host timer's deadlines and, unless a stack is given a `clock`, its
 * telemetry durations read it.
 */
export const monotonicClock: Clock = () => perf.now();

/**
 * The last wall-clock reading of {@link systemTimeAt}, and the monotonic
 * reading it was paired with. An object, not two variables: its `wall` field
 * also holds `undefined`, so it keeps the clock's number as it is and hands
 * that same number out (a field or variable of numbers only boxes each one
 * it hands out afresh).
 */
const lastWall: { wall: number | undefined; monotonicAt: number } = {
  wall: undefined,
  monotonicAt: Number.NEGATIVE_INFINITY,
};

/**
 * The {@link systemClock} time at `monotonicNow`, a {@link monotonicClock}
 * reading just taken: the last wall-clock reading while it is less than 1 ms
 * of monotonic time old, else a new one. `Date.now()` counts whole
 * milliseconds, so its reading is up to 1 ms behind already; this one is up
 * to 2 ms behind. A caller that holds a monotonic reading gets the wall time
 * for coarse uses (the time of a breaker's outcome) without a second clock
 * read per call when calls come faster than one a millisecond.
 * @internal
 */
export function systemTimeAt(monotonicNow: number): number {
  const last = lastWall;
  const since = monotonicNow - last.monotonicAt;
  const wall = last.wall;
  if (wall !== undefined && since >= 0 && since < 1) return wall;
  const now = systemClock();
  last.wall = now;
  last.monotonicAt = monotonicNow;
  return now;
}
