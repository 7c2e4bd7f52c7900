/**
 * How the health registry's rules map onto the one circuit-breaker state
 * machine (configured with `halfOpenMaxCalls: Infinity`, `failureThreshold =
 * failures`, `openDurationMs = reset`). Nothing here decides open/closed on
 * its own: every judgement is a `checkCircuit` call.
 * @internal
 */
import {
  type CircuitBreakerState,
  type CircuitState,
  checkCircuit,
  createCircuitBreakerState,
  recordFailure,
  recordNeutral,
  recordSuccess,
  resetCircuit,
} from '../breaker/index.js';

/** A fresh closed circuit judged by the registry's settings. @internal */
export function newHealthCircuit(failures: number, resetMs: number): CircuitBreakerState {
  return createCircuitBreakerState({
    failureThreshold: failures,
    openDurationMs: resetMs,
    // Every call is let through once the cool-down has passed: the registry has no probe slots.
    halfOpenMaxCalls: Number.POSITIVE_INFINITY,
    backoffMultiplier: 1,
  });
}

/**
 * A failure at `now`. The registry restarts the cool-down on every failure of
 * a streak at or past the threshold (`isOpen = now < lastFailure + reset`),
 * while the machine ignores reports in an open generation. So an open circuit
 * is first brought to the end of its cool-down (half-open), where a failure
 * re-opens it from `now` with the streak kept — the machine's own rule.
 * @internal
 */
export function circuitFailure(c: CircuitBreakerState, now: number): CircuitBreakerState {
  if (c.state === 'open') {
    c = checkCircuit(c, Math.max(now, c.openedAt + c.openDurationMs)).updatedState;
  }
  return recordFailure(c, c.config, now);
}

/**
 * A success that resets the streak: closes the circuit for good. The machine
 * ignores a success reported while open (nothing was admitted), but a registry
 * success always closes, so an open circuit is reset.
 * @internal
 */
export function circuitSuccess(c: CircuitBreakerState, now: number): CircuitBreakerState {
  // Closed with no failures counted: the machine would change nothing; skip the copy.
  if (c.state === 'closed' && c.consecutiveFailures === 0) return c;
  if (c.state === 'open') return resetCircuit(c, now);
  return recordSuccess(c, c.config, now);
}

/** A `keepStreak` success: neutral for the circuit (neither counts nor resets). @internal */
export function circuitNeutral(c: CircuitBreakerState, now: number): CircuitBreakerState {
  return recordNeutral(c, c.config, now);
}

/**
 * Rebuilds the circuit a view with other settings would have, from the shared
 * counts: `streak` failures at `lastFailure` trip it exactly when
 * `streak >= failures`, open until `lastFailure + reset`.
 * @internal
 */
export function circuitFromFacts(
  failures: number,
  resetMs: number,
  streak: number,
  lastFailure: number,
): CircuitBreakerState {
  let c = newHealthCircuit(failures, resetMs);
  // Failures past the threshold only restart a cool-down that starts at lastFailure anyway.
  const n = Math.min(streak, failures);
  for (let i = 0; i < n; i++) c = circuitFailure(c, lastFailure);
  return c;
}

/** The machine's verdict at `now`, without keeping the check's side effects (reads never write). @internal */
export function circuitAt(
  c: CircuitBreakerState,
  now: number,
): { state: CircuitState; retryAfterMs: number } {
  if (c.state === 'closed') return { state: 'closed', retryAfterMs: 0 };
  const { result } = checkCircuit(c, now);
  return { state: result.state, retryAfterMs: result.retryAfterMs };
}

/** Until when the circuit is (or last was) open in the current streak; 0 when it has not opened. @internal */
export function circuitOpenUntil(c: CircuitBreakerState): number {
  return c.state === 'closed' ? 0 : c.openedAt + c.openDurationMs;
}
