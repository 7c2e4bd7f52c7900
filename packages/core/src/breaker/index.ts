// The one circuit-breaker state machine (SPEC §2): stateful breaker first, pure API below.

export { createCircuitBreaker } from './circuit-breaker.js';
export {
  type CircuitCheckResult,
  type CircuitRecordOptions,
  checkCircuit,
  createCircuitBreakerState,
  isolateCircuit,
  recordFailure,
  recordNeutral,
  recordSuccess,
  resetCircuit,
} from './circuit-state.js';
export { getDefaultCircuitBreakerConfig, validateCircuitBreakerConfig } from './config.js';
export type { CircuitBreakerState } from './machine.js';
export type {
  CallOutcome,
  CircuitBreaker,
  CircuitBreakerConfig,
  CircuitBreakerOptions,
  CircuitBreakerSnapshot,
  CircuitRejection,
  CircuitState,
  CircuitStateChange,
  FailureRateWindow,
  SlowCallRule,
} from './types.js';
export type { RateWindowState } from './window.js';
