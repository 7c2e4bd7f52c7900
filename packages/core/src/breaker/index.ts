// @breakwater/core/breaker — the pure circuit-breaker API: immutable functions
// over a state value, for circuits kept in your own structures or for testing
// the rules. `createCircuitBreaker` (root) is the stateful breaker built on them.

export {
  type CircuitCheckResult,
  type CircuitRecordOptions,
  checkCircuit,
  createCircuitBreakerState,
  halfOpenCircuit,
  isolateCircuit,
  recordFailure,
  recordNeutral,
  recordSuccess,
  resetCircuit,
} from './circuit-state.js';
export { type CircuitBreakerState, isProbePermit } from './machine.js';
export type {
  CircuitBreakerSnapshot,
  CircuitRejection,
  CircuitStateChange,
  FailureRateWindow,
  SlowCallRule,
} from './types.js';
