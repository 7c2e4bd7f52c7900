import { createTokenBucket, type TokenBucket, type TokenBucketOptions } from '@breakwater/core';
import { type Interceptor, status as Status } from '@grpc/grpc-js';
import { asInterceptingCall, RefusedCall } from './internals/refused-call.js';
import { statusWithCause } from './internals/status.js';

/** Options of {@link rateLimitInterceptor}: a core token bucket, or its options. */
export type RateLimitInterceptorOptions = TokenBucketOptions | { bucket: TokenBucket };

/**
 * Lets calls start only while the core token bucket has a token (one per
 * call). A refused call never opens a stream: it ends with
 * `RESOURCE_EXHAUSTED` whose `cause` is the `RateLimitError` (with `retryAfterMs`).
 */
export function rateLimitInterceptor(options: RateLimitInterceptorOptions): Interceptor {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('rateLimitInterceptor(options) needs an options object');
  }
  const bucket = 'bucket' in options ? options.bucket : createTokenBucket(options);
  return (callOptions, nextCall) => {
    const taken = bucket.tryAcquire();
    if (taken.ok) return asInterceptingCall(nextCall(callOptions));
    return asInterceptingCall(
      new RefusedCall(statusWithCause(Status.RESOURCE_EXHAUSTED, taken.error.message, taken.error)),
    );
  };
}
