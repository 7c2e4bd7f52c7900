// @breakwater/grpc-js — the interceptor and the routing channel first, classifier and extension points below.
// The health probe is on the `@breakwater/grpc-js/health` subpath (optional peer grpc-health-check).

/** What `onWarning` hears (core's type, so one listener serves every adapter). */
export type { ResilienceWarning } from '@breakwater/core';
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
export { disableGrpcRetries, eagerReconnect } from './channel-options.js';
export { breakwaterCause } from './internals/status.js';
export {
  composeInterceptors,
  type ResilienceCallOptions,
  type ResilienceInterceptor,
  type ResilienceInterceptorOptions,
  resilienceInterceptor,
} from './resilience-interceptor.js';
export {
  createRoutingChannel,
  type RoutingChannel,
  type RoutingChannelApi,
  type RoutingChannelOptions,
  type RoutingHealthOptions,
  type RoutingProtection,
  type RoutingTarget,
} from './routing-channel.js';
export { breakwaterServerInterceptor } from './server-interceptor.js';
export { trailerGetter } from './trailer-getter.js';
