import type { TokenBucket, TokenBucketOptions } from '@breakwater/core';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { refusal } from './internals/errors.js';
import type { MiddlewareResult } from './internals/next.js';
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
  return rateLimitStage(plan.rateLimit as TokenBucket);
}

/** The rate-limit stage around `bucket`. @internal */
export function rateLimitStage(bucket: TokenBucket): ClientMiddleware {
  return async function* rateLimitMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): MiddlewareResult<Response> {
    const taken = bucket.tryAcquire();
    if (!taken.ok) throw refusal(call.method.path, Status.RESOURCE_EXHAUSTED, taken.error);
    return yield* call.next(call.request, callOptions);
  };
}
