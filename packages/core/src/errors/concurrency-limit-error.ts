import type { Criticality } from '../limit/criticality.js';
import { brandError, hasBrand } from './brand.js';

/**
 * An adaptive concurrency limit refused the call: its target already runs as
 * many calls as it answers without queueing, or as many as the call's
 * criticality may use. Nothing was sent; retrying on the same target at once
 * would be refused too (a router fails over to another provider).
 */
export class ConcurrencyLimitError extends Error {
  /** The limit when the call was refused. */
  readonly limit: number;
  /** Calls in flight when the call was refused. */
  readonly inFlight: number;
  /** The refused call's criticality. */
  readonly criticality: Criticality;

  constructor(
    limit: number,
    inFlight: number,
    criticality: Criticality,
    options?: {
      /** Replaces the default message. Defaults to one naming the limit, the calls in flight and the criticality. */
      message?: string;
    },
  ) {
    super(
      options?.message ??
        `Concurrency limit reached (limit ${limit}, ${inFlight} in flight, ${criticality} call)`,
    );
    brandError(this, 'ConcurrencyLimitError');
    this.limit = limit;
    this.inFlight = inFlight;
    this.criticality = criticality;
  }
}

/** True for a {@link ConcurrencyLimitError} from any copy of Breakwater. */
export function isConcurrencyLimitError(e: unknown): e is ConcurrencyLimitError {
  return hasBrand(e, 'ConcurrencyLimitError');
}
