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
