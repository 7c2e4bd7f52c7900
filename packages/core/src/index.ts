// @breakwater/core — the public API. Two parts: "for users" (what an
// application calls and names) and "for adapter authors" (what a framework
// adapter plugs into). The long tail lives behind subpaths:
//   @breakwater/core/breaker   the pure circuit-breaker functions over a state value
//   @breakwater/core/health    readiness rules, probe combinators and health detail types
//   @breakwater/core/time      clocks, sleep, randomness and the manual clock for tests
//   @breakwater/core/types     event, stats and detail types of the building blocks
//   @breakwater/core/adapter   engine constants, policy parts and telemetry detail for adapters
// Helpers shared with Breakwater's own adapters live in `@breakwater/core/internal`
// (not for users; no semver).

// ---------------------------------------------------------------------------
// For users
// ---------------------------------------------------------------------------

// Resilience stacks: one call, a whole set of options

export type { MethodOptions } from './attempts/method-options.js';
export type { ResilienceEvent, ResilienceListener } from './attempts/resilience-events.js';
export { type ResilienceOptions, STANDARD_RESILIENCE } from './attempts/resilience-options.js';
export { protect } from './protect/protect.js';
export type { ProtectedFunction, ProtectOptions } from './protect/types.js';
export { createRouter } from './routing/router.js';
export type { RouteProvider, Router, RouterOptions } from './routing/types.js';

// Building blocks

export { createCircuitBreaker } from './breaker/circuit-breaker.js';
export type { CircuitBreaker, CircuitBreakerOptions, CircuitState } from './breaker/types.js';
export { createCache } from './cache/cache.js';
export { createDeadline, type Deadline, earliestDeadline } from './deadline/deadline.js';
export { withTimeout } from './deadline/with-timeout.js';
export { createHealthChecker, type HealthChecker } from './health/checker.js';
export type { Probe } from './health/probe.js';
export { createHealthRegistry, type HealthRegistry } from './health/registry.js';
export { createAdaptiveLimiter } from './limit/adaptive-limiter.js';
export { createAdaptiveThrottle } from './limit/adaptive-throttle.js';
export type { Criticality } from './limit/criticality.js';
export { createKeyedLimiter } from './limit/keyed-limiter.js';
export { createTokenBucket } from './limit/token-bucket.js';
export { createPool } from './pool/pool.js';
export { currentInbound } from './propagation/inbound.js';
export { type Backoff, type BackoffOptions, createBackoff } from './retry/backoff.js';
export { createRetryBudget, type RetryBudget, type RetryBudgetOptions } from './retry/budget.js';
export { createTransientErrorPredicate, isTransientError } from './retry/transient.js';
export type { ErrorVerdict } from './retry/verdict.js';
export { type RetryOptions, withRetry } from './retry/with-retry.js';

// Errors and their guards

export {
  CircuitOpenError,
  ConcurrencyLimitError,
  DeadlineExceededError,
  DeadlineTimerError,
  ErrorPolicyError,
  isCircuitOpenError,
  isConcurrencyLimitError,
  isDeadlineExceededError,
  isDeadlineTimerError,
  isErrorPolicyError,
  isOperationAbortedError,
  isQueueFullError,
  isRateLimitError,
  isRoutingError,
  isThrottledError,
  OperationAbortedError,
  QueueFullError,
  RateLimitError,
  RoutingError,
  ThrottledError,
} from './errors/index.js';

// Result (the seed's type)

export { type Err, err, isErr, isOk, type Ok, ok, type Result } from './result/result.js';

// ---------------------------------------------------------------------------
// For adapter authors (more in `@breakwater/core/adapter`)
// ---------------------------------------------------------------------------

export type { CallTelemetry, Telemetry, TelemetryTarget } from './attempts/telemetry.js';
export type { CallOutcome, CallReport } from './breaker/types.js';
export type { ResilienceWarning } from './internal/warning.js';
export { type InboundCall, PROPAGATION_HEADERS } from './propagation/inbound.js';
