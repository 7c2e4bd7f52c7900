import { brandError, hasBrand } from './brand.js';

/**
 * An `errorPolicy` threw while judging an operation's error. `errors` holds
 * `[operationError, policyError]`; `cause` is the operation's error.
 */
export class ErrorPolicyError extends AggregateError {
  constructor(operationError: unknown, policyError: unknown) {
    super([operationError, policyError], 'The errorPolicy threw while judging an error', {
      cause: operationError,
    });
    brandError(this, 'ErrorPolicyError');
  }
}

/** True for an {@link ErrorPolicyError} from any copy of Breakwater. */
export function isErrorPolicyError(e: unknown): e is ErrorPolicyError {
  return hasBrand(e, 'ErrorPolicyError');
}
