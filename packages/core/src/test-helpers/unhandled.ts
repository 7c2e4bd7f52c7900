import { afterEach, beforeEach } from 'vitest';

/**
 * Collects every unhandled rejection raised while each test runs, so a test can
 * assert that an abandoned operation's late failure was absorbed.
 * @internal
 */
export function trackUnhandledRejections(): { readonly reasons: unknown[] } {
  const state = { reasons: [] as unknown[] };
  const listener = (reason: unknown) => state.reasons.push(reason);
  beforeEach(() => {
    state.reasons = [];
    process.on('unhandledRejection', listener);
  });
  afterEach(() => {
    process.off('unhandledRejection', listener);
  });
  return state;
}

/**
 * Collects every unhandled rejection and uncaught exception raised while each
 * test runs (vitest would report them, but only after the test passed).
 * @internal
 */
export function trackProcessFaults(): { readonly faults: unknown[] } {
  const state = { faults: [] as unknown[] };
  const listener = (reason: unknown) => state.faults.push(reason);
  beforeEach(() => {
    state.faults = [];
    process.on('unhandledRejection', listener);
    process.on('uncaughtException', listener);
  });
  afterEach(() => {
    process.off('unhandledRejection', listener);
    process.off('uncaughtException', listener);
  });
  return state;
}
