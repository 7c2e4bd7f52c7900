import { brandError, hasBrand } from './brand.js';

/** Client-side adaptive throttling rejected the request locally. */
export class ThrottledError extends Error {
  /** The rejection probability in force when the request was refused. */
  readonly probability: number;

  constructor(probability: number) {
    super(`Request throttled locally (rejection probability ${probability.toFixed(3)})`);
    brandError(this, 'ThrottledError');
    this.probability = probability;
  }
}

/** True for a {@link ThrottledError} from any copy of Breakwater. */
export function isThrottledError(e: unknown): e is ThrottledError {
  return hasBrand(e, 'ThrottledError');
}
