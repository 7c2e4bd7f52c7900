// @breakwater/core — the public API, listed by name: factories and verbs first,
// then errors, then types and extension points. Helpers shared with the
// adapters live in `@breakwater/core/internal` (not for users; no semver).

// The one vocabulary and the engine's rules
export {
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF,
  DEFAULT_MAX_PUSHBACK_MS,
  MAX_ATTEMPTS,
} from './attempts/engine.js';
export type { MethodOptions } from './attempts/method-options.js';
export type {
  ResilienceCircuitEvent,
  ResilienceEvent,
  ResilienceEventSource,
  ResilienceFailoverEvent,
  ResilienceHedgeEvent,
  ResilienceListener,
  ResilienceRefusalEvent,
  ResilienceRetryEvent,
} from './attempts/resilience-events.js';
export {
  type ConcurrencyOptions,
  type HedgePolicyOptions,
  type ResilienceOptions,
  type RetryEvent,
  type RetryPolicyOptions,
  STANDARD_RESILIENCE,
} from './attempts/resilience-options.js';
export type {
  CallTelemetry,
  Telemetry,
  TelemetryAttemptOutcome,
  TelemetryCallOutcome,
  TelemetryRefusal,
  TelemetryTarget,
} from './attempts/telemetry.js';
// Building blocks
export { createCircuitBreaker } from './breaker/circuit-breaker.js';
// The pure circuit-breaker API
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
} from './breaker/circuit-state.js';
export {
  DEFAULT_CIRCUIT_BREAKER_OPTIONS,
  getDefaultCircuitBreakerConfig,
} from './breaker/config.js';
// Types
export { type CircuitBreakerState, isProbePermit } from './breaker/machine.js';
export type {
  CallOutcome,
  CallReport,
  CircuitBreaker,
  CircuitBreakerConfig,
  CircuitBreakerOptions,
  CircuitBreakerSettings,
  CircuitBreakerSnapshot,
  CircuitRejection,
  CircuitState,
  CircuitStateChange,
  FailureRateWindow,
  SlowCallRule,
} from './breaker/types.js';
export type {
  Cache,
  CacheLoader,
  CacheLookup,
  CacheOptions,
  CacheStats,
} from './cache/cache.js';
export { createCache } from './cache/cache.js';
export type { Deadline, DeadlineOptions } from './deadline/deadline.js';
export { createDeadline, earliestDeadline } from './deadline/deadline.js';
export type { TimeoutOperation, TimeoutOptions } from './deadline/with-timeout.js';
export { withTimeout } from './deadline/with-timeout.js';
// Errors and their guards
export {
  CircuitOpenError,
  type CircuitOpenErrorOptions,
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
  type RoutingSkipReason,
  type RoutingVisit,
  ThrottledError,
} from './errors/index.js';
export type { HealthChecker, HealthCheckerOptions, ProbeResultEvent } from './health/checker.js';
// Health
export { createHealthChecker } from './health/checker.js';
export { all, any } from './health/combinators.js';
export type {
  HealthVerdict,
  Probe,
  ProbeCheck,
  ProbeContext,
  ProbeResult,
  ProbeSetting,
  ProbeWatch,
  ProbeWatchContext,
} from './health/probe.js';
export type {
  BelowLimitOptions,
  RatioBelowOptions,
  ReadinessRule,
  Sample,
  StartupGraceOptions,
  TwoSampleOptions,
} from './health/readiness.js';
export {
  belowLimit,
  counterProgress,
  ratioBelow,
  startupGrace,
  unchanged,
} from './health/readiness.js';
export type {
  HealthRecorder,
  HealthRegistry,
  HealthRegistryOptions,
  HealthSuccessOptions,
  ProviderHealth,
} from './health/registry.js';
export { createHealthRegistry } from './health/registry.js';
export type { HealthTargets, NamedTarget } from './health/targets.js';
export type { Disposable, Event } from './internal/events.js';
export type { ResilienceWarning } from './internal/warning.js';
export type {
  AdaptiveLimiter,
  AdaptiveLimiterOptions,
  LimitOutcome,
  LimitPermit,
} from './limit/adaptive-limiter.js';
export { createAdaptiveLimiter } from './limit/adaptive-limiter.js';
export type {
  AdaptiveThrottle,
  AdaptiveThrottleOptions,
  AdaptiveThrottleStats,
  ThrottleRejectEvent,
} from './limit/adaptive-throttle.js';
export { createAdaptiveThrottle } from './limit/adaptive-throttle.js';
export { CRITICALITIES, type Criticality } from './limit/criticality.js';
export {
  type AdaptiveConcurrencyOptions,
  type CriticalityShares,
  DEFAULT_ADAPTIVE_CONCURRENCY,
} from './limit/gradient-limit.js';
export type {
  KeyedLimiter,
  KeyedLimiterOptions,
  KeyedLimiterStats,
} from './limit/keyed-limiter.js';
export { createKeyedLimiter } from './limit/keyed-limiter.js';
export type { TokenBucket, TokenBucketOptions } from './limit/token-bucket.js';
export { createTokenBucket } from './limit/token-bucket.js';
export type {
  Pool,
  PoolOptions,
  PoolQueueFullEvent,
  PoolRunOptions,
  PoolStats,
  PoolTask,
} from './pool/pool.js';
export { createPool } from './pool/pool.js';
// Propagation: the inbound call a bound server handler serves
export {
  currentInbound,
  type InboundCall,
  PROPAGATION_HEADERS,
} from './propagation/inbound.js';
export {
  DEFAULT_PROPAGATE_MARGIN_MS,
  type PropagateOptions,
} from './propagation/propagate-options.js';
// Resilience stacks
export { protect } from './protect/protect.js';
export type {
  ProtectContext,
  ProtectedFunction,
  ProtectFallback,
  ProtectFallbackEvent,
  ProtectOptions,
  ProtectRejectEvent,
  ProtectRejectReason,
  ProtectRetryEvent,
  ProtectRunner,
  ProtectRunOptions,
  ProtectTimeoutEvent,
} from './protect/types.js';
// Result
export { type Err, err, isErr, isOk, type Ok, ok, type Result } from './result/result.js';
export type { Backoff, BackoffJitter, BackoffOptions, BackoffStrategy } from './retry/backoff.js';
export { createBackoff } from './retry/backoff.js';
export type { RetryBudget, RetryBudgetOptions, RetryBudgetStats } from './retry/budget.js';
export { createRetryBudget } from './retry/budget.js';
export type {
  TransientErrorPredicate,
  TransientErrorPredicateOptions,
} from './retry/transient.js';
export { createTransientErrorPredicate, isTransientError } from './retry/transient.js';
export type { ErrorPolicy, ErrorVerdict } from './retry/verdict.js';
export type {
  RetryAttemptInfo,
  RetryClassifier,
  RetryOperation,
  RetryOptions,
} from './retry/with-retry.js';
export { withRetry } from './retry/with-retry.js';
export type { RouteProtection } from './routing/protection.js';
export { createRouter } from './routing/router.js';
export type {
  RouteContext,
  RouteExecuteOptions,
  RouteFailedEvent,
  RouteHealthOptions,
  RouteHedge,
  RouteHedgedEvent,
  RouteOperation,
  RoutePanic,
  RouteProvider,
  RouteRecoveredEvent,
  Router,
  RouterOptions,
  RouteSelectedEvent,
  RouteSelection,
  RouteSelectionType,
  RouteSkippedEvent,
} from './routing/types.js';
// Time, randomness and test doubles
export { type Clock, monotonicClock, systemClock } from './time/clock.js';
export { createManualClock, type ManualClock } from './time/manual-clock.js';
export { fixedRandom, type RandomSource, sequenceRandom, systemRandom } from './time/random.js';
export { type Sleep, systemSleep } from './time/sleep.js';
