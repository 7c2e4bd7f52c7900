import {
  checkKeys,
  createTokenBucket,
  optionPath,
  type TokenBucket,
  type TokenBucketOptions,
} from '@breakwater/core';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { refusal } from './internals/errors.js';
import type { MiddlewareResult } from './internals/next.js';
import type { UnaryStage } from './internals/unary-stage.js';

/** Options of {@link rateLimitMiddleware}: a core token bucket, or its options. */
export type RateLimitMiddlewareOptions =
  | TokenBucketOptions
  | {
      /** An existing bucket, e.g. shared with other clients; each call takes one token. */
      bucket: TokenBucket;
    };

/**
 * Lets calls start only while the core token bucket has a token (one per
 * call, not per attempt). A refused call is never sent: it rejects with a
 * `ClientError` `RESOURCE_EXHAUSTED` whose `cause` is the `RateLimitError`
 * (with `retryAfterMs`).
 * @example
 * createClientFactory().use(rateLimitMiddleware({ capacity: 100, refillPerSecond: 50 }))
 */
export function rateLimitMiddleware(options: RateLimitMiddlewareOptions): ClientMiddleware {
  return rateLimitMiddlewareOf(
    optionPath('', () => rateLimitStage(options), 'rateLimitMiddleware'),
  );
}

/** {@link rateLimitMiddleware} around its stage (shared with `resilienceMiddleware`). @internal */
export function rateLimitMiddlewareOf(stage: RateLimitStage): ClientMiddleware {
  return async function* rateLimitMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): MiddlewareResult<Response> {
    stage.take(call.method.path);
    return yield* call.next(call.request, callOptions);
  };
}

/** The unary stage of {@link rateLimitMiddleware}. @internal */
export interface RateLimitStage extends UnaryStage {
  /** Takes a token, or throws the `RESOURCE_EXHAUSTED` refusal. */
  take(path: string): void;
}

/** The unary stage of {@link rateLimitMiddleware}. @internal */
export function rateLimitStage(options: RateLimitMiddlewareOptions): RateLimitStage {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('rateLimitMiddleware(options) needs an options object');
  }
  // `{ bucket }` alone, or the bucket's own options (which createTokenBucket checks).
  if ('bucket' in options) checkKeys(undefined, options, { bucket: true });
  const bucket = 'bucket' in options ? options.bucket : createTokenBucket(options);
  const take = (path: string): void => {
    const taken = bucket.tryAcquire();
    if (!taken.ok) throw refusal(path, Status.RESOURCE_EXHAUSTED, taken.error);
  };
  return {
    take,
    unary(call, callOptions, chain, index) {
      try {
        take(call.method.path);
      } catch (error) {
        return Promise.reject(error);
      }
      return chain.next(call, callOptions, index);
    },
  };
}
