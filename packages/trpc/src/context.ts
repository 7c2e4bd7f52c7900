import type { Criticality } from '@breakwater/core';

/**
 * Per-call settings the Breakwater links read from `op.context`, set with
 * `client.x.query(input, { context: { idempotent: true, timeoutMs: 500 } })`.
 */
export interface BreakwaterOperationContext {
  /**
   * This call is safe to repeat (`true`) or not (`false`), overriding the
   * link's `idempotent` option. Defaults to the link's option.
   */
  idempotent?: boolean;
  /** Deadline of this call in ms, overriding the link's `timeoutMs`. Defaults to the link's. */
  timeoutMs?: number;
  /** How much this call matters under `concurrency.adaptive`: the lowest tier is refused first. Defaults to `'default'`. */
  criticality?: Criticality;
}

/** Keys every single-purpose link that judges errors takes beside its part's own. @internal (here, in a module importing nothing, so the links' key lists can spread it at load) */
export const PART_EXTRA_KEYS = {
  budget: true,
  idempotent: true,
  classify: true,
  onWarning: true,
  clock: true,
  sleep: true,
  random: true,
} as const;
