import { checkNumber, checkObject, checkOneOf } from '../internal/validate.js';
import { type CircuitBreakerState, type MutableCircuit, newCircuit } from './machine.js';
import type { CircuitBreakerConfig, CircuitBreakerSnapshot } from './types.js';

/** The JSON-safe part of a circuit's state. @internal */
export function toSnapshot(s: CircuitBreakerState): CircuitBreakerSnapshot {
  return {
    state: s.state,
    consecutiveFailures: s.consecutiveFailures,
    openedAt: s.openedAt,
    openDurationMs: s.openDurationMs,
    isolated: s.isolated,
  };
}

/**
 * A circuit restored from a snapshot (validated, naming the bad field). Calls
 * in flight and the failure-rate window do not survive a restore; a restored
 * half-open circuit has all its probe slots free.
 * @internal
 */
export function fromSnapshot(
  snapshot: unknown,
  config: CircuitBreakerConfig,
  now: number,
): MutableCircuit {
  checkObject('initialState', snapshot, false);
  const s = snapshot as Record<string, unknown>;
  const m = newCircuit(config, now);
  m.state = checkOneOf('initialState.state', s.state, ['closed', 'open', 'half-open'] as const);
  m.consecutiveFailures = checkNumber('initialState.consecutiveFailures', s.consecutiveFailures, {
    integer: true,
    min: 0,
  });
  m.openedAt = checkNumber('initialState.openedAt', s.openedAt);
  m.openDurationMs = checkNumber('initialState.openDurationMs', s.openDurationMs, { min: 0 });
  if (typeof s.isolated !== 'boolean') {
    throw new TypeError(`initialState.isolated must be a boolean, got ${String(s.isolated)}`);
  }
  m.isolated = s.isolated;
  if (m.isolated && m.state !== 'open') {
    throw new RangeError(`initialState.isolated needs state 'open', got '${m.state}'`);
  }
  return m;
}
