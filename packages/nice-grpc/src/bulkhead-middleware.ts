import { createPool } from '@breakwater/core';
import type { ConcurrencyOptions } from '@breakwater/core/adapter';
import type { ClientMiddleware } from 'nice-grpc-common';
import { admissionStage } from './internals/admission.js';
import { requireObject, resolvePart } from './internals/parts.js';

/** Options of {@link bulkheadMiddleware}: the `concurrency` part of the vocabulary. */
export type BulkheadMiddlewareOptions = ConcurrencyOptions;

/**
 * Limits concurrent calls with the core pool: `limit` at once, `maxQueue`
 * waiting. A call holds its slot until it settles — a response stream until
 * it ends — with its retries inside when this is outside the retry stage.
 * When every slot is busy and the queue is full the call is never sent: it
 * rejects with a `ClientError` `RESOURCE_EXHAUSTED` whose `cause` is the
 * `QueueFullError`. A queued call whose signal aborts leaves the queue at
 * once with an `AbortError`.
 * @example
 * createClientFactory().use(bulkheadMiddleware({ limit: 64, maxQueue: 128 }))
 */
export function bulkheadMiddleware(options: BulkheadMiddlewareOptions): ClientMiddleware {
  requireObject('bulkheadMiddleware', options);
  const plan = resolvePart('bulkheadMiddleware', 'concurrency', { concurrency: options });
  const { limit, maxQueue } = plan.concurrency as NonNullable<typeof plan.concurrency>;
  return admissionStage({ pool: createPool({ concurrency: limit, maxQueue }) });
}
