import type { TokenBucket } from '@breakwater/core/types';
import { status as Status } from '@grpc/grpc-js';
import { RefusedCall } from './refused-call.js';
import type { Stage } from './stage.js';
import { statusWithCause } from './status.js';

/**
 * The `rateLimit` stage: a call starts only while the token bucket has a
 * token (one per call, not per attempt). A refused call never opens a
 * stream: it ends with `RESOURCE_EXHAUSTED` whose `cause` is the
 * `RateLimitError` (with `retryAfterMs`).
 * @internal
 */
export function rateLimitStage(bucket: TokenBucket): Stage {
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
