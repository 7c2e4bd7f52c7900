import type { TokenBucket, TokenBucketOptions } from '@breakwater/core/types';
import type { ClientMiddleware } from 'nice-grpc-common';
import { admissionStage } from './internals/admission.js';
import { requireObject, resolvePart } from './internals/parts.js';

/** Options of {@link rateLimitMiddleware}: a core token bucket (e.g. shared with other clients), or its options. */
export type RateLimitMiddlewareOptions = TokenBucket | TokenBucketOptions;

/**
 * Lets calls start only while the core token bucket has a token (one per
 * call, not per attempt). A refused call is never sent: it rejects with a
 * `ClientError` `RESOURCE_EXHAUSTED` whose `cause` is the `RateLimitError`
 * (with `retryAfterMs`).
 * @example
 * createClientFactory().use(rateLimitMiddleware({ capacity: 100, refillPerSecond: 50 }))
 */
export function rateLimitMiddleware(options: RateLimitMiddlewareOptions): ClientMiddleware {
  requireObject('rateLimitMiddleware', options);
  const plan = resolvePart('rateLimitMiddleware', 'rateLimit', { rateLimit: options });
  return admissionStage({ bucket: plan.rateLimit });
}
