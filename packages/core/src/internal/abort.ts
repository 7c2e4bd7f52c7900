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

type NodeEvents = { setMaxListeners(n: number, ...targets: EventTarget[]): void };
type BuiltinLoader = { getBuiltinModule?(id: string): unknown };

/**
 * Lifts Node's listener-count warning (`MaxListenersExceededWarning`) on a
 * signal that legitimately carries many listeners. Reaches `node:events`
 * through `process.getBuiltinModule` (Node ≥ 20.16) rather than an import, so
 * the main entry bundles for browsers, which have no such warning; where the
 * hook is missing it does nothing.
 * @internal
 */
export function allowUnboundedListeners(signal: AbortSignal): void {
  const loader = (globalThis as { process?: BuiltinLoader }).process;
  const events = loader?.getBuiltinModule?.('node:events') as NodeEvents | undefined;
  events?.setMaxListeners(0, signal);
}

/** A signal that never aborts, for callers that have none. Shared; never allocate per call. */
export const neverAbortedSignal: AbortSignal = new AbortController().signal;
// User code may attach listeners to it per call; it never fires, so no count is a leak.
allowUnboundedListeners(neverAbortedSignal);
