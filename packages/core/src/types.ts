// @breakwater/core/types — the event, stats and detail types of the building
// blocks, for code that names them (listeners declared apart, stats dashboards).
// Types only: nothing here exists at run time.

export type {
  Cache,
  CacheLoader,
  CacheLookup,
  CacheOptions,
  CacheStats,
} from './cache/cache.js';
export type { DeadlineOptions } from './deadline/deadline.js';
export type { TimeoutOperation, TimeoutOptions } from './deadline/with-timeout.js';
export type { CircuitOpenErrorOptions, RoutingSkipReason, RoutingVisit } from './errors/index.js';
export type {
  AdaptiveLimiter,
  AdaptiveLimiterOptions,
  LimitOutcome,
  LimitPermit,
} from './limit/adaptive-limiter.js';
export type {
  AdaptiveThrottle,
  AdaptiveThrottleOptions,
  AdaptiveThrottleStats,
  ThrottleRejectEvent,
} from './limit/adaptive-throttle.js';
export type {
  KeyedLimiter,
  KeyedLimiterOptions,
  KeyedLimiterStats,
} from './limit/keyed-limiter.js';
export type { TokenBucket, TokenBucketOptions } from './limit/token-bucket.js';
export type {
  Pool,
  PoolOptions,
  PoolQueueFullEvent,
  PoolRunOptions,
  PoolStats,
  PoolTask,
} from './pool/pool.js';
export type {
  ProtectContext,
  ProtectFallback,
  ProtectFallbackEvent,
  ProtectRejectEvent,
  ProtectRejectReason,
  ProtectRetryEvent,
  ProtectRunner,
  ProtectRunOptions,
  ProtectTimeoutEvent,
} from './protect/types.js';
export type { BackoffJitter, BackoffStrategy } from './retry/backoff.js';
export type { RetryBudgetStats } from './retry/budget.js';
export type {
  TransientErrorPredicate,
  TransientErrorPredicateOptions,
} from './retry/transient.js';
export type { ErrorPolicy } from './retry/verdict.js';
export type { RetryAttemptInfo, RetryClassifier, RetryOperation } from './retry/with-retry.js';
export type {
  RouteContext,
  RouteExecuteOptions,
  RouteFailedEvent,
  RouteHealthOptions,
  RouteHedge,
  RouteHedgedEvent,
  RouteOperation,
  RoutePanic,
  RouteRecoveredEvent,
  RouteSelectedEvent,
  RouteSelection,
  RouteSelectionType,
  RouteSkippedEvent,
} from './routing/types.js';
