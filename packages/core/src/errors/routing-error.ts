import { brandError, hasBrand } from './brand.js';

/**
 * Why the router passed over a provider without running the operation on it:
 * its circuit is open, its one recovery probe is out, or its adaptive
 * concurrency limit (`concurrency.adaptive`) is full for the call's criticality.
 */
export type RoutingSkipReason = 'circuit-open' | 'probe-busy' | 'concurrency-limit';

/** One entry of a routing traversal: a provider that failed, or one that was skipped. */
export type RoutingVisit =
  | {
      /** The provider's id. */
      providerId: string;
      /** The operation ran on this provider and its last attempt failed. */
      status: 'failed';
      /** The provider's final error. */
      cause: unknown;
    }
  | {
      /** The provider's id. */
      providerId: string;
      /** The router did not run the operation on this provider. */
      status: 'skipped';
      /** Why it was passed over. */
      reason: RoutingSkipReason;
    };

/**
 * Every candidate provider failed or was skipped. `visits` is the ordered
 * history of the traversal; `errors` holds the operation failures only (no
 * skips), in the same order; `cause` is the last operation failure, if any.
 */
export class RoutingError extends AggregateError {
  /** What happened at each provider, in traversal order. */
  readonly visits: readonly RoutingVisit[];

  constructor(visits: readonly RoutingVisit[]) {
    const errors: unknown[] = [];
    let failed = 0;
    for (const v of visits) {
      if (v.status === 'failed') {
        errors.push(v.cause);
        failed++;
      }
    }
    const skipped = visits.length - failed;
    super(
      errors,
      `No provider succeeded (${failed} failed, ${skipped} skipped)`,
      failed > 0 ? { cause: errors[errors.length - 1] } : undefined,
    );
    brandError(this, 'RoutingError');
    this.visits = visits;
  }
}

/** True for a {@link RoutingError} from any copy of Breakwater. */
export function isRoutingError(e: unknown): e is RoutingError {
  return hasBrand(e, 'RoutingError');
}
