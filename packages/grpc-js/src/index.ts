// @breakwater/grpc-js — user-facing interceptors first, classifier and extension points below.
// The health probe is on the `@breakwater/grpc-js/health` subpath (optional peer grpc-health-check).

// The shared gRPC layer's user-facing names, so grpc-js users need one import.
export {
  classifyGrpcStatus,
  createGrpcStatusClassifier,
  type GrpcAttemptInfo,
  type GrpcClassifierInput,
  type GrpcRetryEvent,
  type GrpcStatusClassifier,
  type GrpcStatusClassifierOptions,
  type GrpcStatusPolicy,
  idempotentMethods,
  type MethodSelector,
  type PackageDefinitionLike,
  PREVIOUS_ATTEMPTS_HEADER,
  PUSHBACK_TRAILER,
  parsePushback,
  type TrailerGetter,
} from '@breakwater/core/grpc';
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
export { breakwaterCause } from './internals/status.js';
export {
  type RateLimitInterceptorOptions,
  rateLimitInterceptor,
} from './rate-limit-interceptor.js';
export {
  composeInterceptors,
  type ResilienceInterceptorOptions,
  resilienceInterceptor,
} from './resilience-interceptor.js';
export { type RetryInterceptorOptions, retryInterceptor } from './retry-interceptor.js';
export {
  createRoutingChannel,
  type RoutingChannel,
  type RoutingChannelApi,
  type RoutingChannelOptions,
  type RoutingHealthOptions,
  type RoutingProtection,
  type RoutingTarget,
} from './routing-channel.js';
export { trailerGetter } from './trailer-getter.js';
