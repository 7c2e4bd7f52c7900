import { setMaxListeners } from 'node:events';
import { OperationAbortedError } from '../errors/operation-aborted-error.js';

/**
 * The error a call rejects with when `signal` aborted: its reason when that is
 * an `Error` the caller chose (so an enclosing deadline's error passes through
 * unchanged), else an {@link OperationAbortedError} with the reason as `cause`.
 *
 * A bare `controller.abort()` gives the platform's default reason, a
 * `DOMException` named `AbortError`. That is cancellation with no reason given,
 * so it becomes an `OperationAbortedError` too: passing it through would let an
 * outer classifier mistake the caller's cancellation for a timeout and retry it.
 * @internal
 */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && !isDefaultAbortReason(reason)) return reason;
  return new OperationAbortedError(reason === undefined ? undefined : { cause: reason });
}

function isDefaultAbortReason(reason: Error): boolean {
  return (
    reason.name === 'AbortError' &&
    typeof DOMException !== 'undefined' &&
    reason instanceof DOMException
  );
}

/** A signal that never aborts, for callers that have none. Shared; never allocate per call. */
export const neverAbortedSignal: AbortSignal = new AbortController().signal;
// User code may attach listeners to it per call; it never fires, so no count is a leak.
setMaxListeners(0, neverAbortedSignal);
