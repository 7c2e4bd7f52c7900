// @breakwater/nice-grpc — user-facing middleware first, helpers and types below.

/** What `onWarning` hears (core's type, so one listener serves every adapter). */
export type { ResilienceWarning } from '@breakwater/core';
export { type BulkheadMiddlewareOptions, bulkheadMiddleware } from './bulkhead-middleware.js';
export {
  type CircuitBreakerMiddleware,
  type CircuitBreakerMiddlewareOptions,
  circuitBreakerMiddleware,
  type GrpcCircuitPart,
} from './circuit-breaker-middleware.js';
export {
  type DeadlineCallOptions,
  type DeadlineMiddlewareOptions,
  deadlineMiddleware,
} from './deadline-middleware.js';
export { type HedgingMiddlewareOptions, hedgingMiddleware } from './hedging-middleware.js';
export { isIdempotentMethod } from './idempotency.js';
export { type RateLimitMiddlewareOptions, rateLimitMiddleware } from './rate-limit-middleware.js';
export {
  type GrpcRetryPolicyOptions,
  type ResilienceCallOptions,
  type ResilienceMiddlewareOptions,
  resilienceMiddleware,
} from './resilience-middleware.js';
export {
  type RetryCallOptions,
  type RetryMiddlewareOptions,
  retryMiddleware,
} from './retry-middleware.js';
export { breakwaterServerMiddleware } from './server-middleware.js';
