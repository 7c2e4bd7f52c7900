import type { ConcurrencyOptions } from '@breakwater/core/adapter';
import type { TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { stackOf } from './resilience-link.js';

/** Options of {@link bulkheadLink}: `concurrency` of `resilienceLink`. */
export type BulkheadLinkOptions = ConcurrencyOptions;

/**
 * Caps concurrent queries and mutations (`concurrency` of `resilienceLink`):
 * at most `limit` in flight, up to `maxQueue` waiting in FIFO order; beyond
 * that a call rejects with a `TRPCClientError` whose `cause` is a core
 * `QueueFullError`, and nothing is sent. An aborted queued call leaves the
 * queue at once. Subscriptions do not take a slot.
 * @example
 * bulkheadLink({ limit: 20, maxQueue: 100 })
 */
export function bulkheadLink<TRouter extends AnyRouter = AnyRouter>(
  options: BulkheadLinkOptions,
): TRPCLink<TRouter> {
  return stackOf('bulkheadLink', { concurrency: options }, 'concurrency');
}
