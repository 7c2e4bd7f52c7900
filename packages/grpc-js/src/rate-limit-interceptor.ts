import {
  checkOptions,
  createTokenBucket,
  type KnownKeys,
  optionPath,
  type TokenBucket,
  type TokenBucketOptions,
} from '@breakwater/core';
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

/** Keys of the `{ bucket }` form of {@link RateLimitInterceptorOptions}. @internal */
export const SHARED_BUCKET_KEYS = { bucket: true } as const satisfies KnownKeys<{
  bucket: TokenBucket;
}>;

/** The bucket of rate-limit options: the one given, or a new one from its options. @internal */
export function resolveBucket(fn: string, options: RateLimitInterceptorOptions): TokenBucket {
  if ('bucket' in options) {
    checkOptions(fn, options, SHARED_BUCKET_KEYS);
    return options.bucket;
  }
  return optionPath('', () => createTokenBucket(options), fn);
}

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
  const bucket = resolveBucket('rateLimitInterceptor', options);
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
