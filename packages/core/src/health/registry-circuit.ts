/**
 * How the health registry's rules map onto the one circuit-breaker state
 * machine (configured with `halfOpenMaxCalls: Infinity`, `failureThreshold =
 * failures`, `openDurationMs = reset`). Nothing here re-implements the
 * machine: whether a non-closed circuit refuses is always a `checkCircuit` call.
 * @internal
 */

import {
  checkCircuit,
  createCircuitBreakerState,
  recordFailure,
  recordNeutral,
  recordSuccess,
  reopenCircuit,
  resetCircuit,
} from '../breaker/circuit-state.js';
import type { CircuitBreakerState } from '../breaker/machine.js';
import type { CircuitState } from '../breaker/types.js';
import type { Clock } from '../time/clock.js';

/** A fresh closed circuit judged by the registry's settings. @internal */
export function newHealthCircuit(failures: number, resetMs: number): CircuitBreakerState {
  return createCircuitBreakerState({
    failureThreshold: failures,
    openDurationMs: resetMs,
    // Every call is let through once the cool-down has passed: the registry has no probe slots.
    halfOpenMaxCalls: Number.POSITIVE_INFINITY,
    backoffMultiplier: 1,
    // A streak alone: the registry rebuilds a view's circuit from (streak, lastFailure),
    // which a span or a window could not be rebuilt from.
    failureSpanMs: 0,
    window: false,
  });
}

/**
 * A failure at `now`. The registry restarts the cool-down on every failure of
 * a streak at or past the threshold (`isOpen = now < lastFailure + reset`),
 * while the machine ignores reports in an open generation: an open circuit is
 * re-opened from `now` with the streak kept (`reopenCircuit`).
 * @internal
 */
export function circuitFailure(c: CircuitBreakerState, now: number): CircuitBreakerState {
  return c.state === 'open' ? reopenCircuit(c, now) : recordFailure(c, c.config, now);
}

/**
 * A success that resets the streak: closes the circuit for good. The machine
 * ignores a success reported while open (nothing was admitted), but a registry
 * success always closes, so an open circuit is reset.
 * @internal
 */
export function circuitSuccess(c: CircuitBreakerState, now: number): CircuitBreakerState {
  if (c.state === 'open') return resetCircuit(c, now);
  return recordSuccess(c, c.config, now);
}

/** A `keepStreak` success: neutral for the circuit (neither counts nor resets). @internal */
export function circuitNeutral(c: CircuitBreakerState, now: number): CircuitBreakerState {
  return recordNeutral(c, c.config, now);
}

/** What the registry reports to the circuits of an entry. @internal */
export type HealthOutcome = 'success' | 'failure' | 'neutral';

/**
 * Applies one registry outcome to a circuit. The clock is read only when the
 * machine has something to change, so the common success on a healthy
 * provider costs no clock read and no copy.
 * @internal
 */
export function applyOutcome(
  c: CircuitBreakerState,
  outcome: HealthOutcome,
  clock: Clock,
): CircuitBreakerState {
  if (outcome === 'failure') return circuitFailure(c, clock());
  if (outcome === 'success') {
    // Closed with no failures counted: the machine would change nothing.
    return c.state === 'closed' && c.consecutiveFailures === 0 ? c : circuitSuccess(c, clock());
  }
  // Neutral only gives back a half-open probe slot; elsewhere the machine changes nothing.
  return c.state === 'half-open' ? circuitNeutral(c, clock()) : c;
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

const CLOSED = Object.freeze({ state: 'closed' as CircuitState, retryAfterMs: 0 });

/** The machine's verdict at `now`, without keeping the check's side effects (reads never write). @internal */
export function circuitAt(
  c: CircuitBreakerState | undefined,
  now: number,
): { readonly state: CircuitState; readonly retryAfterMs: number } {
  // A closed circuit admits everything: no need to copy the state for a check.
  if (c === undefined || c.state === 'closed') return CLOSED;
  const { result } = checkCircuit(c, now);
  return { state: result.state, retryAfterMs: result.retryAfterMs };
}

/** Until when the circuit is (or last was) open in the current streak; 0 when it has not opened. @internal */
export function circuitOpenUntil(c: CircuitBreakerState): number {
  return c.state === 'closed' ? 0 : c.openedAt + c.openDurationMs;
}
