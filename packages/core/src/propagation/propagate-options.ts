import { checkOptions, type KnownKeys, optionalNumber } from '../internal/validate.js';

/** Inheritance from the inbound call: `propagate` of `ResilienceOptions`. */
export interface PropagateOptions {
  /** Time kept back from the inbound deadline for the answer to travel back, in ms (>= 0). Defaults to 5. */
  marginMs?: number;
}

/** The margin kept back from the inbound deadline when none is given, in ms. */
export const DEFAULT_PROPAGATE_MARGIN_MS = 5;

const PROPAGATE_KEYS = { marginMs: true } as const satisfies KnownKeys<PropagateOptions>;

/** `propagate` of a stack, validated. @internal */
export interface PropagatePlan {
  readonly marginMs: number;
}

const DEFAULT_PLAN: PropagatePlan = Object.freeze({ marginMs: DEFAULT_PROPAGATE_MARGIN_MS });

/** Validates the `propagate` option: on by default, `false` turns it off. @internal */
export function resolvePropagate(
  value: PropagateOptions | false | undefined,
): PropagatePlan | undefined {
  if (value === false) return undefined;
  if (value === undefined) return DEFAULT_PLAN;
  checkOptions(undefined, value, PROPAGATE_KEYS, 'propagate', false);
  return {
    marginMs: optionalNumber('propagate.marginMs', value.marginMs, DEFAULT_PROPAGATE_MARGIN_MS, {
      min: 0,
    }),
  };
}
