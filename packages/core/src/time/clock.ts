/**
 * A source of the current time in epoch milliseconds.
 *
 * Every primitive that reads time takes a `clock` option so tests can drive it
 * with {@link createManualClock} instead of sleeping.
 */
export type Clock = () => number;

/** The wall clock: `Date.now()`. The only place in Breakwater that reads it. */
export const systemClock: Clock = () => Date.now();
