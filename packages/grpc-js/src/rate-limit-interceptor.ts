import { createTokenBucket, type TokenBucket, type TokenBucketOptions } from '@breakwater/core';
import { type Interceptor, status as Status } from '@grpc/grpc-js';
import { RefusedCall } from './internals/refused-call.js';
import { type Stage, stageInterceptor } from './internals/stage.js';
import { statusWithCause } from './internals/status.js';

/** Options of {@link rateLimitInterceptor}: a core token bucket, or its options. */
export type RateLimitInterceptorOptions =
  | TokenBucketOptions
  | {
      /** An existing bucket, e.g. shared with other clients; each call takes one token. */
      bucket: TokenBucket;
    };

/**
 * Lets calls start only while the core token bucket has a token (one per
 * call). A refused call never opens a stream: it ends with
 * `RESOURCE_EXHAUSTED` whose `cause` is the `RateLimitError` (with `retryAfterMs`).
 */
export function rateLimitInterceptor(options: RateLimitInterceptorOptions): Interceptor {
  return stageInterceptor([rateLimitStage(options)]);
}

/** The stage of {@link rateLimitInterceptor}. @internal */
export function rateLimitStage(options: RateLimitInterceptorOptions): Stage {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('rateLimitInterceptor(options) needs an options object');
  }
  const bucket = 'bucket' in options ? options.bucket : createTokenBucket(options);
  return {
    intercept(callOptions, chain, index, final) {
      const taken = bucket.tryAcquire();
      if (taken.ok) return chain.next(callOptions, index, final);
      return new RefusedCall(
        statusWithCause(Status.RESOURCE_EXHAUSTED, taken.error.message, taken.error),
      );
    },
  };
}
