import {
  checkOptions,
  createTokenBucket,
  type KnownKeys,
  optionPath,
  optionTypeError,
  type TokenBucket,
  type TokenBucketOptions,
} from '@breakwater/core';
import type { Operation, TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable, type Unsubscribable } from '@trpc/server/observable';
import { aborted, refusal } from './internals/errors.js';

/** Options of {@link rateLimitLink}. */
export interface RateLimitLinkOptions {
  /** A core token bucket (shareable) or its options. */
  bucket: TokenBucket | TokenBucketOptions;
  /** `'reject'` refuses at once when no token is left; `'wait'` waits for one (abortable by `op.signal`). Defaults to `'reject'`. */
  mode?: 'reject' | 'wait';
  /** Tokens a call costs. Defaults to 1. */
  cost?: (op: Operation) => number;
}

/** Keys of {@link RateLimitLinkOptions}. @internal */
export const RATE_LIMIT_LINK_KEYS = {
  bucket: true,
  mode: true,
  cost: true,
} as const satisfies KnownKeys<RateLimitLinkOptions>;

/**
 * Client-side rate limiting with a core token bucket. A refused call rejects
 * with a `TRPCClientError` whose `cause` is a core `RateLimitError` (with
 * `retryAfterMs`), and nothing is sent.
 * @example
 * rateLimitLink({ bucket: { capacity: 50, refillPerSecond: 100 } })
 */
export function rateLimitLink<TRouter extends AnyRouter = AnyRouter>(
  options: RateLimitLinkOptions,
): TRPCLink<TRouter> {
  // initialized config
  checkOptions('rateLimitLink', options, RATE_LIMIT_LINK_KEYS, '', false);
  const bucket = optionPath('', () => resolveBucket(options.bucket), 'rateLimitLink');
  const mode = options.mode ?? 'reject';
  if (mode !== 'reject' && mode !== 'wait') {
    throw optionTypeError(
      'mode',
      `must be 'reject' or 'wait', got ${String(mode)}`,
      'rateLimitLink',
    );
  }
  const cost = options.cost;

  return () => {
    // initialized in app
    return ({ op, next }) => {
      // initialized for request
      const n = cost ? cost(op) : 1;
      if (mode === 'reject') {
        const taken = bucket.tryAcquire(n);
        if (taken.ok) return next(op);
        return observable((observer) => {
          observer.error(refusal(taken.error) as TRPCClientError<TRouter>);
        });
      }
      return observable((observer) => {
        let done = false;
        let subscription: Unsubscribable | undefined;
        const ac = new AbortController();
        const signal = op.signal;
        const onAbort = () => ac.abort(signal?.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        bucket.acquire(n, ac.signal).then(
          () => {
            signal?.removeEventListener('abort', onAbort);
            if (done) return;
            subscription = next(op).subscribe(observer);
          },
          () => {
            signal?.removeEventListener('abort', onAbort);
            if (done) return;
            done = true;
            observer.error(aborted(signal ?? ac.signal) as TRPCClientError<TRouter>);
          },
        );
        return () => {
          done = true;
          ac.abort();
          subscription?.unsubscribe();
        };
      });
    };
  };
}

/** A token bucket given as one, or built from its options. @internal */
export function resolveBucket(given: TokenBucket | TokenBucketOptions): TokenBucket {
  return given && typeof (given as TokenBucket).tryAcquire === 'function'
    ? (given as TokenBucket)
    : optionPath('bucket', () => createTokenBucket(given as TokenBucketOptions));
}
