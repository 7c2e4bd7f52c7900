import { OperationAbortedError } from '../errors/operation-aborted-error.js';

/**
 * The error a call rejects with when `signal` aborted: its reason when that is
 * an `Error` (so an enclosing deadline's error passes through unchanged), else
 * an {@link OperationAbortedError} with the reason as `cause`.
 * @internal
 */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new OperationAbortedError(reason === undefined ? undefined : { cause: reason });
}

/** A signal that never aborts, for callers that have none. Shared; never allocate per call. */
export const neverAbortedSignal: AbortSignal = new AbortController().signal;
