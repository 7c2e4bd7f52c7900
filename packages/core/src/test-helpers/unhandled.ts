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
