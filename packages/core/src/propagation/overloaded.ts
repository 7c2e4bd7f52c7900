import { isCircuitOpenError } from '../errors/circuit-open-error.js';
import { isQueueFullError } from '../errors/queue-full-error.js';
import { isRateLimitError } from '../errors/rate-limit-error.js';
import { isThrottledError } from '../errors/throttled-error.js';
import type { ErrorVerdict } from '../retry/verdict.js';

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
 * Whether an outbound call that failed with `error` (judged `verdict`) ended
 * "overloaded", so the server it ran under answers don't-retry: refused by a
 * circuit, limiter or throttle; stopped while its failure was still retryable
 * (attempts exhausted, budget refused); or told don't-retry by its own server.
 * A failure the request itself caused (not retryable) is not overload. @internal
 */
export function endedOverloaded(error: unknown, verdict: ErrorVerdict | undefined): boolean {
  if (
    isCircuitOpenError(error) ||
    isQueueFullError(error) ||
    isRateLimitError(error) ||
    isThrottledError(error)
  ) {
    return true;
  }
  if (verdict === undefined) return false;
  return verdict.retry !== false || (verdict.retryAfterMs ?? 0) < 0;
}
