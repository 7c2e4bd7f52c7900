import { isCircuitOpenError } from '../errors/circuit-open-error.js';
import { isQueueFullError } from '../errors/queue-full-error.js';
import { isRateLimitError } from '../errors/rate-limit-error.js';
import { isRoutingError } from '../errors/routing-error.js';
import { isThrottledError } from '../errors/throttled-error.js';
import type { ErrorVerdict } from '../retry/verdict.js';
import type { RecentFailures } from './recent-failures.js';

/**
 * The verdict on an answer that carries don't-retry (gRPC pushback `-1`, tRPC
 * `x-breakwater-retry: no`): the server's own downstream is overloaded, so
 * this call is not retried, not failed over, not hedged and neutral for the
 * circuit. @internal
 */
export const DONT_RETRY: ErrorVerdict = Object.freeze({
  retry: false,
  failover: false,
  countForCircuit: false,
  retryAfterMs: -1,
});

/**
 * Whether an outbound call was refused before it reached its downstream: by a
 * circuit, limiter or throttle, or by a router whose every provider's circuit
 * was open.
 */
function refused(error: unknown): boolean {
  if (
    isCircuitOpenError(error) ||
    isQueueFullError(error) ||
    isRateLimitError(error) ||
    isThrottledError(error)
  ) {
    return true;
  }
  return isRoutingError(error) && error.visits.every((v) => v.status === 'skipped');
}

/**
 * Whether an outbound call that failed with `error` (judged `verdict`) ended
 * "overloaded", so the server it ran under answers don't-retry: refused by a
 * circuit, limiter or throttle; told don't-retry by its own server; or stopped
 * while its failure was still retryable (attempts exhausted, budget refused)
 * while most of the stack's recent calls failed too (`recent`) — a downstream
 * that fails only now and then is not overloaded, and the layer above may
 * retry the unlucky call. A failure the request itself caused (not retryable)
 * is not overload. @internal
 */
export function endedOverloaded(
  error: unknown,
  verdict: ErrorVerdict | undefined,
  recent: RecentFailures,
): boolean {
  if (refused(error)) return true;
  if (verdict === undefined) return false;
  if ((verdict.retryAfterMs ?? 0) < 0) return true;
  return verdict.retry !== false && recent.mostlyFailing();
}

/** Whether a failure says something about its downstream's health (for {@link RecentFailures}): refused, or retryable. @internal */
export function downstreamFailed(error: unknown, verdict: ErrorVerdict | undefined): boolean {
  return refused(error) || verdict?.retry !== false;
}
