import type { TokenBucket, TokenBucketOptions } from '@breakwater/core/types';
import type { TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { stackOf } from './resilience-link.js';

/**
 * Client-side rate limiting (`rateLimit` of `resilienceLink`): one token per
 * call from a core token bucket (shareable) or one built from its options. A
 * refused call rejects at once with a `TRPCClientError` whose `cause` is a
 * core `RateLimitError` (with `retryAfterMs`), and nothing is sent.
 * @example
 * rateLimitLink({ capacity: 50, refillPerSecond: 100 })
 */
export function rateLimitLink<TRouter extends AnyRouter = AnyRouter>(
  bucket: TokenBucket | TokenBucketOptions,
): TRPCLink<TRouter> {
  return stackOf('rateLimitLink', { rateLimit: bucket }, 'rateLimit');
}
