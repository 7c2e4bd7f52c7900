import { checkOptions, keysOf, optionalNumber } from '../internal/validate.js';
import { RecentFailures } from './recent-failures.js';

/** Inheritance from the inbound call: `propagate` of `ResilienceOptions`. */
export interface PropagateOptions {
  /** Time kept back from the inbound deadline for the answer to travel back, in ms (>= 0). Defaults to 5. */
  marginMs?: number;
}

/** The margin kept back from the inbound deadline when none is given, in ms. */
export const DEFAULT_PROPAGATE_MARGIN_MS = 5;

const PROPAGATE_KEYS = keysOf<PropagateOptions>()(['marginMs']);

/** `propagate` of a stack, validated. @internal */
export interface PropagatePlan {
  readonly marginMs: number;
  /** The stack's latest outbound calls under bound handlers: the overload rule reads them. */
  readonly recent: RecentFailures;
}

/** Validates the `propagate` option: on by default, `false` turns it off. @internal */
export function resolvePropagate(
  value: PropagateOptions | false | undefined,
): PropagatePlan | undefined {
  if (value === false) return undefined;
  if (value === undefined) {
    return { marginMs: DEFAULT_PROPAGATE_MARGIN_MS, recent: new RecentFailures() };
  }
  checkOptions(undefined, value, PROPAGATE_KEYS, 'propagate', false);
  return {
    marginMs: optionalNumber('propagate.marginMs', value.marginMs, DEFAULT_PROPAGATE_MARGIN_MS, {
      min: 0,
    }),
    recent: new RecentFailures(),
  };
}
