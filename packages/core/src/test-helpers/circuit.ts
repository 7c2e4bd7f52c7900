/**
 * The breaker settings the state-machine tests of the consecutive rule rely
 * on, given explicitly since 0.2 changed the defaults: a count alone opens
 * the circuit (no span), no failure-rate window, open for 30 s. Spread it
 * first, so a test's own settings win.
 * @internal
 */
export const COUNT_ONLY_CIRCUIT = Object.freeze({
  failureSpanMs: 0,
  window: false,
  openDurationMs: 30_000,
} as const);
