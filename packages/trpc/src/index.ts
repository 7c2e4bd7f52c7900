// @breakwater/trpc — links first, then the classifier and fetch, then types.

export { type BulkheadLinkOptions, bulkheadLink } from './bulkhead-link.js';
export { type CircuitBreakerLinkOptions, circuitBreakerLink } from './circuit-breaker-link.js';
export {
  classifyTRPCError,
  createTRPCErrorClassifier,
  type TRPCErrorClassifierOptions,
  type TRPCErrorCode,
} from './classify.js';
export type { BreakwaterOperationContext } from './context.js';
export { type DeadlineLinkOptions, deadlineLink } from './deadline-link.js';
export { type HedgeLinkOptions, hedgeLink } from './hedge-link.js';
export type { TRPCClassify } from './internals/call.js';
export { breakwaterHeaders } from './internals/propagation.js';
export { rateLimitLink } from './rate-limit-link.js';
export {
  type ResilienceLinkOptions,
  resilienceLink,
  type StackExtras,
  type TRPCIdempotent,
} from './resilience-link.js';
export { type RetryLinkOptions, retryLink, type TRPCRetryEvent } from './retry-link.js';
export { type RoutingLinkOptions, routingLink, type TRPCEndpoint } from './routing-link.js';
export { createStatusPreservingFetch, type FetchLike } from './status-preserving-fetch.js';
