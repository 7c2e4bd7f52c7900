import { validateCircuitBreakerConfig } from './config.js';
import {
  admit,
  type CircuitBreakerState,
  closeCircuit,
  copyCircuit,
  halfOpenCircuitInPlace,
  isolateCircuitInPlace,
  newCircuit,
  reopenCircuitInPlace,
  retryAfter,
  settle,
} from './machine.js';
import type {
  CallOutcome,
  CircuitBreakerConfig,
  CircuitBreakerSettings,
  CircuitState,
} from './types.js';

/** What {@link checkCircuit} decided. */
export interface CircuitCheckResult {
  /** True when the call may run. */
  readonly admitted: boolean;
  /** True when the call runs as a half-open probe. */
  readonly probe: boolean;
  /** Permit to report the outcome with (generation and probe bit in one number); -1 when refused. */
  readonly permit: number;
  /** Generation that admitted (or refused) the call; pass it back when recording. */
  readonly generation: number;
  /** Milliseconds until a call may be admitted; 0 when admitted. */
  readonly retryAfterMs: number;
  /** State after the check (it may have moved from open to half-open). */
  readonly state: CircuitState;
}

/** Where an outcome belongs and how long the call took. */
export interface CircuitRecordOptions {
  /** Generation that admitted the call. Defaults to the current generation. */
  generation?: number;
  /** Duration of the call in ms, for the slow-call rule. Defaults to unknown (never slow). */
  durationMs?: number;
}

/**
 * A new closed circuit. `config` is validated and completed with the defaults
 * (the checks `createCircuitBreaker` makes); the state keeps it.
 * @example
 * let circuit = createCircuitBreakerState({ failureThreshold: 3 });
 */
export function createCircuitBreakerState(
  config: CircuitBreakerSettings = {},
  now = 0,
): CircuitBreakerState {
  return newCircuit(validateCircuitBreakerConfig(config), now);
}

/**
 * The admission check at `now`: moves an open circuit whose cool-down has run
 * out to half-open, and takes a probe slot when it admits a half-open call.
 * @example
 * const { result, updatedState } = checkCircuit(circuit, systemClock());
 */
export function checkCircuit(
  state: CircuitBreakerState,
  now: number,
): {
  /** What the check decided. */
  result: CircuitCheckResult;
  /** The circuit after the check; `state` itself is left unchanged. */
  updatedState: CircuitBreakerState;
} {
  const m = copyCircuit(state);
  const clock = () => now;
  const permit = admit(m, clock);
  const result: CircuitCheckResult = {
    admitted: permit >= 0,
    probe: permit >= 0 && permit % 2 === 1,
    permit,
    generation: m.generation,
    retryAfterMs: permit >= 0 ? 0 : retryAfter(m, clock),
    state: m.state,
  };
  return { result, updatedState: m };
}

function record(
  state: CircuitBreakerState,
  config: CircuitBreakerConfig,
  now: number,
  outcome: CallOutcome,
  options: CircuitRecordOptions | undefined,
): CircuitBreakerState {
  const m = copyCircuit(state);
  m.config = config;
  settle(m, () => now, options?.generation ?? m.generation, outcome, options?.durationMs);
  return m;
}

/**
 * Records a success. `config` should be the one the state was created with
 * (`state.config`). Without `options.generation` the outcome belongs to the
 * current generation.
 */
export function recordSuccess(
  state: CircuitBreakerState,
  config: CircuitBreakerConfig,
  now: number,
  options?: CircuitRecordOptions,
): CircuitBreakerState {
  return record(state, config, now, 'success', options);
}

/** Records a counted failure; may open (or re-open) the circuit. */
export function recordFailure(
  state: CircuitBreakerState,
  config: CircuitBreakerConfig,
  now: number,
  options?: CircuitRecordOptions,
): CircuitBreakerState {
  return record(state, config, now, 'failure', options);
}

/**
 * Records a neutral outcome (cancellation, an error the classifier excludes):
 * nothing is counted or reset, but a half-open probe gives its slot back.
 */
export function recordNeutral(
  state: CircuitBreakerState,
  config: CircuitBreakerConfig,
  now: number,
  options?: CircuitRecordOptions,
): CircuitBreakerState {
  return record(state, config, now, 'neutral', options);
}

/**
 * Moves an open circuit to half-open at `now`, without waiting out the
 * cool-down (a health signal says the upstream answers again); a circuit that
 * is closed, half-open or isolated is returned unchanged.
 */
export function halfOpenCircuit(state: CircuitBreakerState, now: number): CircuitBreakerState {
  if (state.state !== 'open' || state.isolated) return state;
  const m = copyCircuit(state);
  halfOpenCircuitInPlace(m, now);
  return m;
}

/** Forces the circuit open (refusing everything) until {@link resetCircuit}. */
export function isolateCircuit(state: CircuitBreakerState, now: number): CircuitBreakerState {
  const m = copyCircuit(state);
  isolateCircuitInPlace(m, now);
  return m;
}

/**
 * Restarts the cool-down of an open circuit from `now`: for a counted failure
 * seen while open, which {@link recordFailure} ignores (nothing is admitted
 * in an open generation). The streak grows by one, the open duration stays
 * (no backoff: it was no failed probe), and the generation moves on. A
 * circuit that is closed, half-open or isolated is returned unchanged.
 * Used by the health registry, whose failures restart the cool-down.
 * @internal
 */
export function reopenCircuit(state: CircuitBreakerState, now: number): CircuitBreakerState {
  if (state.state !== 'open' || state.isolated) return state;
  const m = copyCircuit(state);
  reopenCircuitInPlace(m, now);
  return m;
}

/** Closes the circuit and clears its counters, window and backoff. */
export function resetCircuit(state: CircuitBreakerState, now: number): CircuitBreakerState {
  const m = copyCircuit(state);
  closeCircuit(m, now);
  return m;
}
