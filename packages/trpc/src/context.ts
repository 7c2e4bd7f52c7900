import type { Criticality } from '@breakwater/core';
import { checkLookalikeKeys, describeValue, keysOf } from '@breakwater/core/internal';

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
  /** `false`: this call inherits nothing from the inbound call it runs under (`@breakwater/trpc/server`). Defaults to inheriting. */
  propagate?: false;
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

const CONTEXT_KEYS = keysOf<BreakwaterOperationContext>()([
  'idempotent',
  'timeoutMs',
  'propagate',
  'criticality',
]);

/**
 * The `TypeError` for a call whose `context` misspells one of our keys
 * (`timeoutMS`: it would be ignored) or gives one a value of the wrong type;
 * `undefined` when the context is fine. Other links' keys (`callId`, …) pass.
 * @internal
 */
export function contextFault(context: object): TypeError | undefined {
  try {
    checkLookalikeKeys(undefined, context, CONTEXT_KEYS, 'context');
  } catch (error) {
    return error as TypeError;
  }
  const { idempotent, timeoutMs } = context as Record<string, unknown>;
  if (idempotent !== undefined && typeof idempotent !== 'boolean') {
    return new TypeError(`context.idempotent must be a boolean, got ${describeValue(idempotent)}`);
  }
  if (timeoutMs !== undefined && typeof timeoutMs !== 'number') {
    return new TypeError(
      `context.timeoutMs must be a number of ms, got ${describeValue(timeoutMs)}`,
    );
  }
  return undefined;
}
