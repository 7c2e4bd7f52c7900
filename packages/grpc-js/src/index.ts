// @breakwater/grpc-js — user-facing interceptors first, classifier and extension points below.
// The health probe is on the `@breakwater/grpc-js/health` subpath (optional peer grpc-health-check).

export {
  type BulkheadInterceptorOptions,
  bulkheadInterceptor,
} from './bulkhead-interceptor.js';
export { disableGrpcRetries, eagerReconnect } from './channel-options.js';
export {
  type CircuitBreakerInterceptor,
  type CircuitBreakerInterceptorOptions,
  circuitBreakerInterceptor,
} from './circuit-breaker-interceptor.js';
export { type DeadlineInterceptorOptions, deadlineInterceptor } from './deadline-interceptor.js';
export { type HedgingInterceptorOptions, hedgingInterceptor } from './hedging-interceptor.js';
export { type GrpcRetryEvent, PREVIOUS_ATTEMPTS_HEADER } from './internals/multi-attempt-call.js';
export { breakwaterCause } from './internals/status.js';
export {
  compileSelector,
  idempotentMethods,
  type MethodSelector,
  type PackageDefinitionLike,
} from './method-selector.js';
export {
  type RateLimitInterceptorOptions,
  rateLimitInterceptor,
} from './rate-limit-interceptor.js';
export {
  composeInterceptors,
  type ResilienceInterceptorOptions,
  resilienceInterceptor,
} from './resilience-interceptor.js';
export {
  checkAttempts,
  type RetryInterceptorOptions,
  resolveBackoff,
  retryInterceptor,
} from './retry-interceptor.js';
export {
  createRoutingChannel,
  type RoutingChannel,
  type RoutingChannelApi,
  type RoutingChannelOptions,
  type RoutingHealthOptions,
  type RoutingProtection,
  type RoutingTarget,
} from './routing-channel.js';
export {
  classifyGrpcStatus,
  createGrpcStatusClassifier,
  type GrpcAttemptInfo,
  type GrpcClassifierInput,
  type GrpcStatusClassifier,
  type GrpcStatusClassifierOptions,
  type GrpcStatusPolicy,
  PUSHBACK_TRAILER,
  parsePushback,
  type TrailerGetter,
  trailerGetter,
} from './status-classifier.js';
